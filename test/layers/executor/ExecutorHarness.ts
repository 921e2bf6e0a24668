/**
 * Test tools and layers for the executor tests: tools whose duration, failure and flags come from the input,
 * timed by Effect's Clock so TestClock gives exact virtual times.
 */
import { Clock, Duration, Effect, Layer, Ref, Schema } from "effect"
import { ToolFailure } from "../../../src/domain/Errors.js"
import type { ToolCall } from "../../../src/domain/ExecutorEvent.js"
import * as Tool from "../../../src/domain/Tool.js"
import * as StreamingExecutor from "../../../src/layers/executor/StreamingExecutor.js"
import * as ToolRegistryLive from "../../../src/layers/registry/ToolRegistryLive.js"
import * as MemoryResultStore from "../../../src/layers/results/MemoryResultStore.js"
import * as SessionLive from "../../../src/layers/session/SessionLive.js"
import * as Sleep from "../../../src/layers/tools/Sleep.js"
import * as Approver from "../../../src/services/Approver.js"
import * as Hooks from "../../../src/services/Hooks.js"
import * as PermissionPolicy from "../../../src/services/PermissionPolicy.js"
import * as ResultCache from "../../../src/services/ResultCache.js"
import * as ExecutorTest from "../../../src/testing/ExecutorTest.js"

/** The input of every test tool. */
export const TestInput = Schema.Struct({
  ms: Schema.Number,
  fail: Schema.optional(Schema.Boolean),
  die: Schema.optional(Schema.Boolean),
  output: Schema.optional(Schema.String),
  cwd: Schema.optional(Schema.String),
  path: Schema.optional(Schema.String)
})
type TestInput = typeof TestInput.Type

/** A record of what ran, when: start and end in virtual ms, and whether finalizers ran. */
export interface Trace {
  readonly id: string
  readonly start: number
  end?: number
  finalized?: boolean
}

/** A shared log of traces across the test tools. */
export class TraceLog extends Effect.Service<TraceLog>()("test/TraceLog", {
  effect: Effect.map(Ref.make<ReadonlyArray<Trace>>([]), (ref) => ({ ref }))
}) {}

const makeTestTool = (
  name: string,
  flags: Omit<Partial<Tool.Definition<TestInput, string>>, "input" | "output" | "progress">
): Effect.Effect<Tool.Any, never, TraceLog> =>
  Effect.gen(function* () {
    const log = yield* TraceLog
    return yield* Tool.make({
      name,
      description: `${name} test tool`,
      input: TestInput,
      output: Schema.String,
      summarize: (input) => input.output ?? `ms=${input.ms}`,
      resources: (input) =>
        input.path === undefined
          ? []
          : [{ key: input.path, access: name === "Read" ? ("read" as const) : ("write" as const) }],
      ...flags,
      call: (input, ctx) =>
        Effect.gen(function* () {
          const start = yield* Clock.currentTimeMillis
          const trace: Trace = { id: ctx.toolUseId, start }
          yield* Ref.update(log.ref, (all) => [...all, trace])
          yield* Effect.sleep(Duration.millis(input.ms)).pipe(
            Effect.onInterrupt(() =>
              Effect.sync(() => {
                trace.finalized = true
              })
            )
          )
          trace.end = yield* Clock.currentTimeMillis
          if (input.die) return yield* Effect.dieMessage(`${name} crashed`)
          if (input.fail) return yield* new ToolFailure({ message: `${name} failed`, stderr: "boom" })
          const out = input.output ?? `${name} done`
          return input.cwd === undefined ? out : Tool.withModifier(out, (c) => ({ ...c, cwd: `${c.cwd}/${input.cwd}` }))
        })
    }).pipe(Effect.orDie)
  })

/** Registers the test tools: Read (safe), Write (unsafe), Bash (unsafe, cascades), Cancel (safe, cancel on
 * interrupt), Block (safe, finishes on interrupt), Timed (safe, 2 s timeout). */
export const testTools = Layer.mergeAll(
  ToolRegistryLive.register(makeTestTool("Read", { isConcurrencySafe: () => true, isReadOnly: () => true })),
  ToolRegistryLive.register(makeTestTool("Write", {})),
  ToolRegistryLive.register(makeTestTool("Bash", { cancelsSiblingsOnError: true })),
  ToolRegistryLive.register(makeTestTool("Cancel", { isConcurrencySafe: () => true, interruptBehavior: "cancel" })),
  ToolRegistryLive.register(makeTestTool("Block", { isConcurrencySafe: () => true, interruptBehavior: "block" })),
  ToolRegistryLive.register(makeTestTool("Timed", { isConcurrencySafe: () => true, timeout: "2 seconds" })),
  Sleep.layer
)

/** The executor over the test tools, with pass-through permissions, no hooks and no result store (by default). */
export const executorLayer = (
  config: Partial<StreamingExecutor.ExecutorConfig> = {},
  cache: Layer.Layer<ResultCache.ResultCache> = ResultCache.disabled,
  hooks: Layer.Layer<Hooks.Hooks> = Hooks.none,
  policy: Layer.Layer<PermissionPolicy.PermissionPolicy> = PermissionPolicy.allowAll
) =>
  StreamingExecutor.layer(config).pipe(
    Layer.provideMerge(cache),
    Layer.provideMerge(testTools),
    Layer.provideMerge(ToolRegistryLive.layer),
    Layer.provideMerge(
      Layer.mergeAll(
        policy,
        Approver.headless,
        hooks,
        MemoryResultStore.layer,
        SessionLive.layer({ cwd: "/work" }),
        TraceLog.Default
      )
    )
  )

/** A tool_use block for a test tool. */
export const use = (id: string, name: string, input: Partial<TestInput> & { ms?: number } = {}): ToolCall =>
  ExecutorTest.toolUse(id, name, { ms: 0, ...input })

/** The batch runners and event readers of `effect-armature/testing`, which these tests use as an application would. */
export const runAll = ExecutorTest.run
export const runControlled = ExecutorTest.runControlled
export const results = ExecutorTest.results
export const stateAt = ExecutorTest.stateAt

/** The traces recorded by the test tools. */
export const traces = Effect.flatMap(TraceLog, (log) => log.ref.get)
