/**
 * The executor's port: one engine, fed by a stream (while the model streams) or a whole batch. See docs/executor.md.
 */
import { Context, Deferred, Effect, type Option, type Stream } from "effect"
import type * as Admission from "../domain/Admission.js"
import type { ToolResult } from "../domain/Blocks.js"
import type { DependencyCycleError, InvalidInputError } from "../domain/Errors.js"
import type * as ExecutionStep from "../domain/ExecutionStep.js"
import type { ExecutorEvent, ToolCall } from "../domain/ExecutorEvent.js"
import type * as Tool from "../domain/Tool.js"

/** Which failures cancel the other calls of the batch (see ExecutionStep.CancellationPolicy). */
export type CancellationPolicy = ExecutionStep.CancellationPolicy

/** How calls are admitted: by concurrency-safety partitions, or by conflicting resources. */
export type Scheduling = Admission.Scheduling

/** A handle to interrupt, abort or discard a running execution from outside. */
export interface Control {
  /** The user interrupt: cancels `"cancel"` calls; `"block"` calls finish. */
  readonly interrupt: Effect.Effect<void>
  /** The hard abort: cancels every call. */
  readonly abort: Effect.Effect<void>
  /** Discards the batch: nothing more is yielded, queued calls never start, running calls are interrupted. */
  readonly discard: Effect.Effect<void>
  readonly interrupted: Deferred.Deferred<void>
  readonly aborted: Deferred.Deferred<void>
  readonly discarded: Deferred.Deferred<void>
}

/** Makes a control handle. */
export const makeControl: Effect.Effect<Control> = Effect.gen(function* () {
  const interrupted = yield* Deferred.make<void>()
  const aborted = yield* Deferred.make<void>()
  const discarded = yield* Deferred.make<void>()
  return {
    interrupt: Deferred.succeed(interrupted, undefined).pipe(Effect.asVoid),
    abort: Effect.all([Deferred.succeed(interrupted, undefined), Deferred.succeed(aborted, undefined)]).pipe(
      Effect.asVoid
    ),
    discard: Deferred.succeed(discarded, undefined).pipe(Effect.asVoid),
    interrupted,
    aborted,
    discarded
  }
})

/** Per-execution options; omitted ones come from the executor's configuration. */
export interface ExecuteOptions {
  readonly maxConcurrency?: number | undefined
  readonly cancellation?: CancellationPolicy | undefined
  readonly scheduling?: Scheduling | undefined
  readonly control?: Control | undefined
  /** Names of deferred tools the model has discovered (their full schema was sent to the model). */
  readonly discovered?: ReadonlySet<string> | undefined
  /**
   * Finds the tool of a call, instead of the registry: an agent loop offers tools the registry does not hold (Agent)
   * and a sub-agent only its own tools (a name it was not given is an unknown tool).
   */
  readonly lookup?: ((name: string) => Effect.Effect<Option.Option<Tool.Any>>) | undefined
}

/** The port. */
export class ToolExecutor extends Context.Tag("armature/ToolExecutor")<
  ToolExecutor,
  {
    /** Starts calls as they arrive; emits state, progress and (in request order) result events. */
    readonly execute: <E>(
      calls: Stream.Stream<ToolCall, E>,
      options?: ExecuteOptions
    ) => Stream.Stream<ExecutorEvent, E | InvalidInputError | DependencyCycleError>
    /** The same engine fed a whole batch at once. */
    readonly runBatch: (
      calls: ReadonlyArray<ToolCall>,
      options?: ExecuteOptions
    ) => Stream.Stream<ExecutorEvent, InvalidInputError | DependencyCycleError>
    /** Runs a batch and collects its results in request order. */
    readonly runBatchCollect: (
      calls: ReadonlyArray<ToolCall>,
      options?: ExecuteOptions
    ) => Effect.Effect<ReadonlyArray<ToolResult>, InvalidInputError | DependencyCycleError>
  }
>() {}
