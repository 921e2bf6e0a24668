/**
 * Armature as a library: define a tool, compose the engine from layers, run a batch.
 * Run: node --import tsx examples/library.ts
 */
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer, Schema } from "effect"
import {
  BuiltinTools,
  CallbackApprover,
  FsResultStore,
  HooksLive,
  RulePermissionPolicy,
  SessionLive,
  SettingsLoader,
  StreamingExecutor,
  Tool,
  ToolExecutor,
  ToolRegistryLive,
  TreeSitterShellAnalyzer
} from "../src/index.js"

// 1. A tool: a Schema for its input, a handler, and flags. Omitted flags are fail-closed
//    (writable, not concurrency-safe, needs permission).
const Weather = ToolRegistryLive.register(
  Tool.make({
    name: "Weather",
    description: "Returns today's weather for a city. Use it for weather questions only.",
    input: Schema.Struct({ city: Schema.String.annotations({ description: "The city, e.g. Lisbon" }) }),
    output: Schema.String,
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    call: ({ city }) => Effect.succeed(`Sunny in ${city}`)
  })
)

// 2. The engine: every stage is a layer you can swap — settings and rules, the policy, hooks, who answers
//    "ask" (here a callback, like an SDK's canUseTool), where large results go, and the tools.
const cwd = process.cwd()
const Engine = StreamingExecutor.layer({ maxConcurrency: 4 }).pipe(
  Layer.provideMerge(Layer.mergeAll(Weather, BuiltinTools.layer)),
  Layer.provideMerge(ToolRegistryLive.layer),
  Layer.provideMerge(
    Layer.mergeAll(
      RulePermissionPolicy.layer,
      CallbackApprover.layer((name) =>
        Effect.succeed({ behavior: "deny" as const, message: `${name} needs a human here` })
      ),
      HooksLive.layerFromSession({ config: {} }),
      FsResultStore.layer
    )
  ),
  Layer.provideMerge(SettingsLoader.layer({ projectDir: cwd, allowedTools: ["Weather"] })),
  Layer.provideMerge(Layer.mergeAll(SessionLive.layer({ cwd }), TreeSitterShellAnalyzer.layer, NodeContext.layer))
)

// 3. Feed tool_use blocks (from a model stream, or all at once) and read results in request order.
export const program = Effect.gen(function* () {
  const executor = yield* ToolExecutor.ToolExecutor
  return yield* executor.runBatchCollect([
    { type: "tool_use", id: "w1", name: "Weather", input: { city: "Lisbon" } },
    { type: "tool_use", id: "g1", name: "Glob", input: { pattern: "examples/*.ts" } },
    { type: "tool_use", id: "b1", name: "Bash", input: { command: "rm -rf build" } }
  ])
}).pipe(Effect.provide(Engine))

if (import.meta.url === `file://${process.argv[1]}`) {
  Effect.runPromise(program).then((results) => console.log(JSON.stringify(results, null, 2)))
}
