/**
 * The executor: one engine fed by a stream of calls (while the model streams) or by a whole batch. Each
 * execution runs in its own scope (`Execution.ts`): one owner fiber holds the state, the pure planner
 * (`domain/Admission.ts`) decides what starts, each call runs the pipeline of `CallPipeline.ts`, and results
 * leave in request order. See docs/executor.md.
 */
import { Config, Context, Effect, Layer, Mailbox, Option, Scope, Stream } from "effect"
import { type ToolResult, toolResult } from "../../domain/Blocks.js"
import { checkBatch } from "../../domain/CallGraph.js"
import type { DependencyCycleError, InvalidInputError } from "../../domain/Errors.js"
import type { ExecutorEvent, ToolCall } from "../../domain/ExecutorEvent.js"
import * as Tool from "../../domain/Tool.js"
import * as ToolPolicy from "../../domain/ToolPolicy.js"
import { Approver } from "../../services/Approver.js"
import { CallJournal } from "../../services/CallJournal.js"
import { Hooks } from "../../services/Hooks.js"
import { PermissionPolicy } from "../../services/PermissionPolicy.js"
import { none as noResultCache, ResultCache } from "../../services/ResultCache.js"
import { ResultStore } from "../../services/ResultStore.js"
import { Session } from "../../services/Session.js"
import { Settings } from "../../services/Settings.js"
import {
  type CancellationPolicy,
  type ExecuteOptions,
  type Scheduling,
  ToolExecutor
} from "../../services/ToolExecutor.js"
import { ToolPolicies } from "../../services/ToolPolicies.js"
import { ToolRegistry } from "../../services/ToolRegistry.js"
import * as Spans from "../observability/Spans.js"
import * as CallPipeline from "./CallPipeline.js"
import * as CallPolicies from "./CallPolicies.js"
import * as Execution from "./Execution.js"

/** The executor's defaults; each can be overridden per execution. */
export interface ExecutorConfig {
  readonly maxConcurrency: number
  readonly cancellation: CancellationPolicy
  readonly scheduling: Scheduling
}

/** Checks a whole batch before anything starts: well-formed unique ids, known dependencies, no cycles. */
export const validateBatch = (
  calls: ReadonlyArray<ToolCall>
): Effect.Effect<void, InvalidInputError | DependencyCycleError> => {
  const error = checkBatch(calls)
  return error === undefined ? Effect.void : Effect.fail(error)
}

const fallback: ExecutorConfig = { maxConcurrency: 10, cancellation: "declared", scheduling: "partition" }

/** Reads the default configuration: `ARMATURE_MAX_TOOL_CONCURRENCY` or 10. */
export const defaultConfig: Effect.Effect<ExecutorConfig> = Config.integer("ARMATURE_MAX_TOOL_CONCURRENCY").pipe(
  Config.withDefault(10),
  Config.map((n): ExecutorConfig => ({ ...fallback, maxConcurrency: n > 0 ? n : 10 })),
  Effect.orElseSucceed(() => fallback)
)

/**
 * The settings' tool policies: the ToolPolicies service's, else the Settings service's `toolPolicies`, else none.
 */
const policyTable: Effect.Effect<Effect.Effect<ToolPolicy.Table>> = Effect.gen(function* () {
  const policies = yield* Effect.serviceOption(ToolPolicies)
  if (Option.isSome(policies)) return policies.value.current
  const settings = yield* Effect.serviceOption(Settings)
  return Effect.succeed(
    Option.match(settings, { onNone: () => [], onSome: (s) => ToolPolicy.tableOf(s.settings.toolPolicies) })
  )
})

/**
 * `Effect.scoped`, but the Scope closes inside the region that provides it. What FiberSet.make adds to the scope
 * restores, when it runs, the FiberRefs of the moment it was added; `Effect.scoped` closes outside that region, where
 * the context lacks the Scope, so each close diffed and patched the whole context twice (about 1.8 kB of garbage per
 * call in the bench's batches of 10, sampled). Closed where it was opened, the finalizer finds nothing to restore.
 */
const scopedInPlace = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, Scope.Scope>> =>
  Effect.flatMap(Scope.make(), (scope) =>
    effect.pipe(
      Effect.onExit((exit) => Scope.close(scope, exit)),
      Effect.provideService(Scope.Scope, scope)
    )
  )

