/**
 * The cost of durability per tool call: one agent turn whose model message asks for N calls of a tool that returns
 * at once, then a final answer, run in memory (the plain agent loop), as a durable session in SQLite, and as a
 * durable session in PostgreSQL (a fresh database on ARMATURE_TEST_DATABASE_URL, default
 * postgres://postgres@127.0.0.1:5432/test). Each is run with a few calls and with many; the difference of the two
 * times divided by the difference of the counts is the time per call, which leaves out the fixed costs (engine
 * start, the model's two responses). Calls change things (not read-only), so they run one after the other and each
 * waits for its turn's message to be stored. Prints one JSON object.
 *
 * Run: `node --import tsx bench/Durable.bench.ts` (env: BENCH_RUNS, default 3; BENCH_CALLS, default 40).
 */
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer, Schema } from "effect"
import * as Tool from "../src/domain/Tool.js"
import * as AgentLoop from "../src/layers/agent/AgentLoop.js"
import * as TranscriptLive from "../src/layers/agent/TranscriptLive.js"
import * as DurableSession from "../src/layers/durable/DurableSession.js"
import * as DurableStore from "../src/layers/durable/DurableStore.js"
import * as StreamingExecutor from "../src/layers/executor/StreamingExecutor.js"
import * as AnthropicLanguageModel from "../src/layers/model/AnthropicLanguageModel.js"
import * as ToolRegistryLive from "../src/layers/registry/ToolRegistryLive.js"
import * as MemoryResultStore from "../src/layers/results/MemoryResultStore.js"
import * as SessionLive from "../src/layers/session/SessionLive.js"
import * as Approver from "../src/services/Approver.js"
import * as Hooks from "../src/services/Hooks.js"
import * as PermissionPolicy from "../src/services/PermissionPolicy.js"
import * as MessagesServer from "../test/fixtures/MessagesServer.js"
import * as Postgres from "../test/fixtures/Postgres.js"

const runs = Math.max(1, Number(process.env.BENCH_RUNS ?? 3))
const many = Math.max(2, Number(process.env.BENCH_CALLS ?? 40))
const few = 2

const touch = Tool.make({
  name: "Touch",
  description: "Returns at once.",
  input: Schema.Struct({ n: Schema.Number }),
  output: Schema.String,
  isReadOnly: () => false,
  isConcurrencySafe: () => false,
  call: (input) => Effect.succeed(`touched ${input.n}`)
})

const script = (calls: number): ReadonlyArray<MessagesServer.Reply> => [
  MessagesServer.message(
    Array.from({ length: calls }, (_, i) => ({
      type: "tool_use" as const,
      id: `toolu_${i}`,
      name: "Touch",
      input: { n: i }
    })),
    { pacingMs: 0, chunk: 64 }
  ),
  MessagesServer.message([{ type: "text", text: "Done." }], { pacingMs: 0 })
]

type Store = "memory" | DurableStore.Location

/** One session of `calls` calls; its wall time in ms. */
const once = (calls: number, store: Store) =>
  Effect.gen(function* () {
    const server = yield* MessagesServer.make(script(calls))
    const stateDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-bench-durable-"))
    const engine = Layer.mergeAll(
      StreamingExecutor.layer(),
      TranscriptLive.none,
      AnthropicLanguageModel.layer({ apiKey: "bench", baseURL: server.url })
    ).pipe(
      Layer.provideMerge(ToolRegistryLive.register(touch)),
      Layer.provideMerge(ToolRegistryLive.layer),
      Layer.provideMerge(
        Layer.mergeAll(PermissionPolicy.allowAll, Approver.headless, Hooks.none, MemoryResultStore.layer)
      ),
      Layer.provideMerge(SessionLive.layer({ cwd: stateDir, stateDir })),
      Layer.provideMerge(NodeContext.layer)
    )
    const loop = AgentLoop.run({ prompt: "touch them all" })
    const started = Date.now()
    const result =
      store === "memory"
        ? yield* loop.pipe(Effect.provide(engine))
        : yield* DurableSession.SessionWorkflow.execute({ sessionId: Crypto.randomUUID() }).pipe(
            Effect.provide(
              DurableSession.layer(() => loop.pipe(DurableSession.durably(), Effect.provide(engine))).pipe(
                Layer.provideMerge(DurableStore.engineLayer(store)),
                Layer.provideMerge(DurableStore.sqlLayer(store))
              )
            ),
            Effect.map((r) => r as AgentLoop.RunResult)
          )
    const wall = Date.now() - started
    Fs.rmSync(stateDir, { recursive: true, force: true })
    if (result.subtype !== "success") return yield* Effect.dieMessage(`run ended with ${result.subtype}`)
    return wall
  }).pipe(Effect.scoped)

const median = (xs: ReadonlyArray<number>): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** The time per call of a store: (median time with many calls − median with few) / (many − few). */
const perCall = (store: () => Store) =>
  Effect.gen(function* () {
    const fewMs: Array<number> = []
    const manyMs: Array<number> = []
    for (let i = 0; i < runs; i++) {
      fewMs.push(yield* once(few, store()))
      manyMs.push(yield* once(many, store()))
    }
    const ms = (median(manyMs) - median(fewMs)) / (many - few)
    return { per_call_ms: Number(ms.toFixed(3)), few_ms: fewMs, many_ms: manyMs }
  })

const program = Effect.gen(function* () {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-bench-sqlite-"))
  const sqlite = (): Store => ({ _tag: "Sqlite", file: Path.join(dir, `${Crypto.randomUUID()}.db`) })
  const url = yield* Postgres.freshDatabase("armature_bench_durable")
  const postgres = (): Store => ({ _tag: "Postgres", url })
  yield* once(few, "memory") // warm-up: module loading, first connection
  yield* once(few, sqlite())
  yield* once(few, postgres())
  const memory = yield* perCall(() => "memory")
  const sqliteResult = yield* perCall(sqlite)
  const postgresResult = yield* perCall(postgres)
  Fs.rmSync(dir, { recursive: true, force: true })
  return {
    bench: "Durable",
    calls: [few, many],
    runs,
    load: Os.loadavg()[0],
    memory,
    sqlite: {
      ...sqliteResult,
      overhead_per_call_ms: Number((sqliteResult.per_call_ms - memory.per_call_ms).toFixed(3))
    },
    postgres: {
      ...postgresResult,
      overhead_per_call_ms: Number((postgresResult.per_call_ms - memory.per_call_ms).toFixed(3))
    }
  }
}).pipe(Effect.scoped)

Effect.runPromise(program).then(
  (report) => {
    process.stdout.write(`${JSON.stringify(report)}\n`)
  },
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`)
    process.exitCode = 1
  }
)
