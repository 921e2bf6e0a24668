import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, SubscriptionRef } from "effect"
import * as McpConfig from "../../../src/domain/McpConfig.js"
import * as Tool from "../../../src/domain/Tool.js"
import { annotationsOf } from "../../../src/layers/mcp/McpAnnotations.js"
import * as McpClientsLive from "../../../src/layers/mcp/McpClientsLive.js"
import * as ToolRegistryLive from "../../../src/layers/registry/ToolRegistryLive.js"
import * as SessionLive from "../../../src/layers/session/SessionLive.js"
import { McpClients } from "../../../src/services/McpClients.js"
import * as Session from "../../../src/services/Session.js"
import { ToolRegistry } from "../../../src/services/ToolRegistry.js"
import {
  call,
  clientLayer,
  everythingServer,
  fast,
  fixtureServer,
  ready,
  root,
  textOf,
  tool,
  waitFor
} from "../../fixtures/mcp/client.js"

const tempDir = (prefix: string) => Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))

const longName = `fetch_${"very_long_segment_".repeat(8)}end`

const extraTools = JSON.stringify([
  {
    name: "lookup",
    description: "Looks something up, the same answer each time, in a closed world",
    inputSchema: { type: "object", properties: {} },
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false }
  },
  {
    name: "put",
    description: "Writes, idempotently, to the open world",
    inputSchema: { type: "object", properties: {} },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true }
  },
  { name: longName, description: "A tool with a long name", inputSchema: { type: "object", properties: {} } }
])

describe("McpClientsLive: what the client keeps of a server's tools", () => {
  it.live("proxied tools keep the server's idempotentHint and openWorldHint as given", () =>
    Effect.gen(function* () {
      yield* ready
      expect(annotationsOf(yield* tool("mcp__edge__lookup"))).toEqual({
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false
      })
      expect(annotationsOf(yield* tool("mcp__edge__put"))).toEqual({
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: true
      })
      // no annotations at all: MCP's defaults, and no idempotentHint invented
      expect(annotationsOf(yield* tool("mcp__edge__slow"))).toEqual({
        readOnlyHint: false,
        destructiveHint: true,
        openWorldHint: true
      })
    }).pipe(Effect.provide(clientLayer({ edge: fixtureServer({ FIXTURE_EXTRA_TOOLS: extraTools }) })))
  )

  it.live("a tool name over 128 characters is shortened the same way every time, and the call reaches the tool", () =>
    Effect.gen(function* () {
      yield* ready
      const expected = McpConfig.toolName("edge", longName)
      expect(`mcp__edge__${longName}`.length).toBeGreaterThan(128)
      expect(expected.length).toEqual(128)
      const names = (yield* Effect.flatMap(ToolRegistry, (r) => r.all)).map((t) => t.name)
      expect(names.filter((n) => n.length > 128)).toEqual([])
      expect(names).toContain(expected)
      expect(textOf(yield* call(expected, {}))).toEqual(`hello from ${longName}`)
    }).pipe(Effect.provide(clientLayer({ edge: fixtureServer({ FIXTURE_EXTRA_TOOLS: extraTools }) })))
  )

  it.live("a result over maxOutputTokens is cut, with a note naming MAX_MCP_OUTPUT_TOKENS; a small one is whole", () =>
    Effect.gen(function* () {
      yield* ready
      const big = textOf(yield* call("mcp__edge__big", { chars: 10_000 }))
      expect(big.slice(0, 407)).toEqual(`${"x".repeat(400)}\n[MCP t`)
      expect(big).not.toContain("x".repeat(401))
      expect(big).toContain("about 2500 tokens, over the limit of 100 (MAX_MCP_OUTPUT_TOKENS)")
      expect(textOf(yield* call("mcp__edge__big", { chars: 400 }))).toEqual("x".repeat(400))
    }).pipe(Effect.provide(clientLayer({ edge: fixtureServer() }, { ...fast, maxOutputTokens: 100 })))
  )
})