/** Builds the executor from the pipeline's services; the tool policies' rate limiters live in the scope. */
export const make = (overrides: Partial<ExecutorConfig> = {}) =>
  Effect.gen(function* () {
    const registry = yield* ToolRegistry
    const session = yield* Session
    const config: ExecutorConfig = { ...(yield* defaultConfig), ...overrides }
    const spans = yield* Spans.ExecutorSpans
    const pipeline = CallPipeline.make({
      policy: yield* PermissionPolicy,
      approver: yield* Approver,
      hooks: yield* Hooks,
      store: yield* ResultStore,
      cache: Option.getOrElse(yield* Effect.serviceOption(ResultCache), () => noResultCache),
      session,
      spans,
      policies: yield* CallPolicies.make(yield* policyTable)
    })
    // A durable session's journal (asked for once per execution, in the context the execution runs in, which is
    // the context its calls run in) records each call's outcome by its tool_use_id and gives a stored one back on
    // replay. Without one, the calls run the pipeline as it is.
    const plain: Execution.Env = { registry, session, pipeline, spans }
    const journaled = (journal: CallJournal["Type"]): Execution.Env => ({
      ...plain,
      pipeline: {
        run: (started, links) =>
          journal.record(
            {
              toolUseId: started.call.id,
              toolName: started.tool.name,
              readOnly: Tool.safely(started.tool.isReadOnly, started.input)
            },
            pipeline.run(started, links)
          )
      }
    })
    const envNow: Effect.Effect<Execution.Env> = Effect.contextWith((context: Context.Context<never>) => {
      const journal = Context.getOption(context, CallJournal)
      return Option.isNone(journal) ? plain : journaled(journal.value)
    })

    const settings = (options: ExecuteOptions): Execution.Options => ({
      cap: Math.max(1, options.maxConcurrency ?? config.maxConcurrency),
      cancellation: options.cancellation ?? config.cancellation,
      scheduling: options.scheduling ?? config.scheduling,
      control: options.control,
      discovered: options.discovered,
      lookup: options.lookup
    })

    /** Starts an execution whose events go to a Mailbox, read as a stream (made once: see docs/executor.md). */
    const open: <E>(
      input: Execution.Input<E>,
      options: ExecuteOptions
    ) => Effect.Effect<Stream.Stream<ExecutorEvent, E | InvalidInputError | DependencyCycleError>, never, Scope.Scope> =
      Effect.fnUntraced(function* <E>(input: Execution.Input<E>, options: ExecuteOptions) {
        const mailbox = yield* Mailbox.make<ExecutorEvent, E | InvalidInputError | DependencyCycleError>()
        yield* Execution.run(yield* envNow, input, settings(options), Execution.mailboxSink(mailbox))
        return Mailbox.toStream(mailbox)
      })

    /** Every event of an execution, as a stream. */
    const events = <E>(
      input: Execution.Input<E>,
      options: ExecuteOptions
    ): Stream.Stream<ExecutorEvent, E | InvalidInputError | DependencyCycleError> =>
      Stream.unwrapScoped(open(input, options))

    const execute = <E>(calls: Stream.Stream<ToolCall, E>, options: ExecuteOptions = {}) =>
      events({ _tag: "Stream", calls }, options)

    const runBatch = (calls: ReadonlyArray<ToolCall>, options: ExecuteOptions = {}) =>
      Stream.unwrap(Effect.as(validateBatch(calls), events<never>({ _tag: "Batch", calls }, options)))

    // Only the results are wanted: no state or progress event is built, and no stream is run. One generator
    // function for every batch (fnUntraced), not an Effect.gen made per batch (about 2 µs of CPU each).
    const collect = Effect.fnUntraced(function* (calls: ReadonlyArray<ToolCall>, options: ExecuteOptions) {
      yield* validateBatch(calls)
      const results: Array<ToolResult> = []
      // the owner runs in this fiber and returns once every result is in (or the execution was discarded)
      yield* Execution.run(
        yield* envNow,
        { _tag: "Batch", calls },
        settings(options),
        {
          detailed: false,
          emit: (events) =>
            Effect.sync(() => {
              for (const e of events) {
                if (e.type === "tool_result") results.push(toolResult(e.tool_use_id, e.content, e.is_error))
              }
            }),
          end: () => Effect.void,
          discard: Effect.void
        },
        true
      )
      return results
    })
    const runBatchCollect = (calls: ReadonlyArray<ToolCall>, options: ExecuteOptions = {}) =>
      scopedInPlace(collect(calls, options))

    return ToolExecutor.of({ execute, runBatch, runBatchCollect })
  })

/** The executor as a layer, with the default configuration (or overrides). */
export const layer = (overrides: Partial<ExecutorConfig> = {}) => Layer.scoped(ToolExecutor, make(overrides))
