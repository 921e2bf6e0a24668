/**
 * Armature as a library: define a tool, build the engine with one line, run a batch.
 * Run: node --import tsx examples/library.ts   (an application writes `from "effect-armature"`)
 */
import { Effect, Schema } from "effect"
import { Armature, Tool, ToolExecutor } from "../src/index.js"

// 1. A tool: a Schema for its input, a handler, and flags. Omitted flags are fail-closed
//    (writable, not concurrency-safe, needs permission).
const Weather = Tool.make({
  name: "Weather",
  description: "Returns today's weather for a city. Use it for weather questions only.",
  input: Schema.Struct({ city: Schema.String.annotations({ description: "The city, e.g. Lisbon" }) }),
  output: Schema.String,
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  call: ({ city }) => Effect.succeed(`Sunny in ${city}`)
})

// 2. The engine: the built-in tools plus ours, Claude Code's settings and rules, hooks from the settings, large
//    results on disk, and a callback that answers "ask" (like an SDK's canUseTool). Any part can be replaced
//    with a Layer (`overrides`).
const Engine = Armature.layerNode({
  cwd: process.cwd(),
  tools: [Weather],
  allowedTools: ["Weather"],
  maxConcurrency: 4,
  approver: Armature.approveWith((name) => Effect.succeed({ behavior: "deny", message: `${name} needs a human here` }))
})

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
