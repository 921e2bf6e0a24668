/**
 * A stdio MCP server entry with `"sandbox": true` runs inside the OS sandbox with the Bash policy, and is not
 * started at all when the sandbox is off (fail closed).
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Url from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Schedule } from "effect"
import * as Armature from "../../../src/Armature.js"
import { McpClients } from "../../../src/services/McpClients.js"
import { ToolRegistry } from "../../../src/services/ToolRegistry.js"
import { fixture, root } from "../../fixtures/mcp/client.js"

const tempDir = (prefix: string) => Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix)))

/** A server that first tries to write inside and outside the project, then becomes the fixture MCP server. */
const engine = (sandbox: boolean) => {
  const project = tempDir("armature-sandbox-mcp-")
  const outside = Path.join(tempDir("armature-sandbox-mcp-out-"), "escaped.txt")
  const tsx = Url.pathToFileURL(Path.join(root, "node_modules/tsx/dist/loader.mjs")).href
  const script = `touch ${outside} 2>/dev/null; touch inside-mcp.txt; exec ${process.execPath} --import ${tsx} ${fixture}`
  const layer = Armature.layerNode({
    cwd: project,
    settingSources: [],
    sandbox,
    mcpConfig: {
      mcpServers: { fx: { command: "/bin/bash", args: ["-c", script], env: {}, cwd: project, sandbox: true } }
    },
    mcp: { connectTimeout: "60 seconds", reconnectSchedule: Schedule.spaced("10 seconds") }
  })
  return { project, outside, layer }
}

describe("stdio MCP servers in the sandbox", () => {
  it.live('"sandbox": true runs the server inside the sandbox: its tools work, it cannot write outside', () => {
    const { layer, outside, project } = engine(true)
    return Effect.gen(function* () {
      yield* Effect.flatMap(McpClients, (m) => m.ready)
      const [status] = yield* Effect.flatMap(McpClients, (m) => m.servers)
      expect(status).toMatchObject({ name: "fx", state: "connected", lastError: undefined })
      const registry = yield* ToolRegistry
      expect(Option.isSome(yield* registry.lookup("mcp__fx__peek"))).toBe(true)
      expect(Fs.existsSync(Path.join(project, "inside-mcp.txt"))).toBe(true)
      expect(Fs.existsSync(outside)).toBe(false)
    }).pipe(Effect.provide(layer))
  })

  it.live("with the sandbox off, such a server is not started unsandboxed", () => {
    const { layer, project } = engine(false)
    return Effect.gen(function* () {
      yield* Effect.flatMap(McpClients, (m) => m.ready)
      const [status] = yield* Effect.flatMap(McpClients, (m) => m.servers)
      expect(status.state).toBe("failed")
      expect(status.lastError).toContain('the entry asks for the sandbox ("sandbox": true), but the sandbox is off')
      expect(Fs.existsSync(Path.join(project, "inside-mcp.txt"))).toBe(false)
    }).pipe(Effect.provide(layer))
  })
})
