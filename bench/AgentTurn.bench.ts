/**
 * End-to-end latency of an agent turn with streaming execution (tools start at their content_block_stop) versus
 * execution after the full response, on the scripted Messages server with token pacing: the model streams a short
 * preamble and three tool calls to Sleep-like tools, then a final answer. Two scenarios: concurrency-safe tools
 * whose first call is the long one (a test run, then two quick reads), and three non-concurrency-safe calls that
 * must run one after the other. Prints one JSON object.
 *
 * Run: `node --import tsx bench/AgentTurn.bench.ts` (env: BENCH_PACING_MS, default 15; BENCH_RUNS, default 3).
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { NodeContext } from "@effect/platform-node"
import { Duration, Effect, Layer, Schema } from "effect"
import * as Tool from "../src/domain/Tool.js"
import * as AgentLoop from "../src/layers/agent/AgentLoop.js"
import * as TranscriptLive from "../src/layers/agent/TranscriptLive.js"
import * as StreamingExecutor from "../src/layers/executor/StreamingExecutor.js"
import * as AnthropicLanguageModel from "../src/layers/model/AnthropicLanguageModel.js"
import * as ToolRegistryLive from "../src/layers/registry/ToolRegistryLive.js"
import * as MemoryResultStore from "../src/layers/results/MemoryResultStore.js"
import * as SessionLive from "../src/layers/session/SessionLive.js"
import * as Approver from "../src/services/Approver.js"
import * as Hooks from "../src/services/Hooks.js"
import * as PermissionPolicy from "../src/services/PermissionPolicy.js"
import * as MessagesServer from "../test/fixtures/MessagesServer.js"

const pacingMs = Number(process.env.BENCH_PACING_MS ?? 15)
const runs = Math.max(1, Number(process.env.BENCH_RUNS ?? 3))

/** One bench scenario: the tool durations in call order, and whether the tool is concurrency-safe. */
interface Scenario {
  readonly name: string
  readonly toolMs: ReadonlyArray<number>
  readonly safe: boolean
}

const scenarios: ReadonlyArray<Scenario> = [
  { name: "parallel-safe", toolMs: [1000, 300, 300], safe: true },
  { name: "serial-unsafe", toolMs: [400, 400, 400], safe: false }
]

/** A Sleep-like tool that waits `ms` of real time. */
const wait = (safe: boolean) =>
  Tool.make({
    name: "Wait",
    description: "Waits for ms milliseconds.",
    input: Schema.Struct({ ms: Schema.Number, note: Schema.String }),
    output: Schema.String,
    isReadOnly: () => safe,
    isConcurrencySafe: () => safe,
    call: (input) => Effect.as(Effect.sleep(Duration.millis(input.ms)), `waited ${input.ms} ms`)
  })

const note = "checking the next part of the repository before deciding what to change"

/** One turn with tools and a final answer; about 4 characters per token, one delta per `pacingMs`. */
const script = (scenario: Scenario): ReadonlyArray<MessagesServer.Reply> => [
  MessagesServer.message(
    [
      { type: "text", text: "I will look at three things in parallel, one after the other as I think of them." },
      ...scenario.toolMs.map((ms, i) => ({
        type: "tool_use" as const,
        id: `toolu_${i}`,
        name: "Wait",
        input: { ms, note: `${note} (${i})` }
      }))
    ],
    { pacingMs, chunk: 4 }
  ),
  MessagesServer.message([{ type: "text", text: "All three checks are done." }], { pacingMs, chunk: 4 })
]

const once = (scenario: Scenario, execution: AgentLoop.ExecutionMode) =>
  Effect.gen(function* () {
    const server = yield* MessagesServer.make(script(scenario))
    const stateDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-bench-"))
    const layer = Layer.mergeAll(
      StreamingExecutor.layer(),
      TranscriptLive.layer,
      AnthropicLanguageModel.layer({ apiKey: "bench", baseURL: server.url })
    ).pipe(
      Layer.provideMerge(ToolRegistryLive.register(wait(scenario.safe))),
      Layer.provideMerge(ToolRegistryLive.layer),
      Layer.provideMerge(
        Layer.mergeAll(PermissionPolicy.allowAll, Approver.headless, Hooks.none, MemoryResultStore.layer)
      ),
      Layer.provideMerge(SessionLive.layer({ cwd: stateDir, stateDir })),
      Layer.provideMerge(NodeContext.layer)
    )
    const started = Date.now()
    const result = yield* AgentLoop.run({ prompt: "check three things", execution }).pipe(Effect.provide(layer))
    const wall = Date.now() - started
    Fs.rmSync(stateDir, { recursive: true, force: true })
    if (result.subtype !== "success") return yield* Effect.dieMessage(`run ended with ${result.subtype}`)
    const firstStream = server.messageStops[0] - server.requests[0].at
    return { wall, firstStream }
  }).pipe(Effect.scoped)

const median = (xs: ReadonlyArray<number>): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

const measure = (scenario: Scenario) =>
  Effect.gen(function* () {
    const streaming: Array<number> = []
    const after: Array<number> = []
    let stream = 0
    for (let i = 0; i < runs; i++) {
      const s = yield* once(scenario, "streaming")
      const a = yield* once(scenario, "after-message")
      streaming.push(s.wall)
      after.push(a.wall)
      stream = s.firstStream
    }
    const streamingMs = median(streaming)
    const afterMs = median(after)
    return {
      scenario: scenario.name,
      tool_ms: scenario.toolMs,
      concurrency_safe: scenario.safe,
      first_response_stream_ms: stream,
      streaming_ms: streamingMs,
      after_message_ms: afterMs,
      ratio: Number((afterMs / streamingMs).toFixed(3)),
      saved_ms: afterMs - streamingMs,
      samples: { streaming, after_message: after }
    }
  })

const program = Effect.gen(function* () {
  yield* once(scenarios[0], "streaming") // warm-up: module loading, first connection
  const results = yield* Effect.forEach(scenarios, measure)
  return { bench: "AgentTurn", pacing_ms: pacingMs, runs, scenarios: results }
})

Effect.runPromise(program).then(
  (report) => {
    process.stdout.write(`${JSON.stringify(report)}\n`)
  },
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`)
    process.exitCode = 1
  }
)
