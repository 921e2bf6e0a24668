/**
 * The agent loop of `armature run`: prompt → model turn → tool calls → results → next turn, until the model ends
 * its turn or a limit is reached. Each tool_use block is handed to the executor the moment its
 * `content_block_stop` arrives, while the model is still streaming; the results go back in request order.
 *
 * The parts, each in its own module: the run's shared context (RunContext), its start (RunStart), one model turn
 * with its executor and its retries (TurnAttempt, Salvage), the prompt and tools sent (Prompt), and the events and
 * result line reported (AgentEvent). This module holds the loop between turns: building each request, answering
 * every call of the message, and deciding whether the run goes on. See docs/architecture.md.
 */
import { Chunk, Deferred, Effect, Either, Option, Queue, Ref, type Scope } from "effect"
import type { ToolResult } from "../../domain/Blocks.js"
import * as DeferredTools from "../../domain/DeferredTools.js"
import * as Texts from "../../domain/Texts.js"
import { addUsage, type Message, type ModelRequest } from "../../services/LanguageModel.js"
import { currentContext } from "../../services/Session.js"
import { messagesOf, type Transcript } from "../../services/Transcript.js"
import * as Spans from "../observability/Spans.js"
import { type RunError, type RunOptions, type RunResult, resultEvent } from "./AgentEvent.js"
import * as Compaction from "./Compaction.js"
import { requestTools, systemPrompt, textOf, toolUsesOf } from "./Prompt.js"
import * as RunContext from "./RunContext.js"
import * as RunStart from "./RunStart.js"
import * as Salvage from "./Salvage.js"
import * as Subagent from "./Subagent.js"
import * as TurnAttempt from "./TurnAttempt.js"

export {
  type AgentEvent,
  type AgentsOptions,
  type CompactionOptions,
  defaultMaxTurns,
  type ExecutionMode,
  type ResultSubtype,
  type RunError,
  type RunOptions,
  type RunResult
} from "./AgentEvent.js"
export { baseSystemPrompt, requestTools, systemPrompt, textOf } from "./Prompt.js"

/** The request of the next turn: the system prompt and tools as they are now, and every message so far. */
const nextRequest = (run: RunContext.RunContext, sessionContext: ReadonlyArray<string>, messages: Array<Message>) =>
  Effect.gen(function* () {
    const pool = yield* run.pool
    const discovered = yield* run.session.state.get(DeferredTools.discoveredToolsKey)
    const cwd = (yield* Ref.get(yield* currentContext(run.session))).cwd
    const request: ModelRequest = {
      model: run.modelName,
      maxTokens: run.maxTokens,
      system: [
        {
          type: "text",
          text: systemPrompt({
            cwd,
            pool,
            discovered,
            context: sessionContext,
            append: run.options.appendSystemPrompt,
            base: run.options.subagent?.definition.prompt
          }),
          cache_control: { type: "ephemeral" }
        }
      ],
      tools: [...requestTools(pool, discovered), ...(run.options.serverTools ?? [])],
      // a copy: the loop's history grows after the request is sent
      messages: [...Compaction.microCompact(messages, run.options.compaction, run.transcript.path)]
    }
    return { request, discovered }
  })

/**
 * Answers every call of the assistant message in one user message (a call without a result is answered as
 * rejected); the transcript keeps the whole message, and the results not reported as they were yielded (calls
 * cancelled before they ran, or never answered) are reported now, one event each.
 */
const answerCalls = (run: RunContext.RunContext, outcome: TurnAttempt.TurnOutcome, messages: Array<Message>) =>
  Effect.gen(function* () {
    const uses = toolUsesOf(outcome.content)
    if (uses.length === 0) return false
    const answered: Array<ToolResult> = uses.map(
      (use) =>
        outcome.results.get(use.id) ?? {
          type: "tool_result",
          tool_use_id: use.id,
          content: Texts.rejected,
          is_error: true
        }
    )
    // the answers of background agents that ended meanwhile go with the results
    const notes = Chunk.toArray(yield* Queue.takeAll(run.notifications)).map((text) => ({
      type: "text" as const,
      text
    }))
    const resultMessage: Message = { role: "user", content: [...answered, ...notes] }
    messages.push(resultMessage)
    yield* run.record({ type: "user", session_id: run.session.id, message: resultMessage }, false)
    for (const result of answered) {
      if (!outcome.reported.has(result.tool_use_id)) yield* run.onEvent(resultEvent(run.session.id, result))
    }
    return true
  })

/**
 * After a turn that made no call, while background agents of the run are running or have ended unannounced: waits
 * for the next one to end (or the user's interrupt) and sends the notifications as a user message. False when there
 * is nothing to wait for.
 */
const awaitBackground = (run: RunContext.RunContext, messages: Array<Message>) =>
  Effect.gen(function* () {
    const waiting = (yield* Queue.size(run.notifications)) > 0 || (yield* Ref.get(run.backgroundRunning)) > 0
    if (!waiting) return false
    const first = yield* Effect.raceFirst(
      Effect.map(Queue.take(run.notifications), Option.some),
      Effect.as(Deferred.await(run.interrupted), Option.none<string>())
    )
    if (Option.isNone(first)) return true
    const rest = Chunk.toArray(yield* Queue.takeAll(run.notifications))
    const message: Message = {
      role: "user",
      content: [first.value, ...rest].map((text) => ({ type: "text" as const, text }))
    }
    messages.push(message)
    yield* run.record({ type: "user", session_id: run.session.id, message })
    return true
  })

