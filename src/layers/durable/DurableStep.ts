/**
 * A step of a durable session: an `@effect/workflow` activity whose value is computed in the calling fiber and
 * persisted by the workflow engine before the step returns. When the session is replayed (a resume after a crash,
 * a runner taking over), a step whose value is stored returns it without running its body again.
 *
 * The body runs in the caller's fiber, not in the engine's activity handler, so the executor's semantics stay as
 * they are: a sibling failure or a user interrupt interrupts the body like any call, and the step then persists
 * the value given for an interrupted body. See docs/durable.md.
 *
 * Which caller the engine's handler of a step serves is looked up when the handler runs, by execution and step
 * name, not fixed when the activity was made. `ClusterWorkflowEngine` keeps the activity of a step in a map of the
 * process (`activities`, keyed by execution id and step name) from the moment a caller asks for the step until its
 * result comes back, and its handler runs the activity it finds there; an execution that goes away in between (its
 * session's shard moved off this runner and back, as when one runner dies and another is cut off at once) leaves its
 * activity there, and the next execution of the session on this runner neither replaces it (`activityExecute` sets
 * an entry only when there is none) nor gets its own run. The handler then served a caller that was gone and
 * waited for it forever, and the session with it (issue 36). Now it serves whichever caller of the step is waiting
 * in this process when it runs, and waits for one if none is.
 *
 * When the execution is going away (its shard is no longer held here, or the runner stops), an interrupted body
 * persists nothing: the handler ends interrupted, which the cluster does not store while the entity shuts down, so
 * the step is done again where the session goes on, as after a crash (a call that may have run gets the crash
 * result there, a model turn is asked again).
 */
