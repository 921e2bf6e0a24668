import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Either, Fiber, Stream, TestClock } from "effect"
import * as AnthropicLanguageModel from "../../../src/layers/model/AnthropicLanguageModel.js"
import { LanguageModel, ModelError, type ModelRequest, retrySchedule } from "../../../src/services/LanguageModel.js"
import * as MessagesServer from "../../fixtures/MessagesServer.js"

const request: ModelRequest = {
  model: "claude-sonnet-5-5",
  maxTokens: 1024,
  system: [{ type: "text", text: "You are a test.", cache_control: { type: "ephemeral" } }],
  tools: [],
  messages: [{ role: "user", content: "hi" }]
}

const fastRetry = { baseDelay: "5 millis", maxDelay: "20 millis", maxAttempts: 4 } as const

const streamAll = (url: string) =>
  Effect.gen(function* () {
    const model = yield* LanguageModel
    return Chunk.toReadonlyArray(yield* Stream.runCollect(model.stream(request)))
  }).pipe(Effect.provide(AnthropicLanguageModel.layer({ apiKey: "test-key", baseURL: url, retry: fastRetry })))

describe("AnthropicLanguageModel", () => {
  it.scopedLive("surfaces whole blocks at content_block_stop, with parsed tool input and usage", () =>
    Effect.gen(function* () {
      const server = yield* MessagesServer.make([
        MessagesServer.message(
          [
            { type: "text", text: "Let me wait." },
            { type: "tool_use", id: "toolu_1", name: "Sleep", input: { duration_ms: 10, note: 'a "quoted" value' } }
          ],
          { chunk: 5, inputTokens: 7, outputTokens: 11 }
        )
      ])
      const events = yield* streamAll(server.url)
      const kinds = events.map((e) => e.type)
      expect(kinds[0]).toBe("message_start")
      expect(kinds.slice(-3)).toEqual(["content_block", "message_delta", "message_stop"])
      const blocks = events.flatMap((e) => (e.type === "content_block" ? [e.block] : []))
      expect(blocks).toEqual([
        { type: "text", text: "Let me wait." },
        { type: "tool_use", id: "toolu_1", name: "Sleep", input: { duration_ms: 10, note: 'a "quoted" value' } }
      ])
      expect(events.filter((e) => e.type === "text_delta").map((e) => (e.type === "text_delta" ? e.text : ""))).toEqual(
        ["Let m", "e wai", "t."]
      )
      const delta = events.find((e) => e.type === "message_delta")
      expect(delta).toEqual({
        type: "message_delta",
        stopReason: "tool_use",
        usage: { input_tokens: 7, output_tokens: 11, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }
      })
      expect(server.requests).toHaveLength(1)
      expect(server.requests[0].body.stream).toBe(true)
      expect(server.requests[0].body.system).toEqual(request.system)
      expect(server.requests[0].headers.authorization).toBe("Bearer test-key")
    })
  )

  it.scopedLive("retries 429 (honouring retry-after-ms) and 529 overloaded, then streams", () =>
    Effect.gen(function* () {
      const server = yield* MessagesServer.make([
        MessagesServer.status(429, "rate_limit_error", { "retry-after-ms": "30" }),
        MessagesServer.status(529, "overloaded_error"),
        MessagesServer.message([{ type: "text", text: "ok" }])
      ])
      const events = yield* streamAll(server.url)
      expect(server.requests).toHaveLength(3)
      expect(server.requests[1].at - server.requests[0].at).toBeGreaterThanOrEqual(28)
      expect(events.flatMap((e) => (e.type === "content_block" ? [e.block] : []))).toEqual([
        { type: "text", text: "ok" }
      ])
    })
  )

  it.scopedLive("does not retry a 400", () =>
    Effect.gen(function* () {
      const server = yield* MessagesServer.make([MessagesServer.status(400, "invalid_request_error")])
      const result = yield* Effect.either(streamAll(server.url))
      expect(server.requests).toHaveLength(1)
      expect(Either.isLeft(result) && result.left.retryable).toBe(false)
      expect(Either.isLeft(result) && result.left.status).toBe(400)
    })
  )

  it.scopedLive("gives up after maxAttempts", () =>
    Effect.gen(function* () {
      const server = yield* MessagesServer.make(
        Array.from({ length: 6 }, () => MessagesServer.status(503, "api_error", { "retry-after": "0" }))
      )
      const result = yield* Effect.either(streamAll(server.url))
      expect(server.requests).toHaveLength(4)
      expect(Either.isLeft(result) && result.left.phase).toBe("request")
    })
  )

  it.scopedLive(
    "a stream cut mid-way fails with a retryable stream-phase error after the blocks already surfaced",
    () =>
      Effect.gen(function* () {
        const server = yield* MessagesServer.make([
          MessagesServer.message(
            [
              { type: "tool_use", id: "toolu_1", name: "Sleep", input: { duration_ms: 1 } },
              { type: "text", text: "and then some more text that never arrives" }
            ],
            { chunk: 8, cutAfter: 8 }
          )
        ])
        const seen: Array<string> = []
        const model = yield* Effect.provide(
          LanguageModel,
          AnthropicLanguageModel.layer({ apiKey: "k", baseURL: server.url, retry: fastRetry })
        )
        const result = yield* model.stream(request).pipe(
          Stream.runForEach((e) => Effect.sync(() => seen.push(e.type === "content_block" ? e.block.type : e.type))),
          Effect.either
        )
        expect(seen).toContain("tool_use")
        expect(seen).not.toContain("message_stop")
        expect(Either.isLeft(result) && result.left.phase).toBe("stream")
        expect(Either.isLeft(result) && result.left.retryable).toBe(true)
      })
  )

  it.scopedLive("an overloaded_error event mid-stream is a retryable stream-phase error", () =>
    Effect.gen(function* () {
      const full = MessagesServer.message([{ type: "text", text: "partial" }])
      const events = full.kind === "stream" ? full.events.slice(0, 4) : []
      const server = yield* MessagesServer.make([
        {
          kind: "stream",
          events: [
            ...events,
            { event: "error", data: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } }
          ]
        }
      ])
      const result = yield* Effect.either(streamAll(server.url))
      expect(server.requests).toHaveLength(1)
      expect(Either.isLeft(result) && result.left.phase).toBe("stream")
      expect(Either.isLeft(result) && result.left.retryable).toBe(true)
    })
  )
})