/**
 * After a turn that made no call and was not paused: the result line for a cut-off or refused message, else the
 * Stop hooks decide. A Stop hook that blocks (the first time only) sends its feedback as a user message and the
 * run goes on (`undefined`).
 */
const endOfTurn = (
  run: RunContext.RunContext,
  outcome: TurnAttempt.TurnOutcome,
  messages: Array<Message>,
  stop: { active: boolean }
) =>
  Effect.gen(function* () {
    if (outcome.stopReason === "max_tokens") {
      return yield* run.finish(
        "error_max_tokens",
        `The model's response was cut off at max_tokens (${run.maxTokens}) before it finished; raise --max-tokens or ` +
          "resume the session to continue.",
        outcome.stopReason
      )
    }
    if (outcome.stopReason === "refusal") {
      return yield* run.finish("refusal", textOf(outcome.content) || "The model refused to continue", "refusal")
    }
    const hook = yield* run.runHook(run.stopEvent, { stop_hook_active: stop.active })
    const stopBlock = RunContext.blocked(hook)
    if (Option.isSome(stopBlock) && !stop.active && hook.continue) {
      stop.active = true
      const feedback: Message = {
        role: "user",
        content: [{ type: "text", text: `Stop hook feedback:\n${stopBlock.value}` }]
      }
      messages.push(feedback)
      yield* run.record({ type: "user", session_id: run.session.id, message: feedback })
      return undefined
    }
    return yield* run.finish("success", textOf(outcome.content), outcome.stopReason)
  })

/** Runs the agent loop to its end and returns the result line, in an `invoke_agent` span. */
export const run = (options: RunOptions) =>
  Spans.spanWith(Spans.names.agent, Spans.agentAttributes(options.model), (span) =>
    Effect.tap(loop(options), (result) => Spans.annotateRun(span, result))
  )

/** The services a run uses (its transcript aside: a sub-agent gets a side chain of its own). */
type LoopServices = Exclude<Effect.Effect.Context<ReturnType<typeof RunContext.make>>, Scope.Scope>

const loop = (options: RunOptions): Effect.Effect<RunResult, RunError, LoopServices> =>
  Effect.gen(function* () {
    const services = yield* Effect.context<Exclude<LoopServices, Transcript>>()
    const context = yield* RunContext.make(options, Subagent.agentTool(loop, services))
    const { tally, transcript } = context
    const previous = messagesOf(transcript.previous)
    const messages: Array<Message> = [...previous]
    const started = yield* RunStart.start(context, previous, messages)
    if (Either.isLeft(started)) return started.left
    const { sessionContext } = started.right
    const salvage = Salvage.make()
    const stop = { active: false }
    while (true) {
      if (yield* Deferred.isDone(context.interrupted)) {
        return yield* context.finish("interrupted", "Interrupted by the user", null)
      }
      if (tally.turns >= context.maxTurns) {
        return yield* context.finish(
          "error_max_turns",
          `Reached the maximum number of turns (${context.maxTurns})`,
          null
        )
      }
      tally.turns++
      const { request, discovered } = yield* nextRequest(context, sessionContext, messages)
      const turn = yield* Effect.either(TurnAttempt.turn(context, salvage, request, discovered))
      // the model could not be reached or failed for good (its retries are spent): the run ends with an error result
      if (turn._tag === "Left") {
        return yield* context.finish("error_during_execution", `API error: ${turn.left.message}`, null)
      }
      const { outcome, transcriptError } = turn.right
      // a transcript that cannot be written ends the run (after the turn, so the retries stay about the model)
      if (Option.isSome(transcriptError)) return yield* Effect.fail(transcriptError.value)
      tally.usage = addUsage(tally.usage, outcome.usage)
      // The attempt recorded and reported the assistant message (when it had any block).
      if (outcome.content.length > 0) messages.push({ role: "assistant", content: outcome.content })
      const called = yield* answerCalls(context, outcome, messages)
      yield* transcript.sync

      if (yield* Deferred.isDone(context.interrupted)) {
        return yield* context.finish("interrupted", "Interrupted by the user", outcome.stopReason)
      }
      if (Option.isSome(outcome.stopAfterBatch)) {
        return yield* context.finish("stopped_by_hook", outcome.stopAfterBatch.value, outcome.stopReason)
      }
      if (called || outcome.stopReason === "pause_turn") {
        yield* Compaction.maybeCompact(context, messages, outcome.usage)
        continue
      }
      if (outcome.stopReason !== "max_tokens" && outcome.stopReason !== "refusal") {
        if (yield* awaitBackground(context, messages)) continue
      }
      const ended: RunResult | undefined = yield* endOfTurn(context, outcome, messages, stop)
      if (ended !== undefined) return ended
    }
  }).pipe(Effect.scoped)
