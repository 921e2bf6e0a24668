import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { bin, runCli } from "../fixtures/Cli.js"

const root = Path.resolve(import.meta.dirname, "../..")
const fixture = Path.join(root, "test/fixtures/mcp/server.ts")

const server = { command: process.execPath, args: ["--import", "tsx", fixture], cwd: root }

/** A project with a `.mcp.json` naming the fixture server twice ("proj" and "other"), and a private HOME. */
const project = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-mcp-project-"))
  Fs.writeFileSync(Path.join(dir, ".mcp.json"), JSON.stringify({ mcpServers: { proj: server, other: server } }))
  return dir
}

const run = (dir: string, args: ReadonlyArray<string>) => runCli([...args, "--cwd", dir], dir)

const mcpNames = (stdout: string): ReadonlyArray<string> =>
  (JSON.parse(stdout) as Array<{ name: string; deferred?: boolean; defer_loading?: boolean }>)
    .filter((t) => t.name.startsWith("mcp__"))
    .map((t) => `${t.name}${t.deferred === true || t.defer_loading === true ? " (deferred)" : ""}`)

describe("a project's .mcp.json", () => {
  it("is not started unless approved: one line on stderr names the servers and how to approve them", async () => {
    const dir = project()
    const result = await run(dir, ["tools", "list", "--json"])
    expect(result.code, result.stderr).toBe(0)
    expect(mcpNames(result.stdout)).toEqual([])
    const notices = result.stderr.split("\n").filter((l) => l.includes("not approved"))
    expect(notices).toEqual([
      `armature: not starting MCP servers "proj", "other" of ${Path.join(dir, ".mcp.json")}: not approved (add to enabledMcpjsonServers or set enableAllProjectMcpServers in settings)`
    ])
  }, 120_000)

  it("starts the servers approved by settings, minus the disabled ones; --mcp-config adds servers", async () => {
    const dir = project()
    Fs.mkdirSync(Path.join(dir, ".claude"))
    Fs.writeFileSync(
      Path.join(dir, ".claude", "settings.local.json"),
      JSON.stringify({ enabledMcpjsonServers: ["proj"] })
    )
    const listed = await run(dir, ["tools", "list", "--json"])
    expect(listed.code, listed.stderr).toBe(0)
    expect(mcpNames(listed.stdout).filter((n) => n.includes("peek"))).toEqual(["mcp__proj__peek (deferred)"])
    expect(listed.stderr).toContain('not starting MCP server "other"')

    const all = Path.join(dir, "all.json")
    Fs.writeFileSync(all, JSON.stringify({ enableAllProjectMcpServers: true, disabledMcpjsonServers: ["proj"] }))
    const extra = Path.join(dir, "extra.json")
    Fs.writeFileSync(extra, JSON.stringify({ mcpServers: { added: server } }))
    const schema = await run(dir, ["tools", "schema", "--settings", all, "--mcp-config", extra])
    expect(schema.code, schema.stderr).toBe(0)
    expect(mcpNames(schema.stdout).filter((n) => n.includes("peek"))).toEqual([
      "mcp__added__peek (deferred)",
      "mcp__other__peek (deferred)"
    ])
    expect(schema.stderr).not.toContain("not approved")

    const search = await run(dir, ["tools", "search", "select:mcp__other__peek", "--json", "--settings", all])
    expect(search.code, search.stderr).toBe(0)
    expect(JSON.parse(search.stdout)).toEqual({
      query: "select:mcp__other__peek",
      hits: [{ name: "mcp__other__peek", score: null }]
    })
  }, 180_000)
})

/** Runs the CLI with stdin and stderr on a pseudo-terminal, typing `answers` as their prompts appear. */
const onTerminal = (dir: string, answers: ReadonlyArray<readonly [string, string]>, args: ReadonlyArray<string>) =>
  new Promise<{ code: number | null; stdout: string; terminal: string }>((resolve, reject) => {
    const driver = Path.join(root, "test/fixtures/on_terminal.py")
    const child = spawn("python3", [driver, JSON.stringify(answers), process.execPath, bin, ...args, "--cwd", dir], {
      cwd: dir,
      env: { ...process.env, HOME: dir, ARMATURE_STATE_DIR: Path.join(dir, ".state") }
    })
    let out = ""
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString()
    })
    child.on("close", () => {
      try {
        resolve(JSON.parse(out))
      } catch (e) {
        reject(new Error(`pty driver printed ${JSON.stringify(out)}: ${e}`))
      }
    })
  })

describe("a project's .mcp.json on a terminal", () => {
  it("asks about each open server; the answers decide what starts and are saved in .claude/settings.local.json", async () => {
    const dir = project()
    const calls = Path.join(dir, "calls.json")
    Fs.writeFileSync(
      calls,
      JSON.stringify([{ type: "tool_use", id: "w", name: "mcp__proj__write", input: { text: "from a terminal" } }])
    )
    const question = "[n] do not use it"
    const result = await onTerminal(
      dir,
      [
        [question, "y"],
        [question, "n"]
      ],
      ["exec", calls, "--output", "json", "--allowed-tools", "mcp__proj"]
    )
    expect(result.code, result.terminal).toBe(0)
    expect(result.terminal).toContain(`New MCP server found in ${Path.join(dir, ".mcp.json")}: proj (`)
    expect(result.terminal).toContain(`New MCP server found in ${Path.join(dir, ".mcp.json")}: other (`)
    const results = JSON.parse(result.stdout) as Array<{ tool_use_id: string; content: unknown; is_error?: boolean }>
    expect(JSON.stringify(results)).toContain("wrote from a terminal")
    expect(JSON.parse(Fs.readFileSync(Path.join(dir, ".claude", "settings.local.json"), "utf8"))).toEqual({
      enabledMcpjsonServers: ["proj"],
      disabledMcpjsonServers: ["other"]
    })
    // remembered: the next run asks nothing and starts proj only
    const again = await run(dir, ["tools", "list", "--json"])
    expect(mcpNames(again.stdout).filter((n) => n.includes("peek"))).toEqual(["mcp__proj__peek (deferred)"])
    expect(again.stderr).not.toContain("not approved")
  }, 180_000)
})
