/**
 * One model turn: the model's message is streamed, each tool_use block is handed to a fresh executor the moment it
 * completes (or, in `after-message` mode, once the message is whole), and the results are collected and reported.
 *
 * A stream that fails mid-way is retried with the policy of the run: the failed attempt's executor is discarded
 * (running calls are interrupted, nothing more is yielded), what it already yielded is kept in the salvage, and the
 * whole message is requested again. See docs/architecture.md.
 */
import { Deferred, Effect, Fiber, Mailbox, Option, Schedule, Stream } from "effect"
import type { ToolResult, ToolUse } from "../../domain/Blocks.js"
import { toToolResult } from "../../domain/ExecutorEvent.js"
import {
  type AssistantContent,
  emptyUsage,
  type ModelError,
  type ModelRequest,
  retrySchedule,
  type StopReason,
  type Usage
} from "../../services/LanguageModel.js"
import { type Control, makeControl } from "../../services/ToolExecutor.js"
import type { TranscriptError } from "../../services/Transcript.js"
import * as Metrics from "../observability/Metrics.js"
import * as Spans from "../observability/Spans.js"
import { resultEvent } from "./AgentEvent.js"
import type { RunContext } from "./RunContext.js"
import * as Salvage from "./Salvage.js"

/** What one attempt at a model turn produced. */
export interface TurnOutcome {
  readonly content: ReadonlyArray<AssistantContent>
  readonly stopReason: StopReason | null
  readonly usage: Usage
  readonly results: ReadonlyMap<string, ToolResult>
  /** The ids whose results were already reported (as `user` events) during the attempt. */
  readonly reported: ReadonlySet<string>
  readonly stopAfterBatch: Option.Option<string>
}

/** A turn's outcome and the transcript error of recording its assistant message, if any. */
export interface Turn {
  readonly outcome: TurnOutcome
  readonly transcriptError: Option.Option<TranscriptError>
}

/**
 * Reports results as they are yielded, but never before the assistant message that asked for them: until the
 * model's message is complete (and announced), they are held. One permit orders the two. When each block is
 * reported as it completes (`perBlock`), a result always follows its tool_use block's event, and nothing is held.
 */
const makeReporter = (run: RunContext, perBlock: boolean) =>
  Effect.map(Effect.makeSemaphore(1), (reporting) => {
    const reported = new Set<string>()
    const held: Array<ToolResult> = []
    let announced = perBlock
    const reportNow = (result: ToolResult) =>
      Effect.suspend(() => {
        reported.add(result.tool_use_id)
        return run.onEvent(resultEvent(run.session.id, result))
      })
    return {
      reported: reported as ReadonlySet<string>,
      report: (result: ToolResult) =>
        reporting.withPermits(1)(
          Effect.suspend(() => {
            if (announced) return reportNow(result)
            held.push(result)
            return Effect.void
          })
        ),
      /** Runs `announce` (recording the message), then reports the results held so far. */
      announce: <A, E>(announce: Effect.Effect<A, E>) =>
        reporting.withPermits(1)(
          Effect.gen(function* () {
            const value = yield* announce
            announced = true
            for (const result of held.splice(0)) yield* reportNow(result)
            return value
          })
        )
    }
  })

/** The executor of one attempt, fed from a mailbox; its results are recorded in the maps and reported. */
const startExecutor = (
  run: RunContext,
  control: Control,
  discovered: ReadonlySet<string>,
  report: (result: ToolResult) => Effect.Effect<void>
) =>
  Effect.gen(function* () {
    const calls = yield* Mailbox.make<ToolUse>()
    const results = new Map<string, ToolResult>()
    const yielded = new Map<string, ToolResult>()
    const state = { stopAfterBatch: Option.none<string>() }
    const fiber = yield* run.executor
      .execute(Mailbox.toStream(calls), { control, discovered, lookup: run.lookup })
      .pipe(
        Stream.runForEach((event) =>
          Effect.zipRight(
            Effect.sync(() => {
              if (event.type !== "tool_result") return
              const result = toToolResult(event)
              results.set(event.tool_use_id, result)
              yielded.set(event.tool_use_id, result)
              if (event.continue === false && Option.isNone(state.stopAfterBatch)) {
                state.stopAfterBatch = Option.some(event.stopReason ?? "A hook stopped the turn")
              }
            }),
            Effect.zipRight(
              run.onExecutorEvent(event),
              event.type === "tool_result" ? report(toToolResult(event)) : Effect.void
            )
          )
        ),
        Effect.orDie,
        Effect.forkScoped
      )
    return { calls, results, yielded, state, fiber }
  })

