import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { McpError, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { Deferred, Effect, Layer, Schema } from "effect"
import * as Tool from "../../../src/domain/Tool.js"
import * as StreamingExecutor from "../../../src/layers/executor/StreamingExecutor.js"
import * as McpServer from "../../../src/layers/mcp/McpServer.js"
import * as RulePermissionPolicy from "../../../src/layers/permissions/RulePermissionPolicy.js"
import * as ToolRegistryLive from "../../../src/layers/registry/ToolRegistryLive.js"
import * as MemoryResultStore from "../../../src/layers/results/MemoryResultStore.js"
import * as SessionLive from "../../../src/layers/session/SessionLive.js"
import * as TreeSitterShellAnalyzer from "../../../src/layers/shell/TreeSitterShellAnalyzer.js"
import * as Sleep from "../../../src/layers/tools/Sleep.js"
import * as Approver from "../../../src/services/Approver.js"
import * as Hooks from "../../../src/services/Hooks.js"
import * as Settings from "../../../src/services/Settings.js"
import { ToolRegistry } from "../../../src/services/ToolRegistry.js"

const cwd = process.cwd()

const Scribble = Tool.make({
  name: "Scribble",
  description: "Writes a note",
  input: Schema.Struct({ note: Schema.String }),
  output: Schema.String,
  isDestructive: () => true,
  call: (input) => Effect.succeed(`noted ${input.note}`)
})

const engine = (mode: "plan" | "bypassPermissions") =>
  StreamingExecutor.layer().pipe(
    Layer.provideMerge(Layer.mergeAll(Sleep.layer, ToolRegistryLive.register(Scribble))),
    Layer.provideMerge(ToolRegistryLive.layer),
    Layer.provideMerge(
      Layer.mergeAll(
        RulePermissionPolicy.layer.pipe(
          Layer.provide(
            Layer.mergeAll(
              Settings.layerStatic({ defaultMode: mode, home: cwd, projectDir: cwd }),
              TreeSitterShellAnalyzer.layer,
              NodeContext.layer
            )
          )
        ),
        Approver.headless,
        Hooks.none,
        MemoryResultStore.layer
      )
    ),
    Layer.provideMerge(SessionLive.layer({ cwd }))
  )

/** Serves the engine over an in-memory transport and connects an SDK client to it. */
const connected = Effect.gen(function* () {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  yield* Effect.forkScoped(McpServer.serve(serverSide))
  const client = new Client({ name: "test", version: "1.0.0" })
  yield* Effect.acquireRelease(
    Effect.promise(() => client.connect(clientSide)),
    () => Effect.promise(() => client.close())
  )
  return client
})

describe("McpServer", () => {
  it.live("lists the pool with annotations derived from the tools' flags", () =>
    Effect.gen(function* () {
      const client = yield* connected
      const { tools } = yield* Effect.promise(() => client.listTools())
      expect(tools.map((t) => [t.name, t.annotations])).toEqual([
        // not a built-in: nothing is known for every input, so the most cautious hints
        ["Scribble", { readOnlyHint: false, destructiveHint: true, openWorldHint: true }],
        ["Sleep", { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }]
      ])
      const sleep = yield* Effect.flatMap(ToolRegistry, (r) => r.lookup("Sleep"))
      expect(sleep._tag === "Some" && tools[1].inputSchema).toEqual(
        sleep._tag === "Some" && sleep.value.inputJsonSchema
      )
      expect(tools[1].inputSchema.required).toEqual(["duration_ms"])
    }).pipe(Effect.scoped, Effect.provide(engine("plan")))
  )

  it.live("runs calls through the executor: results, permission denials, decode errors; unknown tools are -32602", () =>
    Effect.gen(function* () {
      const client = yield* connected
      const call = (name: string, args: Record<string, unknown>) =>
        Effect.promise(() => client.callTool({ name, arguments: args }))
      expect(yield* call("Sleep", { duration_ms: 5 })).toEqual({ content: [{ type: "text", text: "Slept for 5 ms" }] })
      expect(yield* call("Scribble", { note: "x" })).toEqual({
        content: [{ type: "text", text: "<tool_use_error>Plan mode: Scribble is not read-only</tool_use_error>" }],
        isError: true
      })
      expect(yield* call("Sleep", { duration_ms: "soon" })).toEqual({
        content: [
          {
            type: "text",
            text: "<tool_use_error>InputValidationError: Sleep failed due to the following issue:\nThe parameter `duration_ms` type is expected as `number` but provided as `string`</tool_use_error>"
          }
        ],
        isError: true
      })
      const unknown = yield* Effect.flip(Effect.tryPromise(() => client.callTool({ name: "Nope", arguments: {} })))
      expect(unknown.error).toMatchObject({ code: -32602, message: "MCP error -32602: Unknown tool: Nope" })
      expect(unknown.error).toBeInstanceOf(McpError)
    }).pipe(Effect.scoped, Effect.provide(engine("plan")))
  )

  it.live("forwards progress events as notifications/progress", () =>
    Effect.gen(function* () {
      const client = yield* connected
      const progress: Array<unknown> = []
      const result = yield* Effect.promise(() =>
        client.callTool({ name: "Sleep", arguments: { duration_ms: 1100 } }, undefined, {
          onprogress: (p) => progress.push(p)
        })
      )
      expect(result).toEqual({ content: [{ type: "text", text: "Slept for 1100 ms" }] })
      expect(progress).toEqual([{ progress: 1000, total: 1100, message: '{"elapsed_ms":1000,"remaining_ms":100}' }])
    }).pipe(Effect.scoped, Effect.provide(engine("bypassPermissions")))
  )

  it.live("sends notifications/tools/list_changed when the registry changes", () =>
    Effect.gen(function* () {
      const client = yield* connected
      const changed = yield* Deferred.make<void>()
      client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
        Deferred.unsafeDone(changed, Effect.void)
      })
      const registry = yield* ToolRegistry
      yield* registry.register(
        yield* Tool.make({
          name: "Late",
          description: "Arrives late",
          input: Schema.Struct({}),
          output: Schema.String,
          call: () => Effect.succeed("late")
        })
      )
      yield* Deferred.await(changed)
      const { tools } = yield* Effect.promise(() => client.listTools())
      expect(tools.map((t) => t.name)).toEqual(["Late", "Scribble", "Sleep"])
    }).pipe(Effect.scoped, Effect.provide(engine("bypassPermissions")))
  )
})
