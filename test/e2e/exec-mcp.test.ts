import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { runCli } from "../fixtures/Cli.js"

const fixture = Path.resolve(import.meta.dirname, "../fixtures/mcp/server.ts")
const root = Path.resolve(import.meta.dirname, "../..")

const call = (id: string, name: string, input: Record<string, unknown>) =>
  JSON.stringify({ type: "tool_use", id, name, input })

describe("armature exec --mcp-config (process)", () => {
  it("runs read-only MCP calls in parallel and a writing one alone, through the permission rules", async () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-exec-mcp-"))
    const config = Path.join(dir, ".mcp.json")
    Fs.writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { fx: { command: process.execPath, args: ["--import", "tsx", fixture], cwd: root } }
      })
    )
    const batch = Path.join(dir, "batch.jsonl")
    Fs.writeFileSync(
      batch,
      [
        call("p1", "mcp__fx__peek", { ms: 800, tag: "a" }),
        call("p2", "mcp__fx__peek", { ms: 800, tag: "b" }),
        call("w", "mcp__fx__write", { text: "x", ms: 10 }),
        call("d", "mcp__fx__peek", { ms: "slow" })
      ].join("\n")
    )
    const { code, stdout, stderr } = await runCli(
      ["exec", batch, "--output", "stream-json", "--mcp-config", config, "--allowed-tools", "mcp__fx"],
      dir
    )
    expect(code, stderr).toBe(0)
    const events = stdout
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as { type: string; tool_use_id?: string; state?: string; t_ms: number })
    const at = (id: string, state: string) =>
      events.find((e) => e.type === "state" && e.tool_use_id === id && e.state === state)?.t_ms ?? Number.NaN
    // both peeks execute at once: each starts before the other completes
    expect(at("p2", "executing")).toBeLessThan(at("p1", "completed"))
    expect(at("p1", "executing")).toBeLessThan(at("p2", "completed"))
    // the writing tool runs alone, after both
    expect(at("w", "executing")).toBeGreaterThanOrEqual(Math.max(at("p1", "completed"), at("p2", "completed")))
    const results = events.filter((e) => e.type === "tool_result") as unknown as Array<{
      tool_use_id: string
      content: string | ReadonlyArray<{ readonly text?: string }>
      is_error: boolean
    }>
    expect(results.map((r) => r.tool_use_id)).toEqual(["p1", "p2", "w", "d"])
    const text = (c: string | ReadonlyArray<{ readonly text?: string }>) =>
      typeof c === "string" ? c : c.map((b) => b.text ?? "").join("")
    expect(text(results[0].content)).toMatch(/^peek a from \d+$/)
    expect(results[3].is_error).toBe(true)
    expect(text(results[3].content)).toContain("InputValidationError: mcp__fx__peek failed")
  }, 120_000)
})
