/**
 * The agent loop of `armature run`: prompt → model turn → tool calls → results → next turn, until the model ends
 * its turn or a limit is reached. Each tool_use block is handed to the executor the moment its
 * `content_block_stop` arrives, while the model is still streaming; the results go back in request order.
 *
 * A model stream that fails mid-way is retried (SPEC §4.7): the attempt's executor is discarded (running calls are
 * interrupted, nothing more is yielded) and the whole message is requested again with a fresh executor. Results
 * already yielded in the discarded attempt are kept and reused for the retried message's call with the same id, or
 * else the same tool name and input, so a call that completed is never executed twice; calls that had not yielded
 * a result were interrupted and run again.
 */
import { Clock, Deferred, Effect, Fiber, Mailbox, Option, Schedule, Stream } from "effect"
import type { ToolResult, ToolUse } from "../../domain/Blocks.js"
import * as DeferredTools from "../../domain/DeferredTools.js"
import type { DependencyCycleError, InvalidInputError } from "../../domain/Errors.js"
import { type ExecutorEvent, toToolResult } from "../../domain/ExecutorEvent.js"
import type { HookEvent, HookOutcome } from "../../domain/Hook.js"
import * as HookInputs from "../../domain/HookInputs.js"
import * as Texts from "../../domain/Texts.js"
import * as Tool from "../../domain/Tool.js"
import { Hooks } from "../../services/Hooks.js"
import {
  type AssistantContent,
  addUsage,
  costOf,
  defaultMaxTokens,
  defaultModel,
  emptyUsage,
  LanguageModel,
  type Message,
  type ModelError,
  type ModelEvent,
  type ModelRequest,
  type RequestTool,
  type RetryPolicy,
  retrySchedule,
  type StopReason,
  type TextContent,
  type Usage,
  type UserContent
} from "../../services/LanguageModel.js"
import { PermissionPolicy } from "../../services/PermissionPolicy.js"
import { Session } from "../../services/Session.js"
import { makeControl, ToolExecutor } from "../../services/ToolExecutor.js"
import { ToolRegistry } from "../../services/ToolRegistry.js"
import { messagesOf, Transcript, type TranscriptError } from "../../services/Transcript.js"

/** When tool calls are started: as each block completes (streaming), or after the whole message (the baseline). */
export type ExecutionMode = "streaming" | "after-message"

/** How a run ended (the `subtype` of the result line). */
export type ResultSubtype =
  | "success"
  | "error_max_turns"
  | "error_max_tokens"
  | "error_prompt_blocked"
  | "interrupted"
  | "stopped_by_hook"
  | "error_during_execution"
  | "refusal"

/** The final line of a run, in the spirit of `claude -p --output-format stream-json`. */
export interface RunResult {
  readonly type: "result"
  readonly subtype: ResultSubtype
  readonly is_error: boolean
  readonly session_id: string
  readonly num_turns: number
  /** The text of the last assistant message, or the reason the run stopped. */
  readonly result: string
  readonly stop_reason: StopReason | null
  readonly duration_ms: number
  readonly usage: Usage
  readonly total_cost_usd: number
}

/** What the loop reports as it goes (the lines of `--output stream-json`). */
export type AgentEvent =
  | {
      readonly type: "system"
      readonly subtype: "init"
      readonly session_id: string
      readonly cwd: string
      readonly model: string
      readonly permission_mode: string
      readonly tools: ReadonlyArray<string>
      readonly deferred_tools: ReadonlyArray<string>
      readonly resumed: boolean
    }
  | {
      readonly type: "system"
      readonly subtype: "retry"
      readonly session_id: string
      readonly attempt: number
      readonly error: string
    }
  | { readonly type: "system"; readonly subtype: "hook"; readonly session_id: string; readonly message: string }
  | {
      readonly type: "assistant"
      readonly session_id: string
      readonly message: Message & {
        readonly model: string
        readonly stop_reason: StopReason | null
        readonly usage: Usage
      }
    }
  | { readonly type: "user"; readonly session_id: string; readonly message: Message }
  | RunResult

