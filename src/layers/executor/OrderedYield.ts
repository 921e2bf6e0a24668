/**
 * The ordered side of the executor: results leave strictly in request order. A completed call waits for every
 * earlier call; progress and state events are not held back.
 */
import type { CallState, ExecutorEvent, ResultEvent, ToolCall } from "../../domain/ExecutorEvent.js"
import type { Outcome } from "../../domain/Outcome.js"

/** The result event of a completed call. */
export const resultEvent = (id: string, outcome: Outcome, t_ms: number): ResultEvent => ({
  type: "tool_result",
  tool_use_id: id,
  content: outcome.content,
  is_error: outcome.isError,
  t_ms,
  ...(outcome.continue ? {} : { continue: false }),
  ...(outcome.stopReason !== undefined ? { stopReason: outcome.stopReason } : {})
})

/**
 * Yields the completed calls from `next` on, up to the first one still pending: appends their result and
 * `yielded` state events (unless `states` is false) to `events`, marks them yielded, and returns the new `next`.
 */
export const release = (
  entries: ReadonlyArray<{
    readonly call: ToolCall
    status: CallState
    readonly outcome: Outcome | undefined
  }>,
  next: number,
  t_ms: number,
  events: Array<ExecutorEvent>,
  states = true
): number => {
  let i = next
  while (i < entries.length && entries[i].status === "completed") {
    const entry = entries[i]
    events.push(resultEvent(entry.call.id, entry.outcome!, t_ms))
    entry.status = "yielded"
    if (states) events.push({ type: "state", tool_use_id: entry.call.id, state: "yielded", t_ms })
    i++
  }
  return i
}
