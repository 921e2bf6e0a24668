/**
 * The LanguageModel port over the Anthropic Messages API (`@anthropic-ai/sdk`), streaming: each content block is
 * surfaced when its `content_block_stop` arrives, tool_use inputs parsed from their `input_json_delta` pieces.
 * The SDK's own retries are off; request-phase failures are retried here with `LanguageModel.retrySchedule`.
 */
import Anthropic from "@anthropic-ai/sdk"
import { Config, Duration, Effect, Layer, Option, Redacted, Stream } from "effect"
import {
  type AssistantContent,
  LanguageModel,
  MissingApiKeyError,
  ModelError,
  type ModelEvent,
  type ModelRequest,
  type RetryPolicy,
  retrySchedule,
  type StopReason,
  type Usage
} from "../../services/LanguageModel.js"

// Declared with the port, so that types naming it do not need the SDK.
export { MissingApiKeyError } from "../../services/LanguageModel.js"

/** How the client is configured. */
export interface Options {
  readonly apiKey: string
  /** Defaults to the SDK's (`https://api.anthropic.com`). */
  readonly baseURL?: string | undefined
  readonly retry?: RetryPolicy | undefined
  /**
   * The longest wait for the stream's next event once it has started, in milliseconds (default: `API_TIMEOUT_MS`,
   * else 600,000 as in Claude Code); also the SDK's own request timeout.
   */
  readonly timeoutMs?: number | undefined
  /**
   * The longest wait for the server's answer to a request (its response headers), in milliseconds (default:
   * `ARMATURE_FIRST_BYTE_TIMEOUT_MS`, else 60,000, never more than `timeoutMs`). A server that accepts the
   * connection and never answers fails this way, as a connection failure (a few quick retries).
   */
  readonly firstByteTimeoutMs?: number | undefined
}

/** Claude Code's default `API_TIMEOUT_MS`: ten minutes. */
export const defaultTimeoutMs = 600_000

/** The default first-byte timeout: one minute. */
export const defaultFirstByteTimeoutMs = 60_000

/** A positive whole number of milliseconds from the environment, if `name` holds one. */
const envMillis = (name: string): number | undefined => {
  const raw = process.env[name]?.trim()
  if (raw === undefined || !/^\d+$/.test(raw)) return undefined
  const n = Number(raw)
  return n > 0 ? n : undefined
}

/** The two timeouts of `options`, with their defaults from the environment. */
export const timeoutsOf = (options: Pick<Options, "timeoutMs" | "firstByteTimeoutMs">) => {
  const total = options.timeoutMs ?? envMillis("API_TIMEOUT_MS") ?? defaultTimeoutMs
  const firstByte = Math.min(
    total,
    options.firstByteTimeoutMs ?? envMillis("ARMATURE_FIRST_BYTE_TIMEOUT_MS") ?? defaultFirstByteTimeoutMs
  )
  return { total, firstByte }
}

const numberHeader = (headers: unknown, name: string): number | undefined => {
  if (typeof headers !== "object" || headers === null || !("get" in headers) || typeof headers.get !== "function") {
    return undefined
  }
  const raw: unknown = headers.get(name)
  if (typeof raw !== "string" || raw.trim() === "") return undefined
  const n = Number(raw)
  return Number.isFinite(n) && n >= 0 ? n : undefined
}

const errorType = (error: unknown): string | undefined => {
  if (typeof error !== "object" || error === null) return undefined
  const inner = "error" in error ? error.error : undefined
  if (typeof inner === "object" && inner !== null && "type" in inner && typeof inner.type === "string") {
    return inner.type
  }
  return "type" in error && typeof error.type === "string" && error.type !== "error" ? error.type : undefined
}

/** Maps anything the SDK throws to a ModelError, deciding whether it may be retried. */
export const toModelError =
  (phase: "request" | "stream") =>
  (cause: unknown): ModelError => {
    if (cause instanceof Anthropic.APIError) {
      const status = typeof cause.status === "number" ? cause.status : undefined
      const type = errorType(cause.error)
      const retryAfterMs =
        numberHeader(cause.headers, "retry-after-ms") ??
        Option.getOrUndefined(
          Option.map(Option.fromNullable(numberHeader(cause.headers, "retry-after")), (s) => s * 1000)
        )
      const retryable =
        cause instanceof Anthropic.APIConnectionError ||
        status === 408 ||
        status === 409 ||
        status === 429 ||
        (status !== undefined && status >= 500) ||
        type === "overloaded_error" ||
        type === "api_error" ||
        type === "rate_limit_error"
      return new ModelError({
        message: cause.message,
        status,
        retryable: retryable && !(cause instanceof Anthropic.APIUserAbortError),
        retryAfterMs,
        phase
      })
    }
    const message = cause instanceof Error ? cause.message : String(cause)
    return new ModelError({ message, retryable: true, phase })
  }