describe("McpClientsLive: resources", () => {
  it.live("ReadMcpResource's error says the server's code once", () =>
    Effect.gen(function* () {
      yield* ready
      const failure = yield* Effect.flip(call("ReadMcpResource", { server: "everything", uri: "demo://nope/1" }))
      expect(failure.message).toEqual("MCP server everything: MCP error -32602: Resource demo://nope/1 not found")
      // a resource request's failure is typed, and (unlike a tool call's) not marked transient
      expect(failure).toMatchObject({ _tag: "McpRequestFailed", server: "everything", transient: false })
      expect(Tool.isTransient(failure)).toBe(false)
    }).pipe(Effect.provide(clientLayer({ everything: everythingServer() })))
  )

  it.live("a server that cannot connect fails resource requests with a transient McpNotConnected", () =>
    Effect.gen(function* () {
      yield* ready
      const failure = yield* Effect.flip(call("ListMcpResources", { server: "broken" }))
      expect(failure).toMatchObject({ _tag: "McpNotConnected", server: "broken", transient: true })
      expect(failure.message).toMatch(/^MCP server broken is not connected \(.*ENOENT.*\)$/)
      expect(Tool.isTransient(failure)).toBe(true)
    }).pipe(
      Effect.provide(
        clientLayer(
          { broken: { command: "/nonexistent/armature-mcp-server", args: [], env: {} } },
          { ...fast, reconnectWait: "100 millis" }
        )
      )
    )
  )
})

describe("McpClientsLive: roots", () => {
  it.live("a change of working directory is announced to the server at once, without waiting for a call", () => {
    const log = Path.join(tempDir("armature-mcp-roots-"), "log.jsonl")
    const sub = tempDir("armature-mcp-cd-")
    const announced = () =>
      Fs.existsSync(log)
        ? Fs.readFileSync(log, "utf8")
            .split("\n")
            .filter((l) => l.includes('"roots_changed"')).length
        : 0
    return Effect.gen(function* () {
      yield* ready
      const session = yield* Session.Session
      expect(announced()).toEqual(0)
      yield* SubscriptionRef.update(session.context, (c) => ({ ...c, cwd: sub }))
      yield* waitFor(Effect.sync(() => (announced() === 1 ? Option.some(true) : Option.none())))
      // the same directory again is no change
      yield* SubscriptionRef.update(session.context, (c) => ({ ...c, cwd: sub }))
      yield* SubscriptionRef.update(session.context, (c) => ({ ...c, cwd: root }))
      yield* waitFor(Effect.sync(() => (announced() === 2 ? Option.some(true) : Option.none())))
      const [status] = yield* Effect.flatMap(McpClients, (m) => m.servers)
      expect(status.state).toEqual("connected")
    }).pipe(Effect.provide(clientLayer({ roots: fixtureServer({ FIXTURE_LOG: log }) })))
  })
})

describe("McpClientsLive: invalid entries", () => {
  it.live("an invalid entry is reported as such among the servers, and the valid ones start", () => {
    const dir = tempDir("armature-mcp-invalid-")
    const file = Path.join(dir, "mcp.json")
    const lines: Array<string> = []
    Fs.writeFileSync(
      file,
      JSON.stringify({
        // biome-ignore lint/suspicious/noTemplateCurlyInString: an unset ${VAR} is what this test is about
        mcpServers: { bad: { command: "${ARMATURE_TEST_SURELY_UNSET}" }, good: fixtureServer() }
      })
    )
    return Effect.gen(function* () {
      const clients = yield* McpClients
      yield* clients.ready
      const status = yield* clients.servers
      expect(status.map((s) => [s.name, s.state])).toEqual([
        ["good", "connected"],
        ["bad", "invalid"]
      ])
      expect(status[1].lastError).toEqual(
        "mcpServers.bad.command: environment variable ARMATURE_TEST_SURELY_UNSET is not set"
      )
      expect(lines).toEqual([
        `armature: MCP server "bad" of ${file} is disabled: mcpServers.bad.command: environment variable ARMATURE_TEST_SURELY_UNSET is not set`
      ])
    }).pipe(
      Effect.provide(
        McpClientsLive.layerFromFile(file, fast, (line) => lines.push(line)).pipe(
          Layer.provideMerge(ToolRegistryLive.layer),
          Layer.provideMerge(SessionLive.layer({ cwd: root, stateDir: Path.join(dir, "state") }))
        )
      )
    )
  })
})