/** One attempt at a model turn, with its own executor. */
const attempt = (run: RunContext, salvage: Salvage.Salvage, request: ModelRequest, discovered: ReadonlySet<string>) =>
  Effect.gen(function* () {
    const control = yield* makeControl
    yield* Effect.forkScoped(Effect.zipRight(Deferred.await(run.interrupted), control.interrupt))
    yield* Effect.forkScoped(Effect.zipRight(Deferred.await(run.aborted), control.abort))
    const perBlock = run.options.assistantEvents === "block"
    const reporter = yield* makeReporter(run, perBlock)
    const executor = yield* startExecutor(run, control, discovered, reporter.report)
    const callsById = new Map<string, ToolUse>()
    const blocks = new Map<number, AssistantContent>()
    const pending: Array<ToolUse> = []
    let stopReason: StopReason | null = null
    let turnUsage = emptyUsage
    let messageId = ""
    // `assistantEvents: "block"`: the block as an assistant event of its own, reported before its call is fed
    const reportBlock = (block: AssistantContent) =>
      perBlock
        ? run.onEvent({
            type: "assistant",
            session_id: run.session.id,
            message: {
              id: messageId,
              role: "assistant",
              content: [block],
              model: run.modelName,
              stop_reason: null,
              usage: turnUsage
            }
          })
        : Effect.void
    const feed = (call: ToolUse) =>
      Effect.suspend(() => {
        callsById.set(call.id, call)
        const reused = Salvage.take(salvage, call)
        if (reused !== undefined) {
          executor.results.set(call.id, reused)
          return reporter.report(reused)
        }
        if (run.execution === "after-message") {
          pending.push(call)
          return Effect.void
        }
        return Effect.asVoid(executor.calls.offer(call))
      })
    const streamed = yield* Spans.spanWith(
      Spans.names.chat(run.modelName),
      Spans.chatAttributes(run.modelName),
      (span) =>
        run.model.stream(request).pipe(
          Stream.interruptWhen(Deferred.await(run.interrupted)),
          Stream.runForEach((event) => {
            const act = run.onModelEvent(event)
            switch (event.type) {
              case "message_start":
                turnUsage = event.usage
                messageId = event.id
                return act
              case "content_block": {
                blocks.set(event.index, event.block)
                const reported = Effect.zipRight(act, reportBlock(event.block))
                return event.block.type === "tool_use"
                  ? Effect.zipRight(reported, feed(event.block as ToolUse))
                  : reported
              }
              case "message_delta":
                stopReason = event.stopReason
                turnUsage = event.usage
                return act
              default:
                return act
            }
          }),
          Effect.tap(() => {
            Spans.annotateUsage(span, turnUsage, stopReason)
            return Metrics.recordUsage(run.modelName, turnUsage)
          }),
          Effect.either
        )
    )
    if (streamed._tag === "Left") {
      // The stream broke: discard this executor; keep what it already yielded for the retry.
      yield* control.discard
      yield* Fiber.interrupt(executor.fiber)
      Salvage.keep(salvage, { yielded: executor.yielded, results: executor.results, callsById })
      return yield* Effect.fail(streamed.left)
    }
    // The message is complete: it is recorded and reported now, before its tools finish, then the results
    // held so far follow it.
    const content = [...blocks.entries()].sort(([a], [b]) => a - b).map(([, block]) => block)
    const transcriptError = yield* reporter.announce(
      // An interrupt may stop the stream before any block completed: an empty message is not recorded.
      content.length === 0
        ? Effect.succeed(Option.none<TranscriptError>())
        : run
            .record(
              {
                type: "assistant",
                session_id: run.session.id,
                message: { role: "assistant", content, model: run.modelName, stop_reason: stopReason, usage: turnUsage }
              },
              // reported already, block by block
              !perBlock
            )
            .pipe(Effect.flip, Effect.option)
    )
    for (const call of pending) yield* executor.calls.offer(call)
    yield* executor.calls.end
    yield* Fiber.join(executor.fiber)
    const outcome: TurnOutcome = {
      content,
      stopReason,
      usage: turnUsage,
      results: executor.results,
      reported: reporter.reported,
      stopAfterBatch: executor.state.stopAfterBatch
    }
    return { outcome, transcriptError } satisfies Turn
  }).pipe(Effect.scoped)

/** A model turn, its stream retried (each retry reported as a `retry` event) while it fails mid-way. */
export const turn = (
  run: RunContext,
  salvage: Salvage.Salvage,
  request: ModelRequest,
  discovered: ReadonlySet<string>
) => {
  let attempts = 0
  return Effect.suspend(() => {
    attempts++
    return attempt(run, salvage, request, discovered)
  }).pipe(
    Effect.tapError((error: ModelError) =>
      error.phase === "stream" && error.retryable
        ? run.onEvent({
            type: "system",
            subtype: "retry",
            session_id: run.session.id,
            attempt: attempts,
            error: error.message
          })
        : Effect.void
    ),
    Effect.retry(
      retrySchedule(run.options.retry).pipe(Schedule.whileInput((error: ModelError) => error.phase === "stream"))
    )
  )
}
