import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Texts from "../../src/domain/Texts.js"

const bin = Path.resolve(import.meta.dirname, "../../bin/armature.mjs")

interface Run {
  readonly child: ChildProcess
  readonly lines: Array<Record<string, unknown>>
  readonly stderr: () => string
  readonly stdout: () => string
  readonly done: Promise<number>
  readonly waitFor: (predicate: (line: Record<string, unknown>) => boolean) => Promise<void>
}

const start = (args: ReadonlyArray<string>, cwd: string): Run => {
  const child = spawn(process.execPath, [bin, "exec", ...args], {
    cwd,
    env: { ...process.env, ARMATURE_STATE_DIR: Path.join(cwd, ".state"), HOME: cwd },
    stdio: ["pipe", "pipe", "pipe"]
  })
  const lines: Array<Record<string, unknown>> = []
  const waiters: Array<() => void> = []
  let buffer = ""
  let all = ""
  let err = ""
  child.stdout!.on("data", (chunk: Buffer) => {
    buffer += chunk.toString()
    all += chunk.toString()
    if (!args.includes("stream-json")) return
    const parts = buffer.split("\n")
    buffer = parts.pop() ?? ""
    for (const part of parts) if (part.trim() !== "") lines.push(JSON.parse(part))
    for (const w of waiters.splice(0)) w()
  })
  child.stderr!.on("data", (chunk: Buffer) => {
    err += chunk.toString()
  })
  const done = new Promise<number>((resolve) => child.on("close", (code) => resolve(code ?? -1)))
  const waitFor = (predicate: (line: Record<string, unknown>) => boolean): Promise<void> =>
    new Promise((resolve) => {
      const check = () => (lines.some(predicate) ? resolve() : waiters.push(check))
      check()
    })
  return { child, lines, stderr: () => err, stdout: () => all, done, waitFor }
}

const tmp = () => Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-exec-"))
const sleep = (id: string, ms: number) =>
  JSON.stringify({ type: "tool_use", id, name: "Sleep", input: { duration_ms: ms } })

