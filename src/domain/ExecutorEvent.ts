/**
 * The events the executor emits and the calls it accepts (docs/executor.md).
 */
import type { ToolResult, ToolResultContent, ToolUse } from "./Blocks.js"

/** The life of a call: `queued → executing → completed → yielded`. */
export type CallState = "queued" | "executing" | "completed" | "yielded"

/** A state transition, with milliseconds since the executor started (read from `Clock`). */
export interface StateEvent {
  readonly type: "state"
  readonly tool_use_id: string
  readonly state: CallState
  readonly t_ms: number
  /** On `executing`, the version of the tool the call runs, for a versioned tool (docs/tools.md, "Tool versions"). */
  readonly version?: string
}

/**
 * A progress event, emitted at once, outside the ordering of results (results wait for earlier calls; progress never
 * does).
 */
export interface ProgressEvent {
  readonly type: "progress"
  readonly tool_use_id: string
  readonly data: unknown
  readonly t_ms: number
}

/**
 * What a tool policy did to a running call (docs/tools.md, "Tool policies"), emitted at once like progress: retry
 * number `attempt` (1 for the first) about to wait `delay_ms` after a transient failure (`reason`), a wait of `waited_ms` for a rate limit, or a call refused by an
 * open circuit (to be tried again at `retry_at`, epoch milliseconds, when known). `key` is the policy's key.
 */
export type PolicyNote =
  | {
      readonly action: "retry"
      readonly key: string
      readonly attempt: number
      readonly delay_ms: number
      readonly reason: string
    }
  | { readonly action: "rate_limit"; readonly key: string; readonly waited_ms: number }
  | { readonly action: "circuit_open"; readonly key: string; readonly retry_at: number | null }

/** A policy event: a {@link PolicyNote} of one call. */
export type PolicyEvent = PolicyNote & {
  readonly type: "policy"
  readonly tool_use_id: string
  readonly t_ms: number
}

/** A result, yielded strictly in request order. */
export interface ResultEvent {
  readonly type: "tool_result"
  readonly tool_use_id: string
  readonly content: ToolResultContent
  readonly is_error: boolean
  readonly t_ms: number
  /** False when a hook asked the turn to stop after this batch (its output said `"continue": false`). */
  readonly continue?: boolean
  readonly stopReason?: string
}

/** Everything the executor emits. */
export type ExecutorEvent = StateEvent | ProgressEvent | PolicyEvent | ResultEvent

/**
 * A call as the executor takes it: a tool_use block, plus, for programmatic callers only, dependencies and
 * a resolver that builds the input from the upstream results (docs/executor.md).
 */
export interface ToolCall extends ToolUse {
  readonly depends_on?: ReadonlyArray<string>
  readonly resolve?: (upstream: ReadonlyMap<string, ToolResult>) => unknown
}

/** Converts a result event to the tool_result block sent to the model. */
export const toToolResult = (event: ResultEvent): ToolResult =>
  event.is_error
    ? { type: "tool_result", tool_use_id: event.tool_use_id, content: event.content, is_error: true }
    : { type: "tool_result", tool_use_id: event.tool_use_id, content: event.content }
