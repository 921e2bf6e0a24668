/**
 * The data of the agent loop's surface: the options of a run, the events it reports as it goes and the result line
 * it ends with (the lines of `armature run --output stream-json`). See docs/cli.md.
 */
import type { Effect, Stream } from "effect"
import type { ToolResult } from "../../domain/Blocks.js"
import type { DependencyCycleError, InvalidInputError } from "../../domain/Errors.js"
import type { ExecutorEvent } from "../../domain/ExecutorEvent.js"
import type { Message, ModelError, ModelEvent, RetryPolicy, StopReason, Usage } from "../../services/LanguageModel.js"
import type { TranscriptError } from "../../services/Transcript.js"

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
        /** The API's message id; present on the per-block events of `assistantEvents: "block"`. */
        readonly id?: string
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
  /**
   * Each element is one user interrupt (Ctrl-C): the first interrupts (calls that can be cancelled are, the others
   * finish), the second aborts every call. See docs/executor.md.
   */
  readonly interrupts?: Stream.Stream<void> | undefined
  readonly onEvent?: ((event: AgentEvent) => Effect.Effect<void>) | undefined
  readonly onExecutorEvent?: ((event: ExecutorEvent) => Effect.Effect<void>) | undefined
  /** Each model event as it arrives (text deltas, completed blocks), before the loop acts on it. */
  readonly onModelEvent?: ((event: ModelEvent) => Effect.Effect<void>) | undefined
  /** Retries of a model stream that fails mid-way (request-phase errors are retried by the model layer). */
  readonly retry?: RetryPolicy | undefined
  /**
   * How assistant messages are reported. `message` (the default): one `assistant` event per message once it is
   * complete, its tool results held until then. `block`: one `assistant` event per content block as soon as the
   * block completes, carrying the message's id (as `claude -p --output-format stream-json --verbose` does), and
   * each tool result as soon as it is yielded. The transcript records whole messages either way.
   */
  readonly assistantEvents?: "message" | "block" | undefined
}

/** The errors a run can end with. */
export type RunError = ModelError | TranscriptError | InvalidInputError | DependencyCycleError

/** Model requests allowed when `maxTurns` is not given. */
export const defaultMaxTurns = 100

/** A `user` event carrying one tool result (results are reported one per event). */
export const resultEvent = (sessionId: string, result: ToolResult): AgentEvent => ({
  type: "user",
  session_id: sessionId,
  message: { role: "user", content: [result] }
})
