/**
 * `exec --result-strategy` and `exec --result-cache` as a process: what the model would get for a large result,
 * and a read-only call served from the cache until a write to the same directory invalidates it.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"

const bin = Path.resolve(import.meta.dirname, "../../bin/armature.mjs")

interface Run {
  readonly child: ChildProcess
  readonly done: Promise<{ readonly code: number; readonly stdout: string; readonly stderr: string }>
  /** The tool_result line of `id`, once it is printed (stream-json). */
  readonly result: (id: string) => Promise<Record<string, unknown>>
}

const start = (args: ReadonlyArray<string>, cwd: string): Run => {
  const child = spawn(process.execPath, [bin, "exec", ...args], {
    cwd,
    env: { ...process.env, ARMATURE_STATE_DIR: Path.join(cwd, ".state"), HOME: cwd, NO_COLOR: "1" },
    stdio: ["pipe", "pipe", "pipe"]
  })
  const results = new Map<string, Record<string, unknown>>()
  const waiters: Array<() => void> = []
  let stdout = ""
  let stderr = ""
  let partial = ""
  child.stdout!.on("data", (chunk: Buffer) => {
    stdout += chunk.toString()
    partial += chunk.toString()
    const parts = partial.split("\n")
    partial = parts.pop() ?? ""
    for (const part of parts) {
      if (!args.includes("stream-json") || !part.startsWith("{")) continue
      const line = JSON.parse(part) as Record<string, unknown>
      if (line.type === "tool_result") results.set(String(line.tool_use_id), line)
    }
    for (const w of waiters.splice(0)) w()
  })
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const done = new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }))
  )
  const result = (id: string) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const check = () => {
        const found = results.get(id)
        if (found !== undefined) resolve(found)
        else waiters.push(check)
      }
      check()
    })
  return { child, done, result }
}

const tmp = () => Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-exec-results-")))
const call = (id: string, name: string, input: unknown) => `${JSON.stringify({ type: "tool_use", id, name, input })}\n`

describe("armature exec: large results", () => {
  it("--result-strategy head-tail keeps the first and last 40 % around a summary; preview keeps 2 KB", {
    timeout: 240_000
  }, async () => {
    const dir = tmp()
    const lines = Array.from({ length: 3000 }, (_, i) => `line ${i + 1}: timeout waiting for the database`)
    Fs.writeFileSync(Path.join(dir, "big.log"), `${lines.join("\n")}\n`)
    const grep = call("g", "Grep", { pattern: "^line", path: dir, output_mode: "content", head_limit: 0 })
    const runs = [
      start(["-", "--output", "json", "--result-strategy", "head-tail"], dir),
      start(["-", "--output", "json"], dir)
    ]
    for (const run of runs) run.child.stdin!.end(grep)
    const [headTail, preview] = await Promise.all(runs.map((run) => run.done))
    expect(headTail.code, headTail.stderr).toBe(0)
    expect(preview.code, preview.stderr).toBe(0)
    const contentOf = (stdout: string) =>
      String((JSON.parse(stdout) as { results: Array<{ content: string }> }).results[0].content)
    const shown = contentOf(headTail.stdout)
    // Grep's threshold is 50,000 characters: 20,000 from each end, then the summary and the saved file
    expect(shown.startsWith("big.log:1:line 1: timeout waiting")).toBe(true)
    expect(shown.trimEnd().endsWith("line 3000: timeout waiting for the database")).toBe(true)
    expect(shown).toMatch(/\n\.\.\. \[\d+ lines \(\d+ characters\) omitted; summary follows\] \.\.\.\n/)
    expect(shown).toMatch(/Most frequent terms: (line|timeout|waiting|database|big|log) \(\d+\)/)
    const saved = /\.\.\. \[continued; full output saved to: (\S+)\] \.\.\.\n/.exec(shown)?.[1]
    expect(saved).toBe(Path.join(dir, ".state", "tool-results", "g.txt"))
    expect(Fs.readFileSync(saved!, "utf8")).toContain("big.log:1500:line 1500: timeout")
    expect(shown.length).toBeLessThan(41_000)
    expect(shown.length).toBeGreaterThan(40_000)
    // the default strategy: the <persisted-output> preview, without the end of the output
    const previewed = contentOf(preview.stdout)
    expect(previewed.startsWith("<persisted-output>\nOutput too large")).toBe(true)
    expect(previewed).not.toContain("line 3000:")
    expect(previewed.length).toBeLessThan(2_500)
  })

  it("a bad --result-strategy names the flag and its choices", { timeout: 120_000 }, async () => {
    const run = start(["-", "--result-strategy", "middle"], tmp())
    run.child.stdin!.end()
    const out = await run.done
    expect(out.code).toBe(2)
    expect(out.stderr).toBe('armature exec: --result-strategy: "middle" is not one of preview, head-tail\n')
  })
})

describe("armature exec: --result-cache", () => {
  /**
   * Glob, a file created behind the engine's back, Glob again, a Write in the same directory, Glob again. With the
   * cache the second Glob is served from it (it misses the new file); the Write invalidates it, so the third sees
   * everything. Without the cache every Glob sees the directory as it is.
   */
  const scenario = async (extra: ReadonlyArray<string>) => {
    const dir = tmp()
    Fs.writeFileSync(Path.join(dir, "a.txt"), "a")
    const glob = (id: string) => call(id, "Glob", { pattern: "*.txt", path: dir })
    const run = start(["-", "--output", "stream-json", "--permission-mode", "acceptEdits", ...extra], dir)
    const stdin = run.child.stdin!
    stdin.write(glob("g1"))
    const first = await run.result("g1")
    Fs.writeFileSync(Path.join(dir, "c.txt"), "created outside")
    stdin.write(glob("g2"))
    const second = await run.result("g2")
    stdin.write(call("w", "Write", { file_path: Path.join(dir, "d.txt"), content: "d" }))
    const write = await run.result("w")
    stdin.end(glob("g3"))
    const third = await run.result("g3")
    const out = await run.done
    expect(out.code, out.stderr).toBe(0)
    expect(write).toMatchObject({ is_error: false })
    const files = (r: Record<string, unknown>) => String(r.content).split("\n").sort()
    return [files(first), files(second), files(third)]
  }

  it("serves a repeated read-only call from the cache until a write to its directory", {
    timeout: 240_000
  }, async () => {
    const [cached, uncached] = await Promise.all([scenario(["--result-cache"]), scenario([])])
    expect(cached).toEqual([["a.txt"], ["a.txt"], ["a.txt", "c.txt", "d.txt"]])
    expect(uncached).toEqual([["a.txt"], ["a.txt", "c.txt"], ["a.txt", "c.txt", "d.txt"]])
  })
})
