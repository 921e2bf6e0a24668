/**
 * Every command tells a failure the same way: one line on stderr naming the file, flag or URL, nothing on stdout,
 * no stack trace, exit 2 for unusable input (1 for failed work); a reader that goes away ends a command quietly.
 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { bin, type CliResult, runCli } from "../fixtures/Cli.js"

const project = () => {
  const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-cli-errors-")))
  Fs.mkdirSync(Path.join(dir, ".claude"))
  return dir
}

/** The shape every error must have: the exit status, one line on stderr that contains `text`, an empty stdout. */
const expectOneLine = (result: CliResult, status: number, text: string) => {
  expect(result.stdout).toBe("")
  expect(result.stderr).not.toMatch(/\n\s+at |level=|timestamp=/)
  expect(result.stderr.trimEnd().split("\n")).toHaveLength(1)
  expect(result.stderr).toContain(text)
  expect(result.code).toBe(status)
}

describe("one error path for every command", () => {
  it("a broken settings file: tools list|schema|search and mcp serve print one line and exit 2", {
    timeout: 400_000
  }, async () => {
    const dir = project()
    const settings = Path.join(dir, ".claude", "settings.json")
    Fs.writeFileSync(settings, '{"permissions": {\n')
    const results = await Promise.all([
      runCli(["tools", "list"], dir),
      runCli(["tools", "schema"], dir),
      runCli(["tools", "search", "files"], dir),
      runCli(["mcp", "serve"], dir)
    ])
    for (const result of results) expectOneLine(result, 2, `armature: Invalid settings file ${settings}:`)
  })

  it("run, resume and sessions with a --database that is no PostgreSQL URL or cannot be reached", {
    timeout: 400_000
  }, async () => {
    const dir = project()
    const [notUrl, mysql, sessions, resume, run] = await Promise.all([
      runCli(["run", "hi", "--database", "notaurl"], dir, { ANTHROPIC_API_KEY: "k" }),
      runCli(["sessions", "--database", "mysql://x"], dir),
      runCli(["sessions", "--database", "postgres://someone:secret@127.0.0.1:1/x"], dir),
      runCli(["resume", "abc", "--database", "postgres://127.0.0.1:1/x"], dir),
      runCli(["run", "hi", "--database", "postgres://127.0.0.1:1/x"], dir, { ANTHROPIC_API_KEY: "k" })
    ])
    expectOneLine(notUrl, 2, "armature: --database: expected a PostgreSQL URL (postgres://…), got notaurl")
    expectOneLine(mysql, 2, "armature: --database: expected a PostgreSQL URL (postgres://…), got mysql://x")
    expectOneLine(sessions, 2, "armature: --database: postgres://someone@127.0.0.1:1/x: connect ECONNREFUSED")
    expect(sessions.stderr).not.toContain("secret")
    expectOneLine(resume, 2, "armature: --database: postgres://127.0.0.1:1/x: connect ECONNREFUSED")
    expectOneLine(run, 2, "armature: --database: postgres://127.0.0.1:1/x: connect ECONNREFUSED")
  })

  it("@effect/cli's own complaints name the command", { timeout: 400_000 }, async () => {
    const dir = project()
    const [missing, unknown, noFile, noOption] = await Promise.all([
      runCli(["tools", "search"], dir),
      runCli(["tools", "schema", "Bash"], dir),
      runCli(["timeline", "nosuch.jsonl", "-o", "out.html"], dir),
      runCli(["timeline", "nosuch.jsonl"], dir)
    ])
    expectOneLine(missing, 2, "armature tools search: missing argument <query>")
    expectOneLine(unknown, 2, "armature tools schema: unexpected argument 'Bash'")
    expectOneLine(noFile, 2, "armature timeline: nosuch.jsonl: no such file or directory")
    expectOneLine(noOption, 2, "armature timeline: missing option --output")
  })

  it("--version prints the package's version and nothing else", { timeout: 400_000 }, async () => {
    const dir = project()
    const pkg = JSON.parse(Fs.readFileSync(Path.resolve(import.meta.dirname, "../../package.json"), "utf8"))
    const [long, short] = await Promise.all([runCli(["--version"], dir), runCli(["-v"], dir)])
    expect(long).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: "" })
    expect(short).toEqual(long)
  })
})

/** Runs `armature ARGS`, reads stdout's first line and closes the pipe (as `| head -1` does). */
const firstLineThenClose = (args: ReadonlyArray<string>, cwd: string, env: Record<string, string> = {}) =>
  new Promise<CliResult & { readonly first: string }>((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd,
      env: { ...process.env, HOME: cwd, ARMATURE_STATE_DIR: Path.join(cwd, ".state"), ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let first = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => {
      if (first.includes("\n")) return
      first += chunk.toString()
      if (first.includes("\n")) child.stdout.destroy()
    })
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    child.on("close", (code) => resolve({ code: code ?? -1, stdout: "", stderr, first: first.split("\n")[0] }))
  })

describe("a closed stdout", () => {
  it("exec --output stream-json | head -1 and exec | head -1 exit quietly", { timeout: 400_000 }, async () => {
    const dir = project()
    const calls = Array.from({ length: 400 }, (_, i) =>
      JSON.stringify({ type: "tool_use", id: `c${i}`, name: "Glob", input: { pattern: "*" } })
    )
    Fs.writeFileSync(Path.join(dir, "calls.jsonl"), `${calls.join("\n")}\n`)
    const [stream, text] = await Promise.all([
      firstLineThenClose(["exec", "calls.jsonl", "--output", "stream-json"], dir),
      firstLineThenClose(["exec", "calls.jsonl", "--wide"], dir)
    ])
    expect(JSON.parse(stream.first)).toMatchObject({ tool_use_id: "c0" })
    expect(text.first).toMatch(/^ID +TOOL/)
    for (const result of [stream, text]) {
      expect(result.stderr).toBe("")
      expect(result.code).toBe(0)
    }
  })
})