import * as EntityId from "@effect/cluster/EntityId"
import * as Sharding from "@effect/cluster/Sharding"
import * as Activity from "@effect/workflow/Activity"
import { type WorkflowEngine, WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import { Context, Deferred, Effect, Either, Exit, Fiber, FiberId, Option, Schema } from "effect"

/** What a step needs from the workflow it runs in. */
export type StepContext = WorkflowEngine | WorkflowInstance

/**
 * The stored values of an execution's steps, read at once when it starts (see `StoredSteps.layer` users): a step
 * found here returns its value without a round trip to the engine. A step not found goes through the engine as
 * before (one stored since the read, or one that has none).
 */
export class StoredSteps extends Context.Tag("armature/StoredSteps")<
  StoredSteps,
  {
    /** The encoded value stored for the step `name`, if any. */
    readonly get: (name: string) => Option.Option<unknown>
  }
>() {}

/** A stored value decoded with the step's schema (a value that does not decode is left to the engine). */
const storedValue = <A, I>(name: string, schema: Schema.Schema<A, I>) =>
  Effect.map(Effect.serviceOption(StoredSteps), (stored) =>
    Option.flatMap(stored, (steps) =>
      Option.flatMap(steps.get(name), (encoded) => Either.getRight(Schema.decodeUnknownEither(schema)(encoded)))
    )
  )

/** A caller waiting at a step: told when the engine wants its body run, and how it ended (none: leave it undone). */
export interface Slot {
  readonly started: Deferred.Deferred<void>
  readonly value: Deferred.Deferred<Option.Option<unknown>>
}

/** The caller waiting at each step (`executionId/name`) in this process. */
const slots = new Map<string, Slot>()
/** Handlers waiting for a caller of a step that has none yet, woken when one comes. */
const arrivals = new Map<string, Deferred.Deferred<void>>()

/** A caller comes to a step (`executionId/name`): the handler of the step serves it from now on. */
export const arrive = (key: string, slot: Slot): void => {
  slots.set(key, slot)
  const waiting = arrivals.get(key)
  if (waiting !== undefined) {
    arrivals.delete(key)
    Deferred.unsafeDone(waiting, Exit.void)
  }
}

/** A caller is done with a step (or gone). */
export const leave = (key: string, slot: Slot): void => {
  if (slots.get(key) === slot) slots.delete(key)
}

/** The caller of a step waiting now, or the next one to come. */
const nextSlot = (key: string): Effect.Effect<Slot> =>
  Effect.suspend(() => {
    const slot = slots.get(key)
    if (slot !== undefined) return Effect.succeed(slot)
    let waiting = arrivals.get(key)
    if (waiting === undefined) {
      waiting = Deferred.unsafeMake<void>(FiberId.none)
      arrivals.set(key, waiting)
    }
    return Effect.zipRight(Deferred.await(waiting), nextSlot(key))
  })

/**
 * Whether the execution of `executionId` is going away from this process: the runner stops, or no longer holds the
 * shard of the execution's entity. Without a sharding (an engine in memory) it never is.
 */
const leavingOf = (executionId: string) =>
  Effect.map(Effect.serviceOption(Sharding.Sharding), (sharding) =>
    Option.match(sharding, {
      onNone: () => () => false,
      onSome: (s) => {
        const shard = s.getShardId(EntityId.make(executionId), "default")
        return () => !s.hasShardId(shard)
      }
    })
  )

/**
 * What the engine's handler of a step runs: it waits for a caller of the step in this process, tells it to run its
 * body, and gives back the value (encoded). While no caller is there and the execution is leaving, it ends
 * interrupted (checked every 200 ms); so does it for a caller that left the step undone.
 */
export const serve = <A, I>(key: string, schema: Schema.Schema<A, I>, leaving: () => boolean): Effect.Effect<I> => {
  const gone: Effect.Effect<never> = Effect.suspend(() =>
    leaving() ? Effect.interrupt : Effect.zipRight(Effect.sleep("200 millis"), gone)
  )
  return Effect.raceFirst(nextSlot(key), gone).pipe(
    Effect.tap((slot) => Deferred.succeed(slot.started, undefined)),
    Effect.flatMap((slot) => Deferred.await(slot.value)),
    Effect.flatMap(
      Option.match({
        // left undone: a pause first, so that a handler the cluster starts again at once does not spin
        onNone: () => Effect.zipRight(Effect.sleep("200 millis"), Effect.interrupt),
        onSome: (value) => Effect.orDie(Schema.encode(schema)(value as A))
      })
    )
  )
}

/**
 * Runs `body` at most once for the step `name` of this workflow execution and persists its value (`interrupted`
 * when the body is interrupted, unless the execution is leaving: then nothing); a stored value is returned without
 * running `body`.
 */
export const run = <A, I>(
  name: string,
  schema: Schema.Schema<A, I>,
  body: Effect.Effect<A>,
  interrupted: () => A
): Effect.Effect<A, never, StepContext> =>
  Effect.gen(function* () {
    const known = yield* storedValue(name, schema)
    if (Option.isSome(known)) return known.value
    const instance = yield* WorkflowInstance
    const key = `${instance.executionId}/${name}`
    const leaving = yield* leavingOf(instance.executionId)
    const slot: Slot = { started: yield* Deferred.make<void>(), value: yield* Deferred.make<Option.Option<unknown>>() }
    const activity = Activity.make({ name, success: schema, execute: Effect.dieMessage(`step ${name}: not run here`) })
    // the engine's handler runs `executeEncoded` (Activity.make's retries an interrupted one and then stores a defect;
    // a step left undone must end interrupted, which the cluster does not store when the entity is shutting down)
    const served = serve(key, schema, leaving)
    Object.assign(activity, {
      executeEncoded: served,
      execute: Effect.flatMap(served, (encoded) => Effect.orDie(Schema.decode(schema)(encoded)))
    })
    return yield* Effect.gen(function* () {
      arrive(key, slot)
      // the recording outlives an interrupted caller, so that the value given for an interruption is persisted
      const recording = yield* Effect.forkDaemon(activity)
      const first = yield* Effect.raceFirst(
        Effect.map(Fiber.join(recording), Either.left),
        Effect.as(Deferred.await(slot.started), Either.right(undefined))
      )
      if (Either.isLeft(first)) return first.left
      const result = yield* Effect.onInterrupt(body, () =>
        Deferred.succeed(slot.value, leaving() ? Option.none() : Option.some(interrupted()))
      )
      yield* Deferred.succeed(slot.value, Option.some(result))
      return yield* Fiber.join(recording)
    }).pipe(Effect.ensuring(Effect.sync(() => leave(key, slot))))
  })

/** A step whose value is computed once and never changes (its body cannot be interrupted half-way). */
export const once = <A, I>(
  name: string,
  schema: Schema.Schema<A, I>,
  value: Effect.Effect<A>
): Effect.Effect<A, never, StepContext> =>
  Effect.flatMap(storedValue(name, schema), (known) =>
    Option.isSome(known) ? Effect.succeed(known.value) : Activity.make({ name, success: schema, execute: value })
  )
