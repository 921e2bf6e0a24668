import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { runCli } from "../fixtures/Cli.js"

const fixture = Path.resolve(import.meta.dirname, "../fixtures/mcp/server.ts")
const root = Path.resolve(import.meta.dirname, "../..")

const call = (id: string, name: string, input: Record<string, unknown>) =>
  JSON.stringify({ type: "tool_use", id, name, input })

const flakyTools = [
  {
    name: "flaky_read",
    description: "Reads, failing at first",
    inputSchema: { type: "object", properties: { key: { type: "string" }, failures: { type: "integer" } } },
    annotations: { readOnlyHint: true }
  },
  {
    name: "flaky_write",
    description: "Writes, failing at first",
    inputSchema: { type: "object", properties: { key: { type: "string" }, failures: { type: "integer" } } },
    annotations: { readOnlyHint: false }
  }
]

interface Event {
  readonly type: string
  readonly tool_use_id?: string
  readonly action?: string
  readonly attempt?: number
  readonly reason?: string
  readonly content?: string | ReadonlyArray<{ readonly text?: string }>
  readonly is_error?: boolean
}

const text = (c: Event["content"]) => (typeof c === "string" ? c : (c ?? []).map((b) => b.text ?? "").join("\n"))

describe("tool policies against a real MCP server (process)", () => {
  it("a read-only tool failing twice is retried to one result; a writing one is not retried", async () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-policies-"))
    const log = Path.join(dir, "server.log")
    const config = Path.join(dir, ".mcp.json")
    Fs.writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          fx: {
            command: process.execPath,
            args: ["--import", "tsx", fixture],
            cwd: root,
            env: { FIXTURE_EXTRA_TOOLS: JSON.stringify(flakyTools), FIXTURE_LOG: log }
          }
        }
      })
    )
    const settings = Path.join(dir, "settings.json")
    Fs.writeFileSync(
      settings,
      JSON.stringify({ toolPolicies: { "mcp__fx__*": { retry: { times: 3, backoff: "exponential", baseMs: 50 } } } })
    )
    const batch = Path.join(dir, "batch.jsonl")
    Fs.writeFileSync(
      batch,
      [
        call("r", "mcp__fx__flaky_read", { key: "a", failures: 2 }),
        call("w", "mcp__fx__flaky_write", { key: "b", failures: 2 })
      ].join("\n")
    )
    const { code, stdout, stderr } = await runCli(
      [
        "exec",
        batch,
        "--output",
        "stream-json",
        "--mcp-config",
        config,
        "--settings",
        settings,
        "--allowed-tools",
        "mcp__fx"
      ],
      dir
    )
    expect(code, stderr).toBe(0)
    const events = stdout
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as Event)
    const policy = events.filter((e) => e.type === "policy")
    expect(policy.map((e) => [e.tool_use_id, e.action, e.attempt])).toEqual([
      ["r", "retry", 1],
      ["r", "retry", 2]
    ])
    expect(policy[0].reason).toBe("MCP server fx: MCP error -32603: flaky_read is overloaded (attempt 1)")
    const results = events.filter((e) => e.type === "tool_result")
    expect(results.map((r) => [r.tool_use_id, r.is_error])).toEqual([
      ["r", false],
      ["w", true]
    ])
    expect(text(results[0].content)).toBe(
      "hello from flaky_read\n[tool policy mcp__fx__*: succeeded after 2 retries of transient failures (last: MCP server fx: MCP error -32603: flaky_read is overloaded (attempt 2))]"
    )
    expect(text(results[1].content)).toContain("flaky_write is overloaded (attempt 1)")
    expect(text(results[1].content)).toContain("not retried, as mcp__fx__flaky_write may have side effects")
    const attempts = Fs.readFileSync(log, "utf8")
      .split("\n")
      .filter((l) => l.includes('"flaky"'))
      .map((l) => (JSON.parse(l) as { key: string }).key)
    expect(attempts).toEqual(["flaky_read:a", "flaky_read:a", "flaky_read:a", "flaky_write:b"])
  }, 120_000)
})
