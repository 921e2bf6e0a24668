/**
 * The start of a run, before the first model turn: a resumed session's discovered deferred tools are restored, the
 * `init` line is recorded, the SessionStart and UserPromptSubmit hooks run, and the prompt becomes the first new
 * user message (with any context the hooks added).
 */
import { Effect, Either, Option, Ref } from "effect"
import * as DeferredTools from "../../domain/DeferredTools.js"
import type { Message, TextContent, UserContent } from "../../services/LanguageModel.js"
import { currentContext } from "../../services/Session.js"
import type { RunResult } from "./AgentEvent.js"
import { blocked, type RunContext } from "./RunContext.js"

/** The deferred tools a resumed session had discovered: the tool_reference blocks of its tool results. */
const rediscoveredIn = (previous: ReadonlyArray<Message>): ReadonlyArray<string> =>
  previous.flatMap((m) =>
    m.role === "user" && typeof m.content !== "string"
      ? m.content.flatMap((b) =>
          b.type === "tool_result" && typeof b.content !== "string"
            ? b.content.flatMap((c) => (c.type === "tool_reference" ? [c.tool_name] : []))
            : []
        )
      : []
  )

/** What the loop starts from: the context the SessionStart hooks added to the system prompt. */
export interface Started {
  readonly sessionContext: ReadonlyArray<string>
}

/**
 * Starts a run whose earlier messages are `previous`; the prompt message is pushed onto `messages`. Ends early with
 * the result line when a UserPromptSubmit hook blocks the prompt or stops the run.
 */
export const start = Effect.fn("AgentLoop.start")(function* (
  run: RunContext,
  previous: ReadonlyArray<Message>,
  messages: Array<Message>
) {
  const { session, policy, options } = run
  const rediscovered = rediscoveredIn(previous)
  if (rediscovered.length > 0) {
    yield* session.state.modify(DeferredTools.discoveredToolsKey, (old) => [
      undefined,
      new Set([...old, ...rediscovered])
    ])
  }

  const initialPool = yield* run.pool
  const startDiscovered = yield* session.state.get(DeferredTools.discoveredToolsKey)
  const context = yield* Ref.get(yield* currentContext(session))
  yield* run.record({
    type: "system",
    subtype: "init",
    session_id: session.id,
    cwd: context.cwd,
    model: run.modelName,
    permission_mode: policy.mode,
    tools: initialPool.filter((t) => DeferredTools.isLoaded(t, startDiscovered)).map((t) => t.name),
    deferred_tools: initialPool.filter((t) => !DeferredTools.isLoaded(t, startDiscovered)).map((t) => t.name),
    resumed: previous.length > 0
  })
  if (options.subagent !== undefined) {
    // a sub-agent's prompt is the Agent call's: no session starts and no user prompt is submitted
    const promptMessage: Message = { role: "user", content: [{ type: "text", text: options.prompt }] }
    messages.push(promptMessage)
    yield* run.record({ type: "user", session_id: session.id, message: promptMessage }, false)
    return Either.right<Started>({ sessionContext: [] })
  }
  const sessionStart = yield* run.runHook("SessionStart", { source: previous.length > 0 ? "resume" : "startup" })

  const promptOutcome = yield* run.runHook("UserPromptSubmit", { prompt: options.prompt })
  const promptBlock = blocked(promptOutcome)
  if (Option.isSome(promptBlock)) {
    const line = yield* run.finish(
      "error_prompt_blocked",
      `UserPromptSubmit hook blocked the prompt: ${promptBlock.value}`,
      null
    )
    return Either.left<RunResult>(line)
  }
  if (!promptOutcome.continue) {
    const line = yield* run.finish(
      "stopped_by_hook",
      promptOutcome.stopReason ?? "A UserPromptSubmit hook stopped the run",
      null
    )
    return Either.left<RunResult>(line)
  }
  const userContent: Array<UserContent> = [
    { type: "text", text: options.prompt },
    ...promptOutcome.additionalContext.map((text): TextContent => ({ type: "text", text }))
  ]
  const promptMessage: Message = { role: "user", content: userContent }
  messages.push(promptMessage)
  yield* run.record({ type: "user", session_id: session.id, message: promptMessage }, false)
  return Either.right<Started>({ sessionContext: [...sessionStart.additionalContext] })
})
