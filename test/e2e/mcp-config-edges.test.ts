import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { bin, runCli } from "../fixtures/Cli.js"

const root = Path.resolve(import.meta.dirname, "../..")
const fixture = Path.join(root, "test/fixtures/mcp/server.ts")

const server = (env: Record<string, string> = {}) => ({
  command: process.execPath,
  args: ["--import", "tsx", fixture],
  cwd: root,
  env
})

/** A project whose approved `.mcp.json` has a server with an unset `${VAR}` beside a good one. */
const project = (servers: Record<string, unknown>) => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-mcp-edges-"))
  Fs.writeFileSync(Path.join(dir, ".mcp.json"), JSON.stringify({ mcpServers: servers }))
  Fs.mkdirSync(Path.join(dir, ".claude"))
  Fs.writeFileSync(Path.join(dir, ".claude", "settings.json"), JSON.stringify({ enableAllProjectMcpServers: true }))
  return dir
}

// biome-ignore lint/suspicious/noTemplateCurlyInString: an unset ${VAR} is what these tests are about
const unset = { command: "${ARMATURE_E2E_SURELY_UNSET}" }

const notice = (dir: string) =>
  `armature: MCP server "bad" of ${Path.join(dir, ".mcp.json")} is disabled: mcpServers.bad.command: environment variable ARMATURE_E2E_SURELY_UNSET is not set`

describe("a bad entry in .mcp.json disables that server only", () => {
  it("tools list lists the good server's tools, exit 0, one warning line on stderr", async () => {
    const dir = project({ bad: unset, good: server() })
    const result = await runCli(["tools", "list", "--json", "--cwd", dir], dir)
    expect(result.code, result.stderr).toBe(0)
    const names = (JSON.parse(result.stdout) as Array<{ name: string }>).map((t) => t.name)
    expect(names).toContain("mcp__good__peek")
    expect(names).toContain("Glob")
    expect(result.stderr.split("\n").filter((l) => l.includes("MCP server"))).toEqual([notice(dir)])
    expect(result.stderr).not.toContain("WARN")
  }, 300_000)

  it("mcp serve answers initialize and calls; stdout carries JSON-RPC only, stderr the warning and no DEBUG", async () => {
    const dir = project({ bad: unset })
    const child = spawn(process.execPath, [bin, "mcp", "serve", "--cwd", dir], {
      cwd: dir,
      env: { ...process.env, HOME: dir, ARMATURE_STATE_DIR: Path.join(dir, ".state") }
    })
    let stdout = ""
    let stderr = ""
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString()
    })
    const answered = new Promise<void>((resolve) => {
      child.stdout.on("data", (c: Buffer) => {
        stdout += c.toString()
        if (stdout.includes('"id":2')) resolve()
      })
    })
    const send = (message: Record<string, unknown>) =>
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`)
    send({
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "e2e", version: "1" } }
    })
    send({ method: "notifications/initialized" })
    send({ id: 2, method: "tools/call", params: { name: "Glob", arguments: { pattern: "*.json" } } })
    await answered
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve))
    child.stdin.end()
    expect(await exited).toBe(0)
    const lines = stdout.trim().split("\n")
    for (const line of lines) expect((JSON.parse(line) as { jsonrpc: string }).jsonrpc).toEqual("2.0")
    expect(lines.map((l) => (JSON.parse(l) as { id?: number }).id)).toEqual([1, 2])
    expect(stderr).toContain(notice(dir))
    expect(stderr).not.toContain("DEBUG")
  }, 300_000)
})

describe("MCP_TIMEOUT", () => {
  it("bounds the wait for a server that never answers", async () => {
    const dir = project({ silent: server({ FIXTURE_SILENT: "1" }) })
    const result = await runCli(["tools", "list", "--json", "--cwd", dir], dir, { MCP_TIMEOUT: "1500" })
    expect(result.code, result.stderr).toBe(0)
    // the default would say "no answer within 30s"
    expect(result.stderr).toContain("MCP server silent: no answer within 1s 500ms")
  }, 300_000)
})
