import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { describe, expect, it, layer } from "@effect/vitest"
import {
  Chunk,
  Deferred,
  Effect,
  Either,
  Exit,
  Fiber,
  Layer,
  Option,
  ParseResult,
  Ref,
  Schedule,
  Schema,
  Stream
} from "effect"
import { inputValidationError } from "../../../src/domain/InputIssues.js"
import type * as McpConfig from "../../../src/domain/McpConfig.js"
import * as McpFailure from "../../../src/domain/McpFailure.js"
import * as Tool from "../../../src/domain/Tool.js"
import * as StreamingExecutor from "../../../src/layers/executor/StreamingExecutor.js"
import * as McpClientsLive from "../../../src/layers/mcp/McpClientsLive.js"
import * as ToolRegistryLive from "../../../src/layers/registry/ToolRegistryLive.js"
import * as MemoryResultStore from "../../../src/layers/results/MemoryResultStore.js"
import * as SessionLive from "../../../src/layers/session/SessionLive.js"
import * as Approver from "../../../src/services/Approver.js"
import * as Hooks from "../../../src/services/Hooks.js"
import { McpClients, McpElicitor, pendingServersKey } from "../../../src/services/McpClients.js"
import * as PermissionPolicy from "../../../src/services/PermissionPolicy.js"
import * as Session from "../../../src/services/Session.js"
import { ToolExecutor } from "../../../src/services/ToolExecutor.js"
import { ToolRegistry } from "../../../src/services/ToolRegistry.js"

const root = Path.resolve(__dirname, "../../..")
const fixture = Path.join(root, "test/fixtures/mcp/server.ts")

const fixtureServer = (env: Record<string, string> = {}): McpConfig.StdioServer => ({
  command: process.execPath,
  args: ["--import", "tsx", fixture],
  env,
  cwd: root
})

const fast: McpClientsLive.Options = {
  connectTimeout: "50 seconds",
  reconnectSchedule: Schedule.spaced("50 millis"),
  reconnectWait: "20 seconds"
}

const clientLayer = (servers: Record<string, McpConfig.ServerConfig>, options = fast) =>
  McpClientsLive.layer({ mcpServers: servers }, options).pipe(
    Layer.provideMerge(ToolRegistryLive.layer),
    Layer.provideMerge(SessionLive.layer({ cwd: root, stateDir: Path.join(Os.tmpdir(), "armature-mcp-test") }))
  )

/** The real executor over the client side, with every call allowed. */
const withExecutor = <R, E>(clients: Layer.Layer<R | ToolRegistry | Session.Session, E>) =>
  StreamingExecutor.layer().pipe(
    Layer.provideMerge(
      Layer.mergeAll(PermissionPolicy.allowAll, Approver.headless, Hooks.none, MemoryResultStore.layer)
    ),
    Layer.provideMerge(clients)
  )

const context = (progress: (data: unknown) => Effect.Effect<void> = () => Effect.void) =>
  Effect.map(Session.Session, (session) => ({
    toolUseId: "toolu_1",
    cwd: root,
    permissionMode: "default" as const,
    progress,
    interrupted: Effect.never,
    state: session.state
  }))

const tool = (name: string) =>
  Effect.flatMap(ToolRegistry, (r) => r.lookup(name)).pipe(
    Effect.flatMap(Option.match({ onNone: () => Effect.dieMessage(`no tool ${name}`), onSome: Effect.succeed }))
  )

const call = (name: string, input: unknown, progress?: (data: unknown) => Effect.Effect<void>) =>
  Effect.gen(function* () {
    const t = yield* tool(name)
    const decoded = yield* Schema.decodeUnknown(t.input)(input).pipe(Effect.orDie)
    const output = yield* t.call(decoded, yield* context(progress))
    return t.toResult(Tool.isWithModifier(output) ? output.output : output)
  })

const textOf = (content: unknown): string =>
  Array.isArray(content) ? content.map((b: { text?: string }) => b.text ?? "").join("\n") : String(content)

