/**
 * Executor benchmarks, printing one JSON object per line:
 * - overhead in batches: 6,000 no-op calls in batches of 10 through the executor (full pipeline, pass-through
 *   permissions and hooks) against Effect.forEach with concurrency 10 over each batch, as a ratio;
 * - overhead: one batch of 10,000 no-op calls, same comparison;
 *   both sides are timed alternately round by round and medians are reported (the machine may be shared);
 * - what the comparison holds: the `Effect.forEach` side runs only the tools' handler, so `ratio` is the cost of the
 *   whole way a call goes (decoding, the permission decision, hooks, result mapping and store, the tool's context)
 *   plus the executor's own work (ordering, admission, the owner, events) against the handler alone. A fourth side
 *   runs the same calls through the same pipeline (`CallPipeline`, same services and tool) under `Effect.forEach`
 *   with the same concurrency: `ratio_vs_pipeline` (and `cpu_ratio_vs_pipeline`) is the executor's own overhead
 *   over that, with the pipeline's cost on both sides;
 * - tracing overhead: the same batches (and the same 10,000-call batch) through an executor with its per-call spans
 *   on (Effect's default tracer, no exporter) against spans off, as `spans_ratio` (and `tracing-overhead`). "On"
 *   means every call here gets its three spans, all with their attributes: `execute_tool`, `armature.permission`
 *   (the decision) and `armature.tool_body`; the call's fiber runs in a context of its own whose parent span the
 *   steps switch in place (see src/layers/observability/CallSpans.ts and docs/observability.md); no hook or
 *   approval span, since no hook is configured and nothing asks;
 *   every ratio is given in wall-clock time and in CPU time (`cpu_ratio`, `spans_cpu_ratio`);
 * - streaming: virtual time (TestClock) of the seed 000 example `[Read a, Read b, Bash, Read c]` when calls start
 *   as the model streams them versus "wait for the full response, then run".
 * Run: node --import tsx bench/Executor.bench.ts
 */
import { Chunk, Effect, Fiber, Layer, Option, Schema, Stream, TestClock, TestContext } from "effect"
import type { ToolCall } from "../src/domain/ExecutorEvent.js"
import * as Tool from "../src/domain/Tool.js"
import * as CallPipeline from "../src/layers/executor/CallPipeline.js"
import * as CallPolicies from "../src/layers/executor/CallPolicies.js"
import * as StreamingExecutor from "../src/layers/executor/StreamingExecutor.js"
import * as Spans from "../src/layers/observability/Spans.js"
import * as ToolRegistryLive from "../src/layers/registry/ToolRegistryLive.js"
import * as MemoryResultStore from "../src/layers/results/MemoryResultStore.js"
import * as SessionLive from "../src/layers/session/SessionLive.js"
import * as Approver from "../src/services/Approver.js"
import * as Hooks from "../src/services/Hooks.js"
import * as PermissionPolicy from "../src/services/PermissionPolicy.js"
import { none as noResultCache } from "../src/services/ResultCache.js"
import { ResultStore } from "../src/services/ResultStore.js"
import { Session } from "../src/services/Session.js"
import { ToolExecutor } from "../src/services/ToolExecutor.js"
import { ToolRegistry } from "../src/services/ToolRegistry.js"

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

// the executor under test has its per-call spans off (the default, said explicitly); tracedExecutor has them on
const layer = StreamingExecutor.layer({ maxConcurrency: 10 }).pipe(
  Layer.provide(Spans.layerNoExecutorSpans),
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

/** Wall-clock and CPU time (this process, every thread: GC included) of one run, in milliseconds. */
const time = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    const cpu = process.cpuUsage()
    const start = performance.now()
    yield* effect
    const wall = performance.now() - start
    const used = process.cpuUsage(cpu)
    return { wall, cpu: (used.user + used.system) / 1000 }
  })

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const round2 = (x: number) => Math.round(x * 100) / 100

/**
 * Times the executor with its per-call spans off, the same executor with them on, and `Effect.forEach`, one after
 * the other in each of `rounds` rounds (in a turning order) after one warm-up of each, so that a burst of load on a
 * shared machine hits every side alike. Reports per-call medians and the median of the per-round ratios, in wall-clock time and in CPU
 * time (on a loaded machine the wall clock mostly measures waiting for a core; the CPU time does not).
 */