/** Options of one run. */
export interface RunOptions {
  readonly prompt: string
  readonly model?: string | undefined
  /** Model requests at most (default 100). */
  readonly maxTurns?: number | undefined
  readonly maxTokens?: number | undefined
  /** Extra text appended to the system prompt. */
  readonly appendSystemPrompt?: string | undefined
  readonly execution?: ExecutionMode | undefined
  /** Each element is one user interrupt (Ctrl-C): the first interrupts, the second aborts (SPEC §4.8). */
  readonly interrupts?: Stream.Stream<void> | undefined
  readonly onEvent?: ((event: AgentEvent) => Effect.Effect<void>) | undefined
  readonly onExecutorEvent?: ((event: ExecutorEvent) => Effect.Effect<void>) | undefined
  /** Each model event as it arrives (text deltas, completed blocks), before the loop acts on it. */
  readonly onModelEvent?: ((event: ModelEvent) => Effect.Effect<void>) | undefined
  /** Retries of a model stream that fails mid-way (request-phase errors are retried by the model layer). */
  readonly retry?: RetryPolicy | undefined
}

/** Model requests allowed when `maxTurns` is not given. */
export const defaultMaxTurns = 100

/** The fixed part of the system prompt. */
export const baseSystemPrompt = `You are an agent that completes the user's task by calling the tools you are given. Call tools when they \
help; independent read-only calls may be made together in one message and run in parallel. When the task is done, \
answer with a short summary of what you did. If a tool result tells you to stop and wait for the user, stop.`

/** The system prompt: the fixed text, the environment, the deferred-tool listing and any hook context. */
export const systemPrompt = (options: {
  readonly cwd: string
  readonly pool: ReadonlyArray<Tool.Any>
  readonly discovered: ReadonlySet<string>
  readonly context: ReadonlyArray<string>
  readonly append?: string | undefined
}): string => {
  const listing = DeferredTools.deferredListing(options.pool, options.discovered)
  return [
    baseSystemPrompt,
    `<env>\nWorking directory: ${options.cwd}\nPlatform: ${process.platform}\n</env>`,
    listing === ""
      ? ""
      : `Some tools are deferred: only their names are listed below. Call ToolSearch with query "select:Name" to \
load one before calling it.\n${listing}`,
    ...options.context,
    options.append ?? ""
  ]
    .filter((s) => s.trim() !== "")
    .join("\n\n")
}

/** The tools array of a request: loaded tools in pool order, the last one a prompt-cache breakpoint. */
export const requestTools = (pool: ReadonlyArray<Tool.Any>, discovered: ReadonlySet<string>): Array<RequestTool> => {
  const tools: Array<RequestTool> = pool
    .filter((tool) => DeferredTools.isLoaded(tool, discovered))
    .map(Tool.toApiDefinition)
  if (tools.length > 0) tools[tools.length - 1] = { ...tools[tools.length - 1], cache_control: { type: "ephemeral" } }
  return tools
}

/** The text of an assistant message. */
export const textOf = (content: ReadonlyArray<AssistantContent>): string =>
  content.flatMap((b) => (b.type === "text" && "text" in b ? [String(b.text)] : [])).join("")

const toolUsesOf = (content: ReadonlyArray<AssistantContent>): ReadonlyArray<ToolUse> =>
  content.flatMap((b) => (b.type === "tool_use" ? [b as ToolUse] : []))

const callKey = (name: string, input: unknown): string => `${name}\u0000${JSON.stringify(input)}`

/** Results yielded before a discard, kept for the retry: by id, and by tool name + input (each used once). */
interface Salvage {
  readonly byId: Map<string, ToolResult>
  readonly byKey: Map<string, Array<{ readonly id: string; readonly result: ToolResult }>>
}

const takeSalvaged = (salvage: Salvage, call: ToolUse): ToolResult | undefined => {
  const byId = salvage.byId.get(call.id)
  const key = callKey(call.name, call.input)
  const list = salvage.byKey.get(key) ?? []
  const found = byId !== undefined ? { id: call.id, result: byId } : list[0]
  if (found === undefined) return undefined
  salvage.byId.delete(found.id)
  salvage.byKey.set(
    key,
    list.filter((entry) => entry.id !== found.id)
  )
  return { ...found.result, tool_use_id: call.id }
}