const stats = call("mcp__fixture__stats", {}).pipe(
  Effect.map(
    (c) =>
      JSON.parse(textOf(c)) as {
        maxInFlight: number
        pid: number
        cancelled: ReadonlyArray<{ requestId: number; reason: string }>
      }
  )
)

const ready = Effect.flatMap(McpClients, (m) => m.ready)

const waitFor = <A>(effect: Effect.Effect<Option.Option<A>>) =>
  effect.pipe(
    Effect.flatMap(Option.match({ onNone: () => Effect.fail("not yet"), onSome: Effect.succeed })),
    Effect.retry(Schedule.spaced("25 millis").pipe(Schedule.upTo("50 seconds"))),
    Effect.orDie
  )

layer(withExecutor(clientLayer({ fixture: fixtureServer() })), { excludeTestServices: true })(
  "McpClientsLive with the fixture server over stdio (one shared server process)",
  (it) => {
    it.effect("registers the server's tools as mcp__{server}__{tool} with the server's flags and JSON Schemas", () =>
      Effect.gen(function* () {
        yield* ready
        const registry = yield* ToolRegistry
        const names = (yield* registry.all).map((t) => t.name)
        expect(names.filter((n) => !n.startsWith("mcp__"))).toEqual(["ListMcpResources", "ReadMcpResource"])
        expect(names.filter((n) => n.startsWith("mcp__"))).toEqual([
          "mcp__fixture__add_tool",
          "mcp__fixture__ask_model",
          "mcp__fixture__ask_user",
          "mcp__fixture__big",
          "mcp__fixture__burst",
          "mcp__fixture__crash",
          "mcp__fixture__fail",
          "mcp__fixture__image",
          "mcp__fixture__peek",
          "mcp__fixture__slow",
          "mcp__fixture__stats",
          "mcp__fixture__write"
        ])
        const peek = yield* tool("mcp__fixture__peek")
        const write = yield* tool("mcp__fixture__write")
        const slow = yield* tool("mcp__fixture__slow")
        expect([peek.source, peek.category, Tool.isDeferred(peek)]).toEqual(["mcp", "mcp", true])
        expect([peek.isReadOnly({}), peek.isConcurrencySafe({}), peek.isDestructive({})]).toEqual([true, true, false])
        expect([write.isReadOnly({}), write.isConcurrencySafe({}), write.isDestructive({})]).toEqual([
          false,
          false,
          true
        ])
        // no annotations: MCP's defaults (not read-only, destructive)
        expect([slow.isReadOnly({}), slow.isConcurrencySafe({}), slow.isDestructive({})]).toEqual([false, false, true])
        expect(Tool.toApiDefinition(write)).toEqual({
          name: "mcp__fixture__write",
          description: "Writes `text` somewhere, after `ms` milliseconds",
          input_schema: {
            type: "object",
            properties: { text: { type: "string", description: "what to write" }, ms: { type: "integer" } },
            required: ["text"],
            additionalProperties: false
          }
        })
        const status = yield* Effect.flatMap(McpClients, (m) => m.servers)
        expect(status.map((s) => [s.name, s.state, s.connections, s.tools.length])).toEqual([
          ["fixture", "connected", 1, 12]
        ])
      })
    )

    it.effect("decodes input with the server's schema and reports readable issues", () =>
      Effect.gen(function* () {
        yield* ready
        const write = yield* tool("mcp__fixture__write")
        const issue = (input: unknown) =>
          Either.match(Schema.decodeUnknownEither(write.input)(input), {
            onLeft: (e) => inputValidationError(write.name, e.issue),
            onRight: () => "ok"
          })
        expect(issue({ text: "x" })).toEqual("ok")
        expect(issue({})).toEqual(
          "<tool_use_error>InputValidationError: mcp__fixture__write failed due to the following issue:\nThe required parameter `text` is missing</tool_use_error>"
        )
        expect(issue({ text: 1, extra: true })).toEqual(
          "<tool_use_error>InputValidationError: mcp__fixture__write failed due to the following issues:\nAn unexpected parameter `extra` was provided\nThe parameter `text` type is expected as `string` but provided as `number`</tool_use_error>"
        )
        expect(Either.isLeft(Schema.decodeUnknownEither(write.input)([1]))).toBe(true)
        const slow = yield* tool("mcp__fixture__slow")
        const left = Schema.decodeUnknownEither(slow.input)({ steps: 0 })
        expect(Either.isLeft(left) ? ParseResult.ArrayFormatter.formatErrorSync(left.left) : []).toEqual([
          { _tag: "Type", path: ["steps"], message: "must be >= 1" }
        ])
      })
    )

    it.effect("maps text, image and error results", () =>
      Effect.gen(function* () {
        yield* ready
        expect(yield* call("mcp__fixture__write", { text: "hello" })).toEqual([{ type: "text", text: "wrote hello" }])
        expect(yield* call("mcp__fixture__image", {})).toEqual([
          { type: "text", text: "a pixel" },
          { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }
        ])
        const failed = yield* Effect.flip(call("mcp__fixture__fail", {}))
        expect(failed).toEqual(
          new McpFailure.McpToolError({ server: "fixture", tool: "fail", message: "it went wrong" })
        )
        // an error result is the tool's answer: not a transient failure a retry policy would repeat
        expect(Tool.isTransient(failed)).toBe(false)
      })
    )

    it.effect("turns progress notifications into progress events", () =>
      Effect.gen(function* () {
        yield* ready
        const events = yield* Ref.make<ReadonlyArray<unknown>>([])
        const result = yield* call("mcp__fixture__slow", { steps: 3, step_ms: 20 }, (data) =>
          Ref.update(events, (all) => [...all, data])
        )
        expect(textOf(result)).toEqual("counted to 3")
        expect(yield* Ref.get(events)).toEqual([
          { progress: 1, total: 3, message: "step 1" },
          { progress: 2, total: 3, message: "step 2" },
          { progress: 3, total: 3, message: "step 3" }
        ])
      })
    )

    it.effect("delivers every progress notification, the last one too, before the result", () =>
      Effect.gen(function* () {
        yield* ready
        for (const steps of [3, 6]) {
          const events = yield* Ref.make<ReadonlyArray<unknown>>([])
          const result = yield* call("mcp__fixture__burst", { steps }, (data) =>
            Ref.update(events, (all) => [...all, data])
          )
          expect(textOf(result)).toEqual(`burst of ${steps}`)
          expect(yield* Ref.get(events)).toEqual(
            Array.from({ length: steps }, (_, i) => ({ progress: i + 1, total: steps, message: `burst ${i + 1}` }))
          )
        }
        // through the executor too: every progress event comes before the result event
        const executor = yield* ToolExecutor
        const events = yield* executor
          .runBatch([{ type: "tool_use", id: "b", name: "mcp__fixture__burst", input: { steps: 4 } }])
          .pipe(Stream.runCollect, Effect.map(Chunk.toReadonlyArray))
        const kinds = events.filter((e) => e.type !== "state").map((e) => e.type)
        expect(kinds).toEqual(["progress", "progress", "progress", "progress", "tool_result"])
      })
    )

    it.effect("runs read-only calls concurrently on the server", () =>
      Effect.gen(function* () {
        yield* ready
        const results = yield* Effect.all(
          [call("mcp__fixture__peek", { ms: 300, tag: "a" }), call("mcp__fixture__peek", { ms: 300, tag: "b" })],
          { concurrency: "unbounded" }
        )
        expect(results.map(textOf).map((t) => t.split(" from")[0])).toEqual(["peek a", "peek b"])
        expect((yield* stats).maxInFlight).toEqual(2)
      })
    )

    it.effect("through the real executor, read-only MCP calls execute together and a writing call waits", () =>
      Effect.gen(function* () {
        yield* ready
        const executor = yield* ToolExecutor
        const use = (id: string, name: string, input: unknown) => ({ type: "tool_use" as const, id, name, input })
        const events = yield* executor
          .runBatch([
            use("a", "mcp__fixture__peek", { ms: 300, tag: "a" }),
            use("b", "mcp__fixture__peek", { ms: 300, tag: "b" }),
            use("w", "mcp__fixture__write", { text: "after" })
          ])
          .pipe(Stream.runCollect, Effect.map(Chunk.toReadonlyArray))
        const states = events.flatMap((e) => (e.type === "state" ? [`${e.tool_use_id}:${e.state}`] : []))
        const at = (s: string) => states.indexOf(s)
        // b starts executing before a completes (overlapping intervals); w starts only after both complete.
        expect(at("b:executing")).toBeLessThan(at("a:completed"))
        expect(at("w:executing")).toBeGreaterThan(Math.max(at("a:completed"), at("b:completed")))
        const results = events.flatMap((e) => (e.type === "tool_result" ? [[e.tool_use_id, e.is_error]] : []))
        expect(results).toEqual([
          ["a", false],
          ["b", false],
          ["w", false]
        ])
      })
    )

    it.effect("interrupting a call sends notifications/cancelled, which the server records", () =>
      Effect.gen(function* () {
        yield* ready
        const started = yield* Deferred.make<void>()
        const fiber = yield* Effect.fork(
          call("mcp__fixture__slow", { steps: 100, step_ms: 50 }, () => Deferred.succeed(started, undefined))
        )
        yield* Deferred.await(started)
        yield* Fiber.interrupt(fiber)
        const cancelled = (yield* stats).cancelled
        expect(cancelled.map((c) => c.reason)).toEqual(["The call was interrupted"])
      })
    )

    it.effect("notifications/tools/list_changed adds the new tool to the registry without a restart", () =>
      Effect.gen(function* () {
        yield* ready
        const registry = yield* ToolRegistry
        expect(Option.isNone(yield* registry.lookup("mcp__fixture__fresh"))).toBe(true)
        yield* call("mcp__fixture__add_tool", { name: "fresh" })
        yield* waitFor(registry.lookup("mcp__fixture__fresh"))
        expect(textOf(yield* call("mcp__fixture__fresh", {}))).toEqual("hello from fresh")
        const status = yield* Effect.flatMap(McpClients, (m) => m.servers)
        expect(status.map((s) => [s.connections, s.tools.length])).toEqual([[1, 13]])
      })
    )

    it.effect("a crashed server is restarted: read-only calls in flight are retried once, others fail clearly", () =>
      Effect.gen(function* () {
        yield* ready
        const before = (yield* stats).pid
        const peek = yield* Effect.fork(call("mcp__fixture__peek", { ms: 1500, tag: "retried" }))
        const write = yield* Effect.fork(Effect.either(call("mcp__fixture__write", { text: "lost", ms: 1500 })))
        yield* Effect.sleep("100 millis")
        yield* call("mcp__fixture__crash", { delay_ms: 50 })
        const peeked = textOf(yield* Fiber.join(peek))
        expect(peeked.startsWith("peek retried from ")).toBe(true)
        expect(peeked.split("\n")[1]).toEqual(
          "[MCP server fixture disconnected during this call (MCP error -32000: Connection closed); it was retried once after reconnecting, as peek is read-only]"
        )
        expect(peeked.split("\n")[0]).not.toEqual(`peek retried from ${before}`)
        const written = yield* Fiber.join(write)
        // a lost connection is a failure of the way to the tool: a retry policy may retry it (docs/tools.md)
        expect(Either.isLeft(written) && Tool.isTransient(written.left)).toBe(true)
        expect(written).toEqual(
          Either.left(
            new McpFailure.McpDisconnected({
              server: "fixture",
              tool: "write",
              message:
                "MCP server fixture disconnected during the call to write (MCP error -32000: Connection closed); the call was not retried because it may have side effects"
            })
          )
        )
        const status = yield* Effect.flatMap(McpClients, (m) => m.servers)
        expect(status.map((s) => [s.state, s.connections, s.tools.length])).toEqual([["connected", 2, 12]])
        expect((yield* stats).pid).not.toEqual(before)
      })
    )
  }
)

