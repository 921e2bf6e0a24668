/**
 * The data of the agent loop's surface: the options of a run, the events it reports as it goes and the result line
 * it ends with (the lines of `armature run --output stream-json`). See docs/cli.md.
 */
import type { Effect, Stream } from "effect"
import type { AgentDefinition } from "../../domain/AgentDefinition.js"
import type { ToolResult } from "../../domain/Blocks.js"
import type { DependencyCycleError, InvalidInputError } from "../../domain/Errors.js"
import type { ExecutorEvent } from "../../domain/ExecutorEvent.js"
import type * as WebSearch from "../../domain/WebSearch.js"
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

/**
 * What the loop reports as it goes (the lines of `--output stream-json`). A sub-agent's events are reported in its
 * parent's stream with `parent_tool_use_id`, the id of the Agent call that runs it (as Claude Code does).
 */
export type AgentEvent = AgentEventBody & { readonly parent_tool_use_id?: string | undefined }

/** An event without its sub-agent marker. */
export type AgentEventBody =
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
      /** The conversation was compacted: the requests after this line start from its summary. */
      readonly type: "system"
      readonly subtype: "compact_boundary"
      readonly session_id: string
      readonly compact_metadata: { readonly trigger: "auto" | "manual"; readonly pre_tokens: number }
    }
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
  /** The sub-agents offered through the Agent tool; absent: no Agent tool. */
  readonly agents?: AgentsOptions | undefined
  /** Auto-compaction and micro-compaction of the context window. */
  readonly compaction?: CompactionOptions | undefined
  /** Server tools the API runs itself, sent after the pool's tools (WebSearch's `web_search`; see `WebSearch.offer`). */
  readonly serverTools?: ReadonlyArray<WebSearch.ServerTool> | undefined
  /** Set by the Agent tool on a sub-agent's run (not for applications). */
  readonly subagent?: SubagentRun | undefined
}

/** What makes a run a sub-agent's: its definition, the Agent call that runs it and its depth (1 for a child). */
export interface SubagentRun {
  readonly definition: AgentDefinition
  readonly parentToolUseId: string
  readonly depth: number
}

/** The sub-agents a run offers through the Agent tool. */
export interface AgentsOptions {
  /** The sub-agent types (see `AgentDefinitions.load` and `AgentDefinition.generalPurpose`). */
  readonly definitions: ReadonlyArray<AgentDefinition>
  /**
   * The sub-agent types now, read at the start of each turn (definitions that follow their files: see
   * `LiveAgents.follow`); when given, it replaces `definitions`, and the Agent tool is made again when they change.
   */
  readonly current?: Effect.Effect<ReadonlyArray<AgentDefinition>> | undefined
  /** How deep sub-agents nest: 1 (the default) gives sub-agents no Agent tool; 2 lets them launch one level more. */
  readonly maxDepth?: number | undefined
  /** Model requests of one sub-agent at most (default: the run's `maxTurns`). */
  readonly maxTurns?: number | undefined
}

/** How the context window is managed (docs/agents.md). */
export interface CompactionOptions {
  /**
   * Auto-compaction: when a turn's input tokens (uncached, cache reads and cache writes) pass this many, the
   * conversation is summarized and continues from the summary. Default: 80 % of `contextWindow`. 0 turns it off.
   */
  readonly threshold?: number | undefined
  /** The model's context window in tokens (default 200 000). */
  readonly contextWindow?: number | undefined
  /** Micro-compaction: tool results at least this long (characters) are replaced by a stub once old (default 20 000; 0: off). */
  readonly microMinChars?: number | undefined
  /** The most recent tool results kept whole by micro-compaction (default 8). */
  readonly microKeepRecent?: number | undefined
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