const toUsage = (u: unknown, previous?: Usage): Usage => {
  const record = (typeof u === "object" && u !== null ? u : {}) as Record<string, unknown>
  const pick = (key: keyof Usage): number =>
    typeof record[key] === "number" ? (record[key] as number) : (previous?.[key] ?? 0)
  return {
    input_tokens: pick("input_tokens"),
    output_tokens: pick("output_tokens"),
    cache_creation_input_tokens: pick("cache_creation_input_tokens"),
    cache_read_input_tokens: pick("cache_read_input_tokens")
  }
}

interface Partial {
  readonly start: Record<string, unknown>
  text: string
  json: string
  readonly extra: Record<string, unknown>
}

const parseInput = (json: string, initial: unknown): unknown => {
  if (json.trim() === "") return initial ?? {}
  try {
    return JSON.parse(json)
  } catch {
    return json
  }
}

const finish = (partial: Partial): AssistantContent => {
  const start = partial.start
  switch (start.type) {
    case "text":
      return { type: "text", text: partial.text }
    case "tool_use":
      return {
        type: "tool_use",
        id: String(start.id),
        name: String(start.name),
        input: parseInput(partial.json, start.input)
      }
    case "server_tool_use":
      // a server tool's call, kept as the API sent it (its input assembled like a tool_use's)
      return { ...start, type: "server_tool_use", input: parseInput(partial.json, start.input) }
    case "web_search_tool_result":
      return { ...start, type: "web_search_tool_result" }
    default:
      return { ...start, ...partial.extra, type: start.type === "redacted_thinking" ? "redacted_thinking" : "thinking" }
  }
}

/**
 * Turns the raw stream events into ModelEvents: blocks are assembled from their deltas and emitted whole when they
 * stop; usage from `message_start` is carried into `message_delta` (which only reports what changed).
 */
export const assemble = <E>(
  events: Stream.Stream<Anthropic.RawMessageStreamEvent, E>
): Stream.Stream<ModelEvent, E | ModelError> =>
  Stream.suspend(() => {
    const blocks = new Map<number, Partial>()
    let usage: Usage | undefined
    let stopped = false
    const ended = Stream.suspend(() =>
      stopped
        ? Stream.empty
        : Stream.fail(
            new ModelError({ message: "The model stream ended before message_stop", retryable: true, phase: "stream" })
          )
    )
    const mapped = Stream.mapConcat(events, (event): ReadonlyArray<ModelEvent> => {
      switch (event.type) {
        case "message_start":
          usage = toUsage(event.message.usage)
          return [{ type: "message_start", id: event.message.id, model: event.message.model, usage }]
        case "content_block_start":
          blocks.set(event.index, {
            start: { ...(event.content_block as unknown as Record<string, unknown>) },
            text: event.content_block.type === "text" ? event.content_block.text : "",
            json: "",
            extra: {}
          })
          return []
        case "content_block_delta": {
          const partial = blocks.get(event.index)
          if (partial === undefined) return []
          const delta = event.delta
          switch (delta.type) {
            case "text_delta":
              partial.text += delta.text
              return [{ type: "text_delta", index: event.index, text: delta.text }]
            case "input_json_delta":
              partial.json += delta.partial_json
              return []
            case "thinking_delta":
              partial.extra.thinking = String(partial.extra.thinking ?? partial.start.thinking ?? "") + delta.thinking
              return []
            case "signature_delta":
              partial.extra.signature = delta.signature
              return []
            default:
              return []
          }
        }
        case "content_block_stop": {
          const partial = blocks.get(event.index)
          if (partial === undefined) return []
          blocks.delete(event.index)
          return [{ type: "content_block", index: event.index, block: finish(partial) }]
        }
        case "message_delta":
          usage = toUsage(event.usage, usage)
          return [{ type: "message_delta", stopReason: (event.delta.stop_reason ?? null) as StopReason | null, usage }]
        case "message_stop":
          stopped = true
          return [{ type: "message_stop" }]
        default:
          return []
      }
    })
    return Stream.concat(mapped, ended)
  })

/**
 * The events of `iterable`, failing with `onStall()`'s error when the next one takes longer than `ms` (real time:
 * the server is on the wall clock, whatever the fiber's Clock).
 */
export const withIdleTimeout = <A>(
  iterable: AsyncIterable<A>,
  ms: number,
  onStall: () => unknown
): AsyncIterable<A> => ({
  [Symbol.asyncIterator]: () => {
    const iterator = iterable[Symbol.asyncIterator]()
    return {
      next: () =>
        new Promise<IteratorResult<A>>((resolve, reject) => {
          const timer = setTimeout(() => reject(onStall()), ms)
          iterator.next().then(
            (result) => {
              clearTimeout(timer)
              resolve(result)
            },
            (error) => {
              clearTimeout(timer)
              reject(error)
            }
          )
        }),
      return: async (value?: unknown) =>
        iterator.return ? iterator.return(value) : { done: true as const, value: undefined as A }
    }
  }
})