describe("McpClientsLive startup", () => {
  it.live("the per-call timeout resets on progress; closing the scope kills the server and unregisters its tools", () =>
    Effect.gen(function* () {
      const registry = yield* ToolRegistry
      const session = yield* Session.Session
      const pid = yield* Effect.scoped(
        Effect.gen(function* () {
          const clients = yield* McpClientsLive.make(
            { mcpServers: { fixture: fixtureServer() } },
            { ...fast, toolTimeout: "1 second" }
          )
          yield* clients.ready
          // 4 steps of 400 ms take longer than the timeout, but each progress notification resets it.
          expect(textOf(yield* call("mcp__fixture__slow", { steps: 4, step_ms: 400 }))).toEqual("counted to 4")
          const timedOut = yield* Effect.flip(call("mcp__fixture__peek", { ms: 2500 }))
          expect(timedOut).toEqual(
            new McpFailure.McpTimedOut({
              server: "fixture",
              tool: "peek",
              timeoutMs: 1000,
              message: "MCP tool peek on server fixture timed out after 1000 ms without progress"
            })
          )
          expect(Tool.isTransient(timedOut)).toBe(true)
          return (yield* stats).pid
        })
      )
      expect((yield* registry.all).length).toEqual(0)
      expect(yield* session.state.get(pendingServersKey)).toEqual([])
      const alive = () => {
        try {
          process.kill(pid, 0)
          return true
        } catch {
          return false
        }
      }
      yield* waitFor(Effect.sync(() => (alive() ? Option.none() : Option.some(true))))
      expect(alive()).toBe(false)
    }).pipe(Effect.provide(Layer.merge(ToolRegistryLive.layer, SessionLive.layer({ cwd: root }))))
  )
  it.live("starts servers in parallel: a slow one is pending and does not block the others; a broken one fails", () => {
    const gate = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-mcp-gate-")), "open")
    // "sleepy" starts its server only once the test opens the gate, however loaded the machine is.
    const sleepy = `const wait = () => require("node:fs").existsSync(${JSON.stringify(gate)}) ? import(${JSON.stringify(fixture)}) : setTimeout(wait, 20); wait()`
    return Effect.gen(function* () {
      const registry = yield* ToolRegistry
      const session = yield* Session.Session
      yield* waitFor(registry.lookup("mcp__fast__peek"))
      expect(yield* session.state.get(pendingServersKey)).toEqual(["sleepy"])
      expect(Option.isNone(yield* registry.lookup("mcp__sleepy__peek"))).toBe(true)
      Fs.writeFileSync(gate, "")
      yield* ready
      expect(Option.isSome(yield* registry.lookup("mcp__sleepy__peek"))).toBe(true)
      expect(yield* session.state.get(pendingServersKey)).toEqual([])
      const status = yield* Effect.flatMap(McpClients, (m) => m.servers)
      expect(status.map((s) => [s.name, s.state])).toEqual([
        ["fast", "connected"],
        ["sleepy", "connected"],
        ["broken", "failed"]
      ])
      expect(status[2].lastError).toContain("ENOENT")
    }).pipe(
      Effect.provide(
        clientLayer({
          fast: fixtureServer(),
          sleepy: { command: process.execPath, args: ["--import", "tsx", "-e", sleepy], env: {}, cwd: root },
          broken: { command: "/nonexistent/armature-mcp-server", args: [], env: {} }
        })
      )
    )
  })
})

