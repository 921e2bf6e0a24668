/**
 * The language model's port: one streamed Messages API request, surfaced as events as content blocks complete,
 * plus the usage and cost accounting of a session.
 */
import { Context, Duration, Schedule, Schema, type Stream } from "effect"
import type { ToolResult, ToolUse } from "../domain/Blocks.js"
import type { ApiToolDefinition } from "../domain/Tool.js"
import type * as WebSearch from "../domain/WebSearch.js"

/** The model used when none is given. */
export const defaultModel = "claude-sonnet-5-5"

/** The `max_tokens` of a request when none is given. */
export const defaultMaxTokens = 16_384

/** A prompt-caching breakpoint (SPEC: on the last tool definition and on the system prompt). */
export interface CacheControl {
  readonly type: "ephemeral"
}

/** A text block of a message, optionally a cache breakpoint. */
export interface TextContent {
  readonly type: "text"
  readonly text: string
  readonly cache_control?: CacheControl
}

/**
 * A block of an assistant message: text, a tool call, or blocks passed through untouched — thinking, and a server
 * tool's call and result (`server_tool_use`, `web_search_tool_result`: run by the API itself, see WebSearch).
 */
export type AssistantContent =
  | TextContent
  | ToolUse
  | {
      readonly type: "thinking" | "redacted_thinking" | "server_tool_use" | "web_search_tool_result"
      readonly [key: string]: unknown
    }

/** A block of a user message: text or a tool result. */
export type UserContent = TextContent | ToolResult

/** One message of the conversation. */
export type Message =
  | { readonly role: "user"; readonly content: string | ReadonlyArray<UserContent> }
  | { readonly role: "assistant"; readonly content: ReadonlyArray<AssistantContent> }

/** A tool definition as sent (a client tool, or a server tool the API runs), optionally a cache breakpoint. */
export type RequestTool = (ApiToolDefinition | WebSearch.ServerTool) & { readonly cache_control?: CacheControl }

/** One request to the model. */
export interface ModelRequest {
  readonly model: string
  readonly maxTokens: number
  readonly system: ReadonlyArray<TextContent>
  readonly tools: ReadonlyArray<RequestTool>
  readonly messages: ReadonlyArray<Message>
}

/** Token counts of a request or a session. */
export interface Usage {
  readonly input_tokens: number
  readonly output_tokens: number
  readonly cache_creation_input_tokens: number
  readonly cache_read_input_tokens: number
}

/** No tokens. */
export const emptyUsage: Usage = {
  input_tokens: 0,
  output_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0
}

/** Sums two usages. */
export const addUsage = (a: Usage, b: Usage): Usage => ({
  input_tokens: a.input_tokens + b.input_tokens,
  output_tokens: a.output_tokens + b.output_tokens,
  cache_creation_input_tokens: a.cache_creation_input_tokens + b.cache_creation_input_tokens,
  cache_read_input_tokens: a.cache_read_input_tokens + b.cache_read_input_tokens
})

/** Why the model stopped. */
export type StopReason = "end_turn" | "tool_use" | "max_tokens" | "stop_sequence" | "pause_turn" | "refusal"

/** What the model stream surfaces, in order. Content blocks are emitted whole, at their `content_block_stop`. */
export type ModelEvent =
  | { readonly type: "message_start"; readonly id: string; readonly model: string; readonly usage: Usage }
  | { readonly type: "text_delta"; readonly index: number; readonly text: string }
  | { readonly type: "content_block"; readonly index: number; readonly block: AssistantContent }
  | { readonly type: "message_delta"; readonly stopReason: StopReason | null; readonly usage: Usage }
  | { readonly type: "message_stop" }

/**
 * A failed request or stream. `retryable` errors (429, 5xx, `overloaded_error`, a connection or a stream cut) may
 * be retried; `retryAfterMs` is the server's `retry-after-ms` / `retry-after` hint.
 */