/**
 * A loopback server that accepts every request and answers with `respond` (by default: never); counts requests and
 * closes its connections when the scope ends.
 */
const silentServer = (respond: (res: Http.ServerResponse) => void = () => {}) =>
  Effect.acquireRelease(
    Effect.async<{ url: string; requests: () => number; server: Http.Server }>((resume) => {
      let requests = 0
      const server = Http.createServer((_req, res) => {
        requests++
        respond(res)
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({ url: `http://127.0.0.1:${port}`, requests: () => requests, server }))
      })
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

describe("AnthropicLanguageModel timeouts", () => {
  it.scopedLive("a server that accepts and never answers fails with the first-byte timeout, after quick retries", () =>
    Effect.gen(function* () {
      const server = yield* silentServer()
      const model = yield* Effect.provide(
        LanguageModel,
        AnthropicLanguageModel.layer({ apiKey: "k", baseURL: server.url, retry: fastRetry, firstByteTimeoutMs: 300 })
      )
      const result = yield* Effect.either(Stream.runDrain(model.stream(request)))
      expect(Either.isLeft(result) && result.left.message).toBe(
        `POST ${server.url}/v1/messages: connection failed: no response within 300 ms (the first-byte timeout; ` +
          "API_TIMEOUT_MS, ARMATURE_FIRST_BYTE_TIMEOUT_MS) (2 retries)"
      )
      expect(server.requests()).toBe(AnthropicLanguageModel.connectionAttempts)
    })
  )

  it.scopedLive("a stream that stalls after it started fails after API_TIMEOUT_MS without an event", () =>
    Effect.gen(function* () {
      const server = yield* silentServer((res) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        const start = {
          type: "message_start",
          message: {
            id: "msg_1",
            type: "message",
            role: "assistant",
            model: "m",
            content: [],
            stop_reason: null,
            usage: { input_tokens: 1, output_tokens: 1 }
          }
        }
        res.write(`event: message_start\ndata: ${JSON.stringify(start)}\n\n`)
      })
      const model = yield* Effect.provide(
        LanguageModel,
        AnthropicLanguageModel.layer({ apiKey: "k", baseURL: server.url, retry: fastRetry, timeoutMs: 500 })
      )
      const seen: Array<string> = []
      const result = yield* model.stream(request).pipe(
        Stream.runForEach((e) => Effect.sync(() => seen.push(e.type))),
        Effect.either
      )
      expect(seen).toEqual(["message_start"])
      expect(Either.isLeft(result) && result.left).toMatchObject({ phase: "stream", retryable: true })
      expect(Either.isLeft(result) && result.left.message).toContain("the stream stalled: no event for 500 ms")
    })
  )

  it("API_TIMEOUT_MS defaults to Claude Code's ten minutes; the first-byte timeout never exceeds it", () => {
    expect(AnthropicLanguageModel.timeoutsOf({})).toEqual({ total: 600_000, firstByte: 60_000 })
    expect(AnthropicLanguageModel.timeoutsOf({ timeoutMs: 5_000 })).toEqual({ total: 5_000, firstByte: 5_000 })
    expect(AnthropicLanguageModel.timeoutsOf({ timeoutMs: 5_000, firstByteTimeoutMs: 100 })).toEqual({
      total: 5_000,
      firstByte: 100
    })
  })
})

describe("retrySchedule", () => {
  it.effect("backs off exponentially with jitter, honours retry-after, stops at maxAttempts", () =>
    Effect.gen(function* () {
      const errors = [
        new ModelError({ message: "429", status: 429, retryable: true, retryAfterMs: 7000, phase: "request" }),
        new ModelError({ message: "529", status: 529, retryable: true, phase: "request" }),
        new ModelError({ message: "529", status: 529, retryable: true, phase: "request" }),
        new ModelError({ message: "529", status: 529, retryable: true, phase: "request" })
      ]
      let attempt = 0
      const flaky = Effect.suspend(() => {
        return Effect.fail(errors[Math.min(attempt++, errors.length - 1)])
      })
      const clockTimes: Array<number> = []
      const tracked = Effect.flatMap(TestClock.currentTimeMillis, (t) => Effect.sync(() => clockTimes.push(t))).pipe(
        Effect.zipRight(flaky)
      )
      const fiber = yield* Effect.fork(
        Effect.either(
          Effect.retry(tracked, retrySchedule({ baseDelay: "1 second", maxDelay: "3 seconds", maxAttempts: 4 }))
        )
      )
      yield* TestClock.adjust("60 seconds")
      const result = yield* Fiber.join(fiber)
      expect(Either.isLeft(result)).toBe(true)
      expect(clockTimes).toHaveLength(4)
      const gaps = clockTimes.slice(1).map((t, i) => t - clockTimes[i])
      expect(gaps[0]).toBe(7000)
      // jitter scales each exponential delay by 0.8–1.2: 2 s → [1600, 2400], 4 s capped at 3 s
      expect(gaps[1]).toBeGreaterThanOrEqual(1600)
      expect(gaps[1]).toBeLessThanOrEqual(2400)
      expect(gaps[2]).toBe(3000)
    })
  )

  it.effect("does not retry non-retryable errors", () =>
    Effect.gen(function* () {
      let attempts = 0
      const result = yield* Effect.either(
        Effect.retry(
          Effect.suspend(() => {
            attempts++
            return Effect.fail(new ModelError({ message: "400", status: 400, retryable: false, phase: "request" }))
          }),
          retrySchedule()
        )
      )
      expect(attempts).toBe(1)
      expect(Either.isLeft(result)).toBe(true)
    })
  )
})