describe("McpClientsLive over Streamable HTTP", () => {
  it.live("lists and calls the tools of a server on 127.0.0.1", () =>
    Effect.gen(function* () {
      const port = yield* Effect.acquireRelease(
        Effect.async<{ port: number; kill: () => void }>((resume) => {
          const child = ChildProcess.spawn(process.execPath, ["--import", "tsx", fixture, "--http"], {
            cwd: root,
            stdio: ["ignore", "pipe", "ignore"]
          })
          let out = ""
          child.stdout.on("data", (chunk: Buffer) => {
            out += chunk.toString()
            const match = /PORT (\d+)/.exec(out)
            if (match) resume(Effect.succeed({ port: Number(match[1]), kill: () => child.kill("SIGKILL") }))
          })
        }),
        (server) => Effect.sync(server.kill)
      )
      const layer = clientLayer({ web: { type: "http", url: `http://127.0.0.1:${port.port}/mcp`, headers: {} } })
      yield* Effect.gen(function* () {
        yield* ready
        const web = yield* tool("mcp__web__write")
        expect(web.isDestructive({})).toBe(true)
        expect(yield* call("mcp__web__write", { text: "over http" })).toEqual([
          { type: "text", text: "wrote over http" }
        ])
      }).pipe(Effect.provide(layer))
    }).pipe(Effect.scoped)
  )
})