/** The request body sent to the Messages API. */
export const toParams = (request: ModelRequest): Anthropic.MessageCreateParamsStreaming =>
  ({
    model: request.model,
    max_tokens: request.maxTokens,
    system: request.system,
    tools: request.tools,
    messages: request.messages,
    stream: true
  }) as unknown as Anthropic.MessageCreateParamsStreaming

/** The API's address when `ANTHROPIC_BASE_URL` is not set. */
export const defaultBaseURL = "https://api.anthropic.com"

/** Attempts at most when the server cannot be reached (no HTTP status at all). */
export const connectionAttempts = 3

/** The message of a request that failed for good: the URL, the status or error, and the retries made. */
export const describeFailure = (url: string, error: ModelError, attempts: number): string => {
  const what = error.status !== undefined ? `HTTP ${error.status}` : "connection failed"
  const retries = attempts <= 1 ? "no retries" : `${attempts - 1} ${attempts === 2 ? "retry" : "retries"}`
  return `POST ${url}: ${what}: ${error.message} (${retries})`
}

/** Builds the model over an SDK client. */
export const make = (options: Options) =>
  Effect.sync(() => {
    const timeouts = timeoutsOf(options)
    const client = new Anthropic({
      apiKey: options.apiKey,
      baseURL: options.baseURL ?? null,
      maxRetries: 0,
      timeout: timeouts.total
    })
    const schedule = retrySchedule(options.retry)
    const url = `${(options.baseURL ?? defaultBaseURL).replace(/\/+$/, "")}/v1/messages`
    const open = (request: ModelRequest) =>
      Effect.suspend(() => {
        let attempts = 0
        let connectionFailures = 0
        return Effect.tryPromise({
          try: (signal) => client.messages.create(toParams(request), { signal }),
          catch: toModelError("request")
        }).pipe(
          // a server that accepts the connection and never answers: the request is abandoned (and aborted)
          Effect.timeoutFail({
            duration: Duration.millis(timeouts.firstByte),
            onTimeout: () =>
              new ModelError({
                message: `no response within ${timeouts.firstByte} ms (the first-byte timeout; API_TIMEOUT_MS, ARMATURE_FIRST_BYTE_TIMEOUT_MS)`,
                retryable: true,
                phase: "request"
              })
          }),
          Effect.tapError((error) =>
            Effect.sync(() => {
              attempts++
              if (error.status === undefined) connectionFailures++
            })
          ),
          // a server that cannot be reached at all is given a few quick tries, not the whole backoff
          Effect.retry({
            schedule,
            while: (error) => error.status !== undefined || connectionFailures < connectionAttempts
          }),
          Effect.mapError((error) => new ModelError({ ...error, message: describeFailure(url, error, attempts) }))
        )
      })
    return LanguageModel.of({
      stream: (request) =>
        Stream.unwrapScoped(
          Effect.map(
            // the request phase stays interruptible (an interrupted sub-agent abandons its request at once)
            Effect.acquireRelease(Effect.interruptible(open(request)), (sdkStream) =>
              Effect.sync(() => sdkStream.controller.abort())
            ),
            (sdkStream) =>
              assemble(
                Stream.fromAsyncIterable(
                  withIdleTimeout(sdkStream, timeouts.total, () => {
                    // the SDK's iterator only lets go of its pending read once the request is aborted
                    sdkStream.controller.abort()
                    return new ModelError({
                      message: `${url}: the stream stalled: no event for ${timeouts.total} ms (API_TIMEOUT_MS)`,
                      retryable: true,
                      phase: "stream"
                    })
                  }),
                  (e) => (e instanceof ModelError ? e : toModelError("stream")(e))
                )
              )
          )
        )
    })
  })

/** The model with explicit options. */
export const layer = (options: Options) => Layer.effect(LanguageModel, make(options))

/** The model configured from `ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL`; a missing key is a MissingApiKeyError. */
export const layerFromEnv = (retry?: RetryPolicy) =>
  Layer.effect(
    LanguageModel,
    Effect.gen(function* () {
      const apiKey = yield* Config.option(Config.redacted("ANTHROPIC_API_KEY")).pipe(Effect.orDie)
      const baseURL = yield* Config.option(Config.string("ANTHROPIC_BASE_URL")).pipe(Effect.orDie)
      if (Option.isNone(apiKey) || Redacted.value(apiKey.value).trim() === "") {
        return yield* new MissingApiKeyError()
      }
      return yield* make({ apiKey: Redacted.value(apiKey.value), baseURL: Option.getOrUndefined(baseURL), retry })
    })
  )