const compare = <E1, E2, E3, E4>(
  name: string,
  calls: number,
  rounds: number,
  viaExecutor: Effect.Effect<unknown, E1>,
  viaTracedExecutor: Effect.Effect<unknown, E2>,
  viaForEach: Effect.Effect<unknown, E3>,
  viaPipelineForEach: Effect.Effect<unknown, E4>
) =>
  Effect.gen(function* () {
    yield* viaExecutor
    yield* viaTracedExecutor
    yield* viaForEach
    yield* viaPipelineForEach
    const off: Array<{ wall: number; cpu: number }> = []
    const on: Array<{ wall: number; cpu: number }> = []
    const plain: Array<{ wall: number; cpu: number }> = []
    const piped: Array<{ wall: number; cpu: number }> = []
    const sides = [
      { run: viaExecutor as Effect.Effect<unknown, unknown>, into: off },
      { run: viaTracedExecutor as Effect.Effect<unknown, unknown>, into: on },
      { run: viaForEach as Effect.Effect<unknown, unknown>, into: plain },
      { run: viaPipelineForEach as Effect.Effect<unknown, unknown>, into: piped }
    ]
    for (let i = 0; i < rounds; i++) {
      // the order turns each round: a side that follows another pays for its garbage, so none always comes second
      for (let k = 0; k < sides.length; k++) {
        const side = sides[(i + k) % sides.length]
        side.into.push(yield* time(side.run))
      }
    }
    const perCall = (ms: number) => Math.round(((ms * 1000) / calls) * 10) / 10
    const wall = (xs: typeof off) => xs.map((x) => x.wall)
    const cpu = (xs: typeof off) => xs.map((x) => x.cpu)
    const ratio = (xs: ReadonlyArray<number>, ys: ReadonlyArray<number>) => round2(median(xs.map((x, i) => x / ys[i])))
    const ofFastest = (xs: ReadonlyArray<number>, ys: ReadonlyArray<number>) =>
      round2(Math.min(...xs) / Math.min(...ys))
    return {
      name,
      calls_per_round: calls,
      rounds,
      executor_us_per_call: perCall(median(wall(off))),
      executor_spans_on_us_per_call: perCall(median(wall(on))),
      forEach_us_per_call: perCall(median(wall(plain))),
      pipeline_forEach_us_per_call: perCall(median(wall(piped))),
      ratio: ratio(wall(off), wall(plain)),
      ratio_of_fastest: ofFastest(wall(off), wall(plain)),
      cpu_ratio: ratio(cpu(off), cpu(plain)),
      ratio_vs_pipeline: ratio(wall(off), wall(piped)),
      cpu_ratio_vs_pipeline: ratio(cpu(off), cpu(piped)),
      spans_ratio: ratio(wall(on), wall(off)),
      spans_ratio_of_fastest: ofFastest(wall(on), wall(off)),
      spans_cpu_ratio: ratio(cpu(on), cpu(off))
    }
  })

/** An executor with its per-call spans on (Effect's default tracer, no exporter); runs go under one parent span. */
const tracedExecutor = StreamingExecutor.make().pipe(Effect.provideService(Spans.ExecutorSpans, true))

/**
 * The pipeline the executor runs each call through, built from the same services (no tool policy, no result cache,
 * spans off, as in the executor under test), and the Read tool as the registry gives it: `viaPipeline` runs a call
 * as the executor's call fiber would, without the executor.
 */
const pipelineSide = Effect.gen(function* () {
  const pipeline = CallPipeline.make({
    policy: yield* PermissionPolicy.PermissionPolicy,
    approver: yield* Approver.Approver,
    hooks: yield* Hooks.Hooks,
    store: yield* ResultStore,
    cache: noResultCache,
    session: yield* Session,
    spans: false,
    policies: yield* CallPolicies.make(Effect.succeed([]))
  })
  const read = Option.getOrThrow(yield* (yield* ToolRegistry).lookup("Read"))
  const links: CallPipeline.Links = { progress: () => Effect.void, interrupted: Effect.never, ran: () => {} }
  return (c: ToolCall) => pipeline.run({ call: c, tool: read, input: c.input }, links)
})

/** One batch of 10,000 no-op calls, against Effect.forEach with concurrency 10 over the same handler. */
const overhead = Effect.gen(function* () {
  const n = 10_000
  const executor = yield* ToolExecutor
  const traced = yield* tracedExecutor
  const viaPipeline = yield* pipelineSide
  const calls = Array.from({ length: n }, (_, i) => call(`c${i}`, "Read", 0))
  return yield* compare(
    "executor-overhead (one batch of 10,000)",
    n,
    6,
    executor.runBatchCollect(calls),
    traced.runBatchCollect(calls).pipe(Effect.withSpan("bench")),
    Effect.forEach(calls, (c) => handler(c.input as { ms: number }), { concurrency: 10, discard: true }),
    Effect.forEach(calls, viaPipeline, { concurrency: 10, discard: true })
  )
})

/**
 * 6,000 no-op calls (12 rounds of 50 batches of 10), the way a model turn brings them, against Effect.forEach over each batch;
 * printed twice: as the executor's overhead, and as the cost of its per-call spans (`tracing-overhead`).
 */
const batchedOverhead = Effect.gen(function* () {
  const batches = 50
  const size = 10
  const executor = yield* ToolExecutor
  const traced = yield* tracedExecutor
  const viaPipeline = yield* pipelineSide
  const all = Array.from({ length: batches }, (_, b) =>
    Array.from({ length: size }, (_, i) => call(`b${b}c${i}`, "Read", 0))
  )
  const result = yield* compare(
    "executor-overhead-batches-of-10 (6,000 calls: 12 rounds of 50 batches)",
    batches * size,
    12,
    Effect.forEach(all, (batch) => executor.runBatchCollect(batch), { discard: true }),
    Effect.forEach(all, (batch) => traced.runBatchCollect(batch), { discard: true }).pipe(Effect.withSpan("bench")),
    Effect.forEach(
      all,
      (batch) => Effect.forEach(batch, (c) => handler(c.input as { ms: number }), { concurrency: size, discard: true }),
      { discard: true }
    ),
    Effect.forEach(all, (batch) => Effect.forEach(batch, viaPipeline, { concurrency: size, discard: true }), {
      discard: true
    })
  )
  const tracing = {
    name: "tracing-overhead (6,000 calls in batches of 10: executor spans on vs off)",
    calls_per_round: result.calls_per_round,
    rounds: result.rounds,
    spans_on_us_per_call: result.executor_spans_on_us_per_call,
    spans_off_us_per_call: result.executor_us_per_call,
    ratio: result.spans_ratio,
    ratio_of_fastest: result.spans_ratio_of_fastest,
    cpu_ratio: result.spans_cpu_ratio
  }
  return [tracing, result] as const
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
  for (const line of yield* batchedOverhead) console.log(JSON.stringify(line))
  console.log(JSON.stringify(yield* overhead))
  console.log(JSON.stringify(yield* streamingVsBatch.pipe(Effect.provide(TestContext.TestContext))))
})

Effect.runPromise(main.pipe(Effect.scoped, Effect.provide(layer)))