describe("armature exec (process)", () => {
  it("starts stdin lines as they arrive and yields results in order with a summary", async () => {
    const run = start(["-", "--output", "stream-json"], tmp())
    run.child.stdin!.write(`${sleep("a", 300)}\n`)
    // the first call executes before the second line is even written
    await run.waitFor((l) => l.type === "state" && l.tool_use_id === "a" && l.state === "executing")
    expect(run.lines.some((l) => l.tool_use_id === "b")).toBe(false)
    run.child.stdin!.write(`${sleep("b", 10)}\n`)
    run.child.stdin!.end(`${JSON.stringify({ type: "tool_use", id: "c", name: "Nope", input: {} })}\n`)
    expect(await run.done).toBe(0)
    const results = run.lines.filter((l) => l.type === "tool_result")
    expect(results.map((r) => r.tool_use_id)).toEqual(["a", "b", "c"])
    expect(results[0]).toMatchObject({ content: "Slept for 300 ms", is_error: false })
    expect(results[2]).toMatchObject({
      content: "<tool_use_error>Error: No such tool available: Nope</tool_use_error>",
      is_error: true
    })
    const summary = run.lines.at(-1)!
    expect(summary).toMatchObject({ type: "summary", calls: 3, errors: 1 })
    expect(summary.busy_ms as number).toBeGreaterThanOrEqual(300)
    expect(summary.wall_ms as number).toBeGreaterThanOrEqual(300)
  }, 60_000)

  it("exits 2 naming the bad line, after yielding what had started", async () => {
    const run = start(["-", "--output", "stream-json"], tmp())
    run.child.stdin!.end(`${sleep("a", 50)}\n{"type":"tool_use","id":"b"}\n${sleep("c", 10)}\n`)
    expect(await run.done).toBe(2)
    expect(run.stderr()).toContain('line 2: tool_use b has no "name" (a non-empty string)')
    expect(run.lines.filter((l) => l.type === "tool_result").map((l) => l.tool_use_id)).toEqual(["a"])
  }, 60_000)

  it("prints one JSON object with --output json, reading a file", async () => {
    const dir = tmp()
    const file = Path.join(dir, "batch.json")
    Fs.writeFileSync(file, JSON.stringify([JSON.parse(sleep("a", 10)), JSON.parse(sleep("b", 10))], null, 2))
    const run = start([file, "--output", "json"], dir)
    const code = await run.done
    expect(code).toBe(0)
    const out = JSON.parse(run.stdout()) as { results: Array<{ tool_use_id: string }>; summary: { calls: number } }
    expect(out.results.map((r) => r.tool_use_id)).toEqual(["a", "b"])
    expect(out.summary.calls).toBe(2)
  }, 60_000)

  it("SIGINT interrupts the calls in flight, answers each, prints the summary and exits 130", async () => {
    const run = start(["-", "--output", "stream-json"], tmp())
    // stdin stays open: the signal, not the end of input, ends the run
    run.child.stdin!.write(`${sleep("a", 60_000)}\n${sleep("b", 60_000)}\n`)
    await run.waitFor((l) => l.type === "state" && l.tool_use_id === "b" && l.state === "executing")
    run.child.kill("SIGINT")
    expect(await run.done).toBe(130)
    const results = run.lines.filter((l) => l.type === "tool_result")
    expect(results.map((r) => [r.tool_use_id, r.content, r.is_error])).toEqual([
      ["a", Texts.rejected, true],
      ["b", Texts.rejected, true]
    ])
    expect(run.lines.at(-1)).toMatchObject({ type: "summary", calls: 2, errors: 2, interrupted: "SIGINT" })
    expect(run.lines.at(-1)!.wall_ms as number).toBeLessThan(60_000)
  }, 60_000)

  it("SIGTERM aborts a batch read from a file: every call answered, summary, exit 143", async () => {
    const dir = tmp()
    const file = Path.join(dir, "batch.jsonl")
    const bash = (id: string) => JSON.stringify({ type: "tool_use", id, name: "Bash", input: { command: "sleep 60" } })
    Fs.writeFileSync(file, [sleep("a", 60_000), bash("b"), sleep("c", 10)].join("\n"))
    const run = start([file, "--output", "stream-json", "--allowed-tools", "Bash(sleep:*)"], dir)
    await run.waitFor((l) => l.type === "state" && l.tool_use_id === "a" && l.state === "executing")
    run.child.kill("SIGTERM")
    expect(await run.done).toBe(143)
    const results = run.lines.filter((l) => l.type === "tool_result")
    expect(results.map((r) => r.tool_use_id)).toEqual(["a", "b", "c"])
    expect(results.every((r) => r.is_error === true)).toBe(true)
    expect(results[0].content).toBe(Texts.rejected)
    expect(run.lines.at(-1)).toMatchObject({ type: "summary", calls: 3, errors: 3, interrupted: "SIGTERM" })
  }, 60_000)

  it("text output: SIGINT still prints the table and the summary", async () => {
    const dir = tmp()
    const run = start(["-", "--permission-mode", "bypassPermissions"], dir)
    const command = "touch started && sleep 60"
    run.child.stdin!.write(`${JSON.stringify({ type: "tool_use", id: "a", name: "Bash", input: { command } })}\n`)
    while (!Fs.existsSync(Path.join(dir, "started"))) await new Promise((resolve) => setTimeout(resolve, 20))
    run.child.kill("SIGINT")
    expect(await run.done).toBe(130)
    expect(run.stdout()).toMatch(/^ID +TOOL +STATUS +MS +RESULT\na +Bash +error /)
    expect(run.stdout()).toContain("1 call, 1 error")
  }, 60_000)

  it("depends_on starts a call after its dependencies; --wide; fatal input: line and column, no summary", async () => {
    const dir = tmp()
    const deps = Path.join(dir, "deps.jsonl")
    const a = { type: "tool_use", id: "a", name: "Sleep", input: { duration_ms: 400 } }
    const b = { type: "tool_use", id: "b", name: "Sleep", input: { duration_ms: 10 }, depends_on: ["a"] }
    const c = { type: "tool_use", id: "c", name: "Sleep", input: { duration_ms: 10 } }
    Fs.writeFileSync(deps, [a, b, c].map((x) => JSON.stringify(x)).join("\n"))
    const long = Path.join(dir, "long.jsonl")
    const word = "x".repeat(150)
    const bash = { type: "tool_use", id: "w", name: "Bash", input: { command: `echo ${word}` } }
    Fs.writeFileSync(long, JSON.stringify(bash))
    const broken = Path.join(dir, "broken.json")
    Fs.writeFileSync(broken, `[\n  ${JSON.stringify(c)},\n  {"type": "tool_use" "id": "d"}\n]\n`)
    const [ordered, wide, narrow, fatal] = [
      start([deps, "--output", "stream-json"], dir),
      start([long, "--wide", "--allowed-tools", "Bash(echo:*)"], dir),
      start([long, "--allowed-tools", "Bash(echo:*)"], dir),
      start([broken], dir)
    ]
    expect(await Promise.all([ordered.done, wide.done, narrow.done, fatal.done])).toEqual([0, 0, 0, 2])
    const at = (id: string, state: string) =>
      ordered.lines.find((l) => l.type === "state" && l.tool_use_id === id && l.state === state)?.t_ms as number
    // c (no dependency) runs alongside a; b waits for a's result
    expect(at("c", "executing")).toBeLessThan(at("a", "completed"))
    expect(at("b", "executing")).toBeGreaterThanOrEqual(at("a", "completed"))
    expect(ordered.lines.filter((l) => l.type === "tool_result").map((l) => [l.tool_use_id, l.is_error])).toEqual([
      ["a", false],
      ["b", false],
      ["c", false]
    ])
    expect(wide.stdout()).toContain(word)
    expect(narrow.stdout()).not.toContain(word)
    expect(narrow.stdout()).toContain(`${word.slice(0, 90)}`)
    expect(fatal.stdout()).toBe("")
    expect(fatal.stderr()).toBe(`armature: line 3, column 23: invalid JSON: Expected ',' or '}' after property value\n`)
  }, 120_000)
})
