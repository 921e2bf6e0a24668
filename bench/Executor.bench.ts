/**
 * Executor benchmarks, printing one JSON object per line:
 * - overhead in batches: 500 batches of 10 no-op calls through the executor against Effect.forEach with
 *   concurrency 10 over each batch, as a ratio;
 * - overhead: 10,000 no-op calls through the executor (full pipeline, pass-through permissions and hooks)
 *   against a plain Effect.forEach over the same handlers with the same concurrency, as a ratio;
 * - streaming: virtual time (TestClock) of the seed 000 example `[Read a, Read b, Bash, Read c]` when calls start
 *   as the model streams them versus "wait for the full response, then run".
 * Run: node --import tsx bench/Executor.bench.ts
 */
import { Chunk, Effect, Fiber, Layer, Schema, Stream, TestClock, TestContext } from "effect"
import type { ToolCall } from "../src/domain/ExecutorEvent.js"
import * as Tool from "../src/domain/Tool.js"
import * as StreamingExecutor from "../src/layers/executor/StreamingExecutor.js"
import * as ToolRegistryLive from "../src/layers/registry/ToolRegistryLive.js"
import * as MemoryResultStore from "../src/layers/results/MemoryResultStore.js"
import * as SessionLive from "../src/layers/session/SessionLive.js"
import * as Approver from "../src/services/Approver.js"
import * as Hooks from "../src/services/Hooks.js"
import * as PermissionPolicy from "../src/services/PermissionPolicy.js"
import { ToolExecutor } from "../src/services/ToolExecutor.js"

const Input = Schema.Struct({ ms: Schema.Number })

const handler = (input: { readonly ms: number }) =>
  input.ms === 0 ? Effect.succeed("ok") : Effect.as(Effect.sleep(input.ms), "ok")

const tool = (name: string, safe: boolean) =>
  ToolRegistryLive.register(
    Tool.make({
      name,
      description: name,
      input: Input,
      output: Schema.String,
      isConcurrencySafe: () => safe,
      isReadOnly: () => safe,
      call: handler
    })
  )

const layer = StreamingExecutor.layer({ maxConcurrency: 10 }).pipe(
  Layer.provideMerge(Layer.mergeAll(tool("Read", true), tool("Bash", false))),
  Layer.provideMerge(ToolRegistryLive.layer),
  Layer.provideMerge(
    Layer.mergeAll(
      PermissionPolicy.allowAll,
      Approver.headless,
      Hooks.none,
      MemoryResultStore.layer,
      SessionLive.layer({ cwd: process.cwd() })
    )
  )
)

const call = (id: string, name: string, ms: number): ToolCall => ({ type: "tool_use", id, name, input: { ms } })

const overhead = Effect.gen(function* () {
  const n = 10_000
  const executor = yield* ToolExecutor
  const calls = Array.from({ length: n }, (_, i) => call(`c${i}`, "Read", 0))
  const time = <A, E>(effect: Effect.Effect<A, E>) =>
    Effect.gen(function* () {
      const start = performance.now()
      yield* effect
      return performance.now() - start
    })
  // warm up both paths once
  yield* executor.runBatchCollect(calls.slice(0, 500))
  yield* Effect.forEach(calls.slice(0, 500), () => handler({ ms: 0 }), { concurrency: 10 })
  const executorMs = yield* time(executor.runBatchCollect(calls))
  const forEachMs = yield* time(
    Effect.forEach(calls, (c) => handler(c.input as { ms: number }), { concurrency: 10, discard: true })
  )
  return {
    name: "executor-overhead",
    calls: n,
    executor_ms: Math.round(executorMs),
    forEach_ms: Math.round(forEachMs),
    executor_us_per_call: Math.round((executorMs * 1000) / n),
    forEach_us_per_call: Math.round(((forEachMs * 1000) / n) * 100) / 100,
    ratio: Math.round((executorMs / forEachMs) * 10) / 10
  }
})

/** 500 batches of 10 no-op calls, the way a model turn brings them, against Effect.forEach over each batch. */
const batchedOverhead = Effect.gen(function* () {
  const batches = 500
  const size = 10
  const executor = yield* ToolExecutor
  const all = Array.from({ length: batches }, (_, b) =>
    Array.from({ length: size }, (_, i) => call(`b${b}c${i}`, "Read", 0))
  )
  const time = <A, E>(effect: Effect.Effect<A, E>) =>
    Effect.gen(function* () {
      const start = performance.now()
      yield* effect
      return performance.now() - start
    })
  const viaExecutor = Effect.forEach(all, (batch) => executor.runBatchCollect(batch), { discard: true })
  const viaForEach = Effect.forEach(
    all,
    (batch) => Effect.forEach(batch, (c) => handler(c.input as { ms: number }), { concurrency: size, discard: true }),
    { discard: true }
  )
  yield* viaExecutor
  yield* viaForEach
  const executorMs = yield* time(viaExecutor)
  const forEachMs = yield* time(viaForEach)
  const n = batches * size
  return {
    name: "executor-overhead-batches-of-10",
    calls: n,
    executor_ms: Math.round(executorMs),
    forEach_ms: Math.round(forEachMs),
    executor_us_per_call: Math.round((executorMs * 1000) / n),
    forEach_us_per_call: Math.round(((forEachMs * 1000) / n) * 100) / 100,
    ratio: Math.round((executorMs / forEachMs) * 10) / 10
  }
})

/** The seed 000 example: the model streams four calls over 2 s; running them takes 5 s as a batch. */
const seedCalls: ReadonlyArray<readonly [ToolCall, number]> = [
  [call("a", "Read", 1500), 500],
  [call("b", "Read", 1500), 1000],
  [call("bash", "Bash", 2000), 1500],
  [call("c", "Read", 1500), 2000]
]
const streamEnd = 2000

const streamingVsBatch = Effect.gen(function* () {
  const executor = yield* ToolExecutor
  const makespan = (events: Chunk.Chunk<{ readonly type: string; readonly t_ms?: number }>) =>
    Math.max(...Chunk.toReadonlyArray(events).map((e) => e.t_ms ?? 0))
  // streaming: each call enters the executor when its content block ends
  let previous = 0
  const streamed = Stream.fromIterable(seedCalls).pipe(
    Stream.mapEffect(([c, at]) => {
      const wait = at - previous
      previous = at
      return Effect.as(Effect.sleep(wait), c)
    })
  )
  const fiber = yield* Effect.fork(Stream.runCollect(executor.execute(streamed)))
  yield* TestClock.adjust("1 minute")
  const streaming = makespan(yield* Fiber.join(fiber))
  // batch: wait for the whole response, then run the same calls
  const batchFiber = yield* Effect.fork(Stream.runCollect(executor.runBatch(seedCalls.map(([c]) => c))))
  yield* TestClock.adjust("1 minute")
  const batch = streamEnd + makespan(yield* Fiber.join(batchFiber))
  return {
    name: "streaming-vs-batch (seed 000, virtual time)",
    calls: seedCalls.map(([c, at]) => `${c.name}@${at}ms for ${(c.input as { ms: number }).ms}ms`),
    model_stream_ms: streamEnd,
    wait_then_run_ms: batch,
    streaming_ms: streaming,
    speedup: Math.round((batch / streaming) * 100) / 100
  }
})

const main = Effect.gen(function* () {
  console.log(JSON.stringify(yield* batchedOverhead))
  console.log(JSON.stringify(yield* overhead))
  console.log(JSON.stringify(yield* streamingVsBatch.pipe(Effect.provide(TestContext.TestContext))))
})

Effect.runPromise(main.pipe(Effect.provide(layer)))
