/**
 * Runs batches of tool calls through the engine's executor under `TestClock`, for tests of tools as the engine runs
 * them (permissions, hooks, admission, ordering, cancellation): every delay and timeout happens at a virtual time
 * the test chooses, and the events come back with those times. Use it with `TestEngine.layer` (the preset) or any
 * layer that provides a `ToolExecutor` and `TestContext`.
 */
import { Chunk, type Duration, Effect, Fiber, Stream, TestClock } from "effect"
import type { ExecutorEvent, ResultEvent, StateEvent, ToolCall } from "../domain/ExecutorEvent.js"
import { type Control, type ExecuteOptions, makeControl, ToolExecutor } from "../services/ToolExecutor.js"

/** A `tool_use` block. */
export const toolUse = (id: string, name: string, input: unknown = {}): ToolCall => ({
  type: "tool_use",
  id,
  name,
  input
})

/** Runs a batch to its end, moving the virtual clock by `advance` (default one hour), and returns every event. */
export const run = Effect.fn("ExecutorTest.run")(function* (
  calls: ReadonlyArray<ToolCall>,
  options?: ExecuteOptions,
  advance: Duration.DurationInput = "1 hour"
) {
  const executor = yield* ToolExecutor
  const fiber = yield* Effect.fork(Stream.runCollect(executor.runBatch(calls, options)))
  yield* TestClock.adjust(advance)
  return Chunk.toReadonlyArray(yield* Fiber.join(fiber))
})

/**
 * Runs a batch, acts on its control handle at virtual time `at` (default one second) — `control.interrupt`,
 * `control.abort` or `control.discard` — then lets it finish and returns every event.
 */
export const runControlled = Effect.fn("ExecutorTest.runControlled")(function* (
  calls: ReadonlyArray<ToolCall>,
  act: (control: Control) => Effect.Effect<void>,
  at: Duration.DurationInput = "1 second"
) {
  const executor = yield* ToolExecutor
  const control = yield* makeControl
  const fiber = yield* Effect.fork(Stream.runCollect(executor.runBatch(calls, { control })))
  yield* TestClock.adjust(at)
  yield* act(control)
  yield* TestClock.adjust("1 hour")
  return Chunk.toReadonlyArray(yield* Fiber.join(fiber))
})

/** The result events, in the order they were yielded (the request order). */
export const results = (events: ReadonlyArray<ExecutorEvent>): ReadonlyArray<ResultEvent> =>
  events.filter((e): e is ResultEvent => e.type === "tool_result")

/** The virtual time (ms since the batch started) a call entered a state, if it did. */
export const stateAt = (
  events: ReadonlyArray<ExecutorEvent>,
  id: string,
  state: StateEvent["state"]
): number | undefined =>
  events.find((e): e is StateEvent => e.type === "state" && e.tool_use_id === id && e.state === state)?.t_ms