/** What one attempt at a model turn produced. */
interface TurnOutcome {
  readonly content: ReadonlyArray<AssistantContent>
  readonly stopReason: StopReason | null
  readonly usage: Usage
  readonly results: ReadonlyMap<string, ToolResult>
  /** The ids whose results were already reported (as `user` events) during the attempt. */
  readonly reported: ReadonlySet<string>
  readonly stopAfterBatch: Option.Option<string>
}

/** Runs the agent loop to its end and returns the result line. */
export const run = (options: RunOptions) =>
  Effect.gen(function* () {
    const session = yield* Session
    const registry = yield* ToolRegistry
    const executor = yield* ToolExecutor
    const model = yield* LanguageModel
    const hooks = yield* Hooks
    const policy = yield* PermissionPolicy
    const transcript = yield* Transcript

    const modelName = options.model ?? defaultModel
    const maxTurns = options.maxTurns ?? defaultMaxTurns
    const maxTokens = options.maxTokens ?? defaultMaxTokens
    const execution = options.execution ?? "streaming"
    const onEvent = options.onEvent ?? (() => Effect.void)
    const onExecutorEvent = options.onExecutorEvent ?? (() => Effect.void)
    const onModelEvent = options.onModelEvent ?? (() => Effect.void)
    const startedAt = yield* Clock.currentTimeMillis

    const interrupted = yield* Deferred.make<void>()
    const aborted = yield* Deferred.make<void>()
    if (options.interrupts !== undefined) {
      yield* Effect.forkScoped(
        Stream.runForEach(Stream.zipWithIndex(options.interrupts), ([, n]) =>
          n === 0 ? Deferred.succeed(interrupted, undefined) : Deferred.succeed(aborted, undefined)
        )
      )
    }

    /** Records a line in the transcript and reports it. */
    const record = (event: AgentEvent, report = true) =>
      Effect.zipRight(transcript.append(event), report ? onEvent(event) : Effect.void)

    const previous = messagesOf(transcript.previous)
    const messages: Array<Message> = [...previous]
    let usage = emptyUsage
    let turns = 0

    const hookInput = (event: HookEvent, extra: Record<string, unknown>) =>
      Effect.map(session.context.get, (context) =>
        HookInputs.hookInput(
          {
            sessionId: session.id,
            transcriptPath: transcript.path === "" ? session.transcriptPath : transcript.path,
            cwd: context.cwd,
            permissionMode: policy.mode
          },
          event,
          extra
        )
      )
    const runHook = (event: HookEvent, extra: Record<string, unknown>) =>
      Effect.flatMap(hookInput(event, extra), (input) => hooks.run(event, input)).pipe(
        Effect.tap((outcome) =>
          Effect.forEach(
            [...outcome.systemMessages, ...outcome.errors],
            (message) => onEvent({ type: "system", subtype: "hook", session_id: session.id, message }),
            { discard: true }
          )
        )
      )
    const blocked = (outcome: HookOutcome): Option.Option<string> =>
      outcome.decision === "deny" || outcome.blocks.length > 0
        ? Option.some(outcome.reason ?? outcome.blocks.map((b) => b.reason).join("\n"))
        : Option.none()

    const finish = (subtype: ResultSubtype, result: string, stopReason: StopReason | null) =>
      Effect.gen(function* () {
        const line: RunResult = {
          type: "result",
          subtype,
          is_error: subtype !== "success" && subtype !== "stopped_by_hook",
          session_id: session.id,
          num_turns: turns,
          result,
          stop_reason: stopReason,
          duration_ms: (yield* Clock.currentTimeMillis) - startedAt,
          usage,
          total_cost_usd: costOf(modelName, usage)
        }
        yield* record(line)
        yield* transcript.sync
        return line
      })

    // A resumed session keeps the deferred tools it had discovered (the tool_reference blocks of its results).
    const rediscovered = previous.flatMap((m) =>
      m.role === "user" && typeof m.content !== "string"
        ? m.content.flatMap((b) =>
            b.type === "tool_result" && typeof b.content !== "string"
              ? b.content.flatMap((c) => (c.type === "tool_reference" ? [c.tool_name] : []))
              : []
          )
        : []
    )
    if (rediscovered.length > 0) {
      yield* session.state.modify(DeferredTools.discoveredToolsKey, (old) => [
        undefined,
        new Set([...old, ...rediscovered])
      ])
    }

    // Session start and the prompt.
    const initialPool = yield* registry.pool({ isDenied: policy.isToolDenied })
    const startDiscovered = yield* session.state.get(DeferredTools.discoveredToolsKey)
    const context = yield* session.context.get
    yield* record({
      type: "system",
      subtype: "init",
      session_id: session.id,
      cwd: context.cwd,
      model: modelName,
      permission_mode: policy.mode,
      tools: initialPool.filter((t) => DeferredTools.isLoaded(t, startDiscovered)).map((t) => t.name),
      deferred_tools: initialPool.filter((t) => !DeferredTools.isLoaded(t, startDiscovered)).map((t) => t.name),
      resumed: previous.length > 0
    })
    const sessionStart = yield* runHook("SessionStart", { source: previous.length > 0 ? "resume" : "startup" })
    const sessionContext = [...sessionStart.additionalContext]

    const promptOutcome = yield* runHook("UserPromptSubmit", { prompt: options.prompt })
    const promptBlock = blocked(promptOutcome)
    if (Option.isSome(promptBlock)) {
      return yield* finish(
        "error_prompt_blocked",
        `UserPromptSubmit hook blocked the prompt: ${promptBlock.value}`,
        null
      )
    }
    if (!promptOutcome.continue) {
      return yield* finish(
        "stopped_by_hook",
        promptOutcome.stopReason ?? "A UserPromptSubmit hook stopped the run",
        null
      )
    }
    const userContent: Array<UserContent> = [
      { type: "text", text: options.prompt },
      ...promptOutcome.additionalContext.map((text): TextContent => ({ type: "text", text }))
    ]
    const promptMessage: Message = { role: "user", content: userContent }
    messages.push(promptMessage)
    yield* record({ type: "user", session_id: session.id, message: promptMessage }, false)

    const salvage: Salvage = { byId: new Map(), byKey: new Map() }

    /** One attempt at a model turn, with its own executor. */
    const attempt = (request: ModelRequest, discovered: ReadonlySet<string>) =>
      Effect.gen(function* () {
        const control = yield* makeControl
        yield* Effect.forkScoped(Effect.zipRight(Deferred.await(interrupted), control.interrupt))
        yield* Effect.forkScoped(Effect.zipRight(Deferred.await(aborted), control.abort))
        const calls = yield* Mailbox.make<ToolUse>()
        const results = new Map<string, ToolResult>()
        const yielded = new Map<string, ToolResult>()
        const callsById = new Map<string, ToolUse>()
        let stopAfterBatch = Option.none<string>()
        // Results are reported as they are yielded, but never before the assistant message that asked for them:
        // until the model's message is complete (and announced), they are held. One permit orders the two.
        const reporting = yield* Effect.makeSemaphore(1)
        const reported = new Set<string>()
        const held: Array<ToolResult> = []
        let announced = false
        const reportNow = (result: ToolResult) =>
          Effect.suspend(() => {
            reported.add(result.tool_use_id)
            return onEvent({ type: "user", session_id: session.id, message: { role: "user", content: [result] } })
          })
        const report = (result: ToolResult) =>
          reporting.withPermits(1)(
            Effect.suspend(() => {
              if (announced) return reportNow(result)
              held.push(result)
              return Effect.void
            })
          )
        const executorFiber = yield* executor.execute(Mailbox.toStream(calls), { control, discovered }).pipe(
          Stream.runForEach((event) =>
            Effect.zipRight(
              Effect.sync(() => {
                if (event.type !== "tool_result") return
                const result = toToolResult(event)
                results.set(event.tool_use_id, result)
                yielded.set(event.tool_use_id, result)
                if (event.continue === false && Option.isNone(stopAfterBatch)) {
                  stopAfterBatch = Option.some(event.stopReason ?? "A hook stopped the turn")
                }
              }),
              Effect.zipRight(
                onExecutorEvent(event),
                event.type === "tool_result" ? report(toToolResult(event)) : Effect.void
              )
            )
          ),
          Effect.orDie,
          Effect.forkScoped
        )
        const blocks = new Map<number, AssistantContent>()
        const pending: Array<ToolUse> = []
        let stopReason: StopReason | null = null
        let turnUsage = emptyUsage
        const feed = (call: ToolUse) =>
          Effect.suspend(() => {
            callsById.set(call.id, call)
            const reused = takeSalvaged(salvage, call)
            if (reused !== undefined) {
              results.set(call.id, reused)
              return report(reused)
            }
            if (execution === "after-message") {
              pending.push(call)
              return Effect.void
            }
            return Effect.asVoid(calls.offer(call))
          })
        const streamed = yield* model.stream(request).pipe(
          Stream.interruptWhen(Deferred.await(interrupted)),
          Stream.runForEach((event) => {
            const act = onModelEvent(event)
            switch (event.type) {
              case "message_start":
                turnUsage = event.usage
                return act
              case "content_block":
                blocks.set(event.index, event.block)
                return event.block.type === "tool_use" ? Effect.zipRight(act, feed(event.block as ToolUse)) : act
              case "message_delta":
                stopReason = event.stopReason
                turnUsage = event.usage
                return act
              default:
                return act
            }
          }),
          Effect.either
        )
        if (streamed._tag === "Left") {
          // The stream broke: discard this executor; keep what it already yielded for the retry.
          yield* control.discard
          yield* Fiber.interrupt(executorFiber)
          for (const [id, result] of yielded) {
            const call = callsById.get(id)
            if (call === undefined) continue
            salvage.byId.set(id, result)
            const key = callKey(call.name, call.input)
            salvage.byKey.set(key, [...(salvage.byKey.get(key) ?? []), { id, result }])
          }
          for (const [id, result] of results) {
            if (!yielded.has(id)) salvage.byId.set(id, result)
          }
          return yield* Effect.fail(streamed.left)
        }
        // The message is complete: it is recorded and reported now, before its tools finish, then the results
        // held so far follow it.
        const content = [...blocks.entries()].sort(([a], [b]) => a - b).map(([, block]) => block)
        const recorded = yield* reporting.withPermits(1)(
          Effect.gen(function* () {
            // An interrupt may stop the stream before any block completed: an empty message is not recorded.
            const written =
              content.length === 0
                ? Option.none()
                : yield* record({
                    type: "assistant",
                    session_id: session.id,
                    message: { role: "assistant", content, model: modelName, stop_reason: stopReason, usage: turnUsage }
                  }).pipe(Effect.flip, Effect.option)
            announced = true
            for (const result of held.splice(0)) yield* reportNow(result)
            return written
          })
        )
        for (const call of pending) yield* calls.offer(call)
        yield* calls.end
        yield* Fiber.join(executorFiber)
        const outcome: TurnOutcome = { content, stopReason, usage: turnUsage, results, reported, stopAfterBatch }
        return { outcome, transcriptError: recorded }
      }).pipe(Effect.scoped)

    const retrying = (request: ModelRequest, discovered: ReadonlySet<string>) => {
      let attempts = 0
      return Effect.suspend(() => {
        attempts++
        return attempt(request, discovered)
      }).pipe(
        Effect.tapError((error: ModelError) =>
          error.phase === "stream" && error.retryable
            ? onEvent({
                type: "system",
                subtype: "retry",
                session_id: session.id,
                attempt: attempts,
                error: error.message
              })
            : Effect.void
        ),
        Effect.retry(
          retrySchedule(options.retry).pipe(Schedule.whileInput((error: ModelError) => error.phase === "stream"))
        )
      )
    }

    let stopHookActive = false
    while (true) {
      if (yield* Deferred.isDone(interrupted)) {
        return yield* finish("interrupted", "Interrupted by the user", null)
      }
      if (turns >= maxTurns) {
        return yield* finish("error_max_turns", `Reached the maximum number of turns (${maxTurns})`, null)
      }
      turns++
      const pool = yield* registry.pool({ isDenied: policy.isToolDenied })
      const discovered = yield* session.state.get(DeferredTools.discoveredToolsKey)
      const cwd = (yield* session.context.get).cwd
      const request: ModelRequest = {
        model: modelName,
        maxTokens,
        system: [
          {
            type: "text",
            text: systemPrompt({ cwd, pool, discovered, context: sessionContext, append: options.appendSystemPrompt }),
            cache_control: { type: "ephemeral" }
          }
        ],
        tools: requestTools(pool, discovered),
        messages: [...messages]
      }
      const turn = yield* Effect.either(retrying(request, discovered))
      // the model could not be reached or failed for good (its retries are spent): the run ends with an error result
      if (turn._tag === "Left") return yield* finish("error_during_execution", `API error: ${turn.left.message}`, null)
      const { outcome, transcriptError } = turn.right
      // a transcript that cannot be written ends the run (after the turn, so the retries stay about the model)
      if (Option.isSome(transcriptError)) return yield* Effect.fail(transcriptError.value)
      usage = addUsage(usage, outcome.usage)
      // The attempt recorded and reported the assistant message (when it had any block).
      if (outcome.content.length > 0) messages.push({ role: "assistant", content: outcome.content })
      const uses = toolUsesOf(outcome.content)
      if (uses.length > 0) {
        const answered: Array<ToolResult> = uses.map(
          (use) =>
            outcome.results.get(use.id) ?? {
              type: "tool_result",
              tool_use_id: use.id,
              content: Texts.rejected,
              is_error: true
            }
        )
        const resultMessage: Message = { role: "user", content: answered }
        messages.push(resultMessage)
        // The transcript keeps one message with every result; the results not reported as they were yielded
        // (calls cancelled before they ran, or never answered) are reported now, one event each.
        yield* record({ type: "user", session_id: session.id, message: resultMessage }, false)
        for (const result of answered) {
          if (!outcome.reported.has(result.tool_use_id)) {
            yield* onEvent({ type: "user", session_id: session.id, message: { role: "user", content: [result] } })
          }
        }
      }
      yield* transcript.sync

      if (yield* Deferred.isDone(interrupted)) {
        return yield* finish("interrupted", "Interrupted by the user", outcome.stopReason)
      }
      if (Option.isSome(outcome.stopAfterBatch)) {
        return yield* finish("stopped_by_hook", outcome.stopAfterBatch.value, outcome.stopReason)
      }
      if (uses.length > 0 || outcome.stopReason === "pause_turn") continue
      if (outcome.stopReason === "max_tokens") {
        return yield* finish(
          "error_max_tokens",
          `The model's response was cut off at max_tokens (${maxTokens}) before it finished; raise --max-tokens or ` +
            "resume the session to continue.",
          outcome.stopReason
        )
      }
      if (outcome.stopReason === "refusal") {
        return yield* finish("refusal", textOf(outcome.content) || "The model refused to continue", "refusal")
      }
      const stop = yield* runHook("Stop", { stop_hook_active: stopHookActive })
      const stopBlock = blocked(stop)
      if (Option.isSome(stopBlock) && !stopHookActive && stop.continue) {
        stopHookActive = true
        const feedback: Message = {
          role: "user",
          content: [{ type: "text", text: `Stop hook feedback:\n${stopBlock.value}` }]
        }
        messages.push(feedback)
        yield* record({ type: "user", session_id: session.id, message: feedback })
        continue
      }
      return yield* finish("success", textOf(outcome.content), outcome.stopReason)
    }
  }).pipe(Effect.scoped)

/** The errors a run can end with. */
export type RunError = ModelError | TranscriptError | InvalidInputError | DependencyCycleError