describe("McpClientsLive with @modelcontextprotocol/server-everything", () => {
  const pkg = Path.join(root, "node_modules/@modelcontextprotocol/server-everything")
  const bin = JSON.parse(Fs.readFileSync(Path.join(pkg, "package.json"), "utf8")).bin["mcp-server-everything"]
  it.live("registers its tools and calls echo", () =>
    Effect.gen(function* () {
      yield* ready
      const echo = yield* tool("mcp__everything__echo")
      expect([echo.isReadOnly({}), echo.isConcurrencySafe({})]).toEqual([true, true])
      expect(echo.inputJsonSchema.required).toEqual(["message"])
      expect(yield* call("mcp__everything__echo", { message: "hi" })).toEqual([{ type: "text", text: "Echo: hi" }])
      const exit = yield* Effect.exit(Schema.decodeUnknown(echo.input)({}))
      expect(Exit.isFailure(exit)).toBe(true)
      // tools it offers only to clients declaring elicitation and roots; headless, elicitation is declined
      const registry = yield* ToolRegistry
      yield* waitFor(registry.lookup("mcp__everything__trigger-elicitation-request"))
      yield* waitFor(registry.lookup("mcp__everything__get-roots-list"))
      expect(textOf(yield* call("mcp__everything__trigger-elicitation-request", {}))).toContain(
        "User declined to provide the requested information"
      )
      expect(textOf(yield* call("mcp__everything__get-roots-list", {}))).toContain(pathToFileURL(root).href)
      // resources, listed page after page and read by URI
      const listed = JSON.parse(textOf(yield* call("ListMcpResources", { server: "everything" }))) as Array<{
        server: string
        uri: string
      }>
      expect(listed.length).toBeGreaterThan(0)
      expect(listed.every((r) => r.server === "everything")).toBe(true)
      const first = listed[0]
      expect(textOf(yield* call("ReadMcpResource", { server: "everything", uri: first.uri })).length).toBeGreaterThan(0)
      expect(yield* Effect.flip(call("ReadMcpResource", { server: "nope", uri: first.uri }))).toEqual(
        new McpFailure.UnknownMcpServer({
          server: "nope",
          message: 'No MCP server named "nope"; configured: everything'
        })
      )
      const list = yield* tool("ListMcpResources")
      expect([Tool.isDeferred(list), list.isReadOnly({})]).toEqual([true, true])
      // no sampling: without a language model the client does not offer it, so the server does not ask
      expect(Option.isNone(yield* registry.lookup("mcp__everything__trigger-sampling-request"))).toBe(true)
    }).pipe(
      Effect.provide(
        clientLayer({ everything: { command: process.execPath, args: [Path.join(pkg, bin), "stdio"], env: {} } })
      )
    )
  )

  it.live("routes elicitation to the McpElicitor, which sees the server's message and form", () =>
    Effect.gen(function* () {
      const registry = yield* ToolRegistry
      yield* waitFor(registry.lookup("mcp__everything__trigger-elicitation-request"))
      const text = textOf(yield* call("mcp__everything__trigger-elicitation-request", {}))
      expect(text).toContain("User provided the requested information")
      expect(text).toContain("- Name: Ada Lovelace")
    }).pipe(
      Effect.provide(
        clientLayer({
          everything: { command: process.execPath, args: [Path.join(pkg, bin), "stdio"], env: {} }
        }).pipe(
          Layer.provide(
            Layer.succeed(McpElicitor, {
              elicit: (request) =>
                Effect.succeed(
                  request.server === "everything" && "name" in ((request.requestedSchema.properties ?? {}) as object)
                    ? { action: "accept" as const, content: { name: "Ada Lovelace" } }
                    : { action: "cancel" as const }
                )
            })
          )
        )
      )
    )
  )
})