export class ModelError extends Schema.TaggedError<ModelError>()("ModelError", {
  message: Schema.String,
  status: Schema.optional(Schema.Number),
  retryable: Schema.Boolean,
  retryAfterMs: Schema.optional(Schema.Number),
  /** `request`: before any event was received; `stream`: the stream broke after it started. */
  phase: Schema.Literal("request", "stream")
}) {}

/** `ANTHROPIC_API_KEY` is not set. */
export class MissingApiKeyError extends Schema.TaggedError<MissingApiKeyError>()("MissingApiKeyError", {}) {
  override get message(): string {
    return (
      "ANTHROPIC_API_KEY is not set. Set it to your Anthropic API key (export ANTHROPIC_API_KEY=sk-ant-...); " +
      "set ANTHROPIC_BASE_URL as well to use another endpoint."
    )
  }
}

/** The port. */
export class LanguageModel extends Context.Tag("armature/LanguageModel")<
  LanguageModel,
  {
    /** Streams one request; request-phase failures are already retried by the implementation. */
    readonly stream: (request: ModelRequest) => Stream.Stream<ModelEvent, ModelError>
  }
>() {}

/** How failed requests are retried. */
export interface RetryPolicy {
  /** The first delay of the exponential backoff. */
  readonly baseDelay: Duration.DurationInput
  /** The longest backoff delay (a server's retry-after hint may exceed it). */
  readonly maxDelay: Duration.DurationInput
  /** Attempts in all, the first included. */
  readonly maxAttempts: number
}

/** The default policy: 500 ms doubling with jitter, capped at 32 s, 8 attempts. */
export const defaultRetryPolicy: RetryPolicy = { baseDelay: "500 millis", maxDelay: "32 seconds", maxAttempts: 8 }

/**
 * The retry schedule for model errors: retryable errors only, exponential backoff with jitter capped at
 * `maxDelay`, replaced by the server's retry-after hint when it gave one, at most `maxAttempts` attempts.
 */
export const retrySchedule = (policy: RetryPolicy = defaultRetryPolicy): Schedule.Schedule<unknown, ModelError> => {
  const cap = Duration.decode(policy.maxDelay)
  return Schedule.identity<ModelError>().pipe(
    Schedule.zipLeft(Schedule.exponential(policy.baseDelay, 2).pipe(Schedule.jittered)),
    Schedule.modifyDelay((error, delay) =>
      error.retryAfterMs !== undefined ? Duration.millis(error.retryAfterMs) : Duration.min(delay, cap)
    ),
    Schedule.whileInput((error: ModelError) => error.retryable),
    Schedule.intersect(Schedule.recurs(Math.max(0, policy.maxAttempts - 1)))
  )
}

/** Prices in USD per million tokens. */
export interface Price {
  readonly input: number
  readonly output: number
  readonly cacheWrite: number
  readonly cacheRead: number
}

const price = (input: number, output: number): Price => ({
  input,
  output,
  cacheWrite: input * 1.25,
  cacheRead: input * 0.1
})

/** Prices per model family, matched in order against the model name (first match wins). */
export const priceTable: ReadonlyArray<readonly [RegExp, Price]> = [
  [/opus-4-[5-9]|opus-[5-9]/, price(5, 25)],
  [/opus/, price(15, 75)],
  [/sonnet/, price(3, 15)],
  [/haiku-4|haiku-[5-9]/, price(1, 5)],
  [/3-5-haiku|haiku-3-5/, price(0.8, 4)],
  [/haiku/, price(0.25, 1.25)]
]

/** The price of a model, by family; unknown models are priced as Sonnet. */
export const priceOf = (model: string): Price =>
  priceTable.find(([pattern]) => pattern.test(model))?.[1] ?? price(3, 15)

/** The cost in USD of a usage on a model. */
export const costOf = (model: string, usage: Usage): number => {
  const p = priceOf(model)
  return (
    (usage.input_tokens * p.input +
      usage.output_tokens * p.output +
      usage.cache_creation_input_tokens * p.cacheWrite +
      usage.cache_read_input_tokens * p.cacheRead) /
    1_000_000
  )
}
