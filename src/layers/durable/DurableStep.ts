/**
 * A step of a durable session: an `@effect/workflow` activity whose value is computed in the calling fiber and
 * persisted by the workflow engine before the step returns. When the session is replayed (a resume after a crash,
 * a runner taking over), a step whose value is stored returns it without running its body again.
 *
 * The body runs in the caller's fiber, not in the engine's activity handler, so the executor's semantics stay as
 * they are: a sibling failure or a user interrupt interrupts the body like any call, and the step then persists
 * the value given for an interrupted body. See docs/durable.md.
 */
import * as Activity from "@effect/workflow/Activity"
import type { WorkflowEngine, WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import { Deferred, Effect, Either, Fiber, type Schema } from "effect"

/** What a step needs from the workflow it runs in. */
export type StepContext = WorkflowEngine | WorkflowInstance

/**
 * Runs `body` at most once for the step `name` of this workflow execution and persists its value (`interrupted`
 * when the body is interrupted); a stored value is returned without running `body`.
 */
export const run = <A, I>(
  name: string,
  schema: Schema.Schema<A, I>,
  body: Effect.Effect<A>,
  interrupted: () => A
): Effect.Effect<A, never, StepContext> =>
  Effect.gen(function* () {
    const started = yield* Deferred.make<void>()
    const value = yield* Deferred.make<A>()
    const activity = Activity.make({
      name,
      success: schema,
      // called by the engine only when no value is stored: the caller is told to run the body, and its value kept
      execute: Effect.zipRight(Deferred.succeed(started, undefined), Deferred.await(value))
    })
    // the recording outlives an interrupted caller, so that the value given for an interruption is persisted
    const recording = yield* Effect.forkDaemon(activity)
    const first = yield* Effect.raceFirst(
      Effect.map(Fiber.join(recording), Either.left),
      Effect.as(Deferred.await(started), Either.right(undefined))
    )
    if (Either.isLeft(first)) return first.left
    const result = yield* Effect.onInterrupt(body, () => Deferred.succeed(value, interrupted()))
    yield* Deferred.succeed(value, result)
    return yield* Fiber.join(recording)
  })

/** A step whose value is computed once and never changes (its body cannot be interrupted half-way). */
export const once = <A, I>(
  name: string,
  schema: Schema.Schema<A, I>,
  value: Effect.Effect<A>
): Effect.Effect<A, never, StepContext> => Activity.make({ name, success: schema, execute: value })
