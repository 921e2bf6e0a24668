/**
 * One `tools/call` to an MCP server, with every progress notification delivered before the result.
 *
 * The SDK hands notifications to their handlers a microtask later than responses, and forgets a request's
 * progress handler as soon as its response arrives: a server that reports progress right before answering loses
 * its last notification. So the calls here carry their own progress tokens, and `ProgressRoutes` taps the
 * transport to route those notifications synchronously, in arrival order, ahead of the SDK. The per-call
 * inactivity timeout (reset by progress) is kept here too, since the SDK no longer sees the progress.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { type CallToolResult, ErrorCode, type JSONRPCMessage, McpError } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Fiber, Option, Queue, Schema } from "effect"
import { McpRequestFailed, McpTimedOut } from "../../domain/McpFailure.js"
import * as Spans from "../observability/Spans.js"
import { errorText } from "./McpToolShape.js"

/** The connection ended while a call was in flight. */
export class Disconnected extends Schema.TaggedError<Disconnected>()("Disconnected", { reason: Schema.String }) {}

/** A progress notification as passed to `ctx.progress`. */
export interface ProgressData {
  readonly progress: number
  readonly total: number | undefined
  readonly message: string | undefined
}

/** The longest timeout a timer takes; the SDK's own request timeout is pushed out to it. */
const maxTimerMs = 2 ** 31 - 1

/** Progress notifications of one connection, routed by token to the call that owns it. */
export class ProgressRoutes {
  private readonly routes = new Map<string, (data: ProgressData) => void>()
  private next = 0

  /** Taps `transport` (before the client connects to it: the SDK calls the tap first, synchronously). */
  tap(transport: Transport): void {
    transport.onmessage = (message: JSONRPCMessage) => {
      if (!("method" in message) || message.method !== "notifications/progress" || "id" in message) return
      const params = (message.params ?? {}) as Record<string, unknown>
      const route = this.routes.get(String(params.progressToken))
      if (route === undefined || typeof params.progress !== "number") return
      route({
        progress: params.progress,
        total: typeof params.total === "number" ? params.total : undefined,
        message: typeof params.message === "string" ? params.message : undefined
      })
    }
  }

  /** A fresh token whose notifications go to `route` until `close(token)`. */
  open(route: (data: ProgressData) => void): string {
    const token = `armature-${++this.next}`
    this.routes.set(token, route)
    return token
  }

  close(token: string): void {
    this.routes.delete(token)
  }
}

/** Where a call goes. */
export interface Target {
  readonly client: Client
  readonly routes: ProgressRoutes
  /** The server's name, for messages. */
  readonly server: string
  /** On HTTP a transport error means the server is gone (the connection is closed so it is re-established). */
  readonly http: boolean
}

const request = (
  target: Target,
  tool: string,
  args: Record<string, unknown>,
  onProgress: (data: ProgressData) => void
): Effect.Effect<CallToolResult, McpRequestFailed | Disconnected> =>
  Effect.async<CallToolResult, McpRequestFailed | Disconnected>((resume) => {
    const controller = new AbortController()
    const token = target.routes.open(onProgress)
    const promise = target.client
      .callTool({ name: tool, arguments: args, _meta: { progressToken: token } }, undefined, {
        signal: controller.signal,
        timeout: maxTimerMs
      })
      .finally(() => target.routes.close(token))
    promise.then(
      (result) => resume(Effect.succeed(result as CallToolResult)),
      (error: unknown) => {
        if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
          resume(Effect.fail(new Disconnected({ reason: error.message })))
        } else if (error instanceof McpError) {
          resume(
            Effect.fail(
              new McpRequestFailed({
                server: target.server,
                message: `MCP server ${target.server}: ${errorText(error)}`,
                transient: true
              })
            )
          )
        } else if (target.http) {
          target.client.close().catch(() => undefined)
          resume(Effect.fail(new Disconnected({ reason: errorText(error) })))
        } else {
          resume(
            Effect.fail(
              new McpRequestFailed({
                server: target.server,
                message: `MCP server ${target.server}: ${errorText(error)}`,
                transient: true
              })
            )
          )
        }
      }
    )
    // Interruption aborts the request: the SDK sends notifications/cancelled before the promise settles.
    return Effect.promise(() => {
      controller.abort("The call was interrupted")
      return promise.then(
        () => undefined,
        () => undefined
      )
    })
  })

/**
 * Calls `tool` once. Progress reaches `progress` in order, all of it before the result; the call fails when
 * `timeoutMs` pass with neither progress nor result (and is then cancelled on the server).
 */
export const callOnce = (
  target: Target,
  tool: string,
  args: Record<string, unknown>,
  progress: (data: ProgressData) => Effect.Effect<void>,
  timeoutMs: number
): Effect.Effect<CallToolResult, McpRequestFailed | McpTimedOut | Disconnected> =>
  Effect.gen(function* () {
    const queue = yield* Queue.unbounded<Option.Option<ProgressData>>()
    const pump = yield* Effect.fork(
      Effect.iterate(true, {
        while: (more) => more,
        body: () =>
          Effect.flatMap(
            Queue.take(queue),
            Option.match({ onNone: () => Effect.succeed(false), onSome: (p) => Effect.as(progress(p), true) })
          )
      })
    )
    let touched = Date.now()
    const watchdog = Effect.gen(function* () {
      for (;;) {
        const idle = Date.now() - touched
        if (idle >= timeoutMs) {
          return yield* Effect.fail(
            new McpTimedOut({
              server: target.server,
              tool,
              timeoutMs,
              message: `MCP tool ${tool} on server ${target.server} timed out after ${timeoutMs} ms without progress`
            })
          )
        }
        yield* Effect.sleep(timeoutMs - idle)
      }
    })
    const onProgress = (p: ProgressData) => {
      touched = Date.now()
      queue.unsafeOffer(Option.some(p))
    }
    const result = yield* Effect.exit(Effect.raceFirst(request(target, tool, args, onProgress), watchdog))
    yield* Queue.offer(queue, Option.none())
    yield* Fiber.join(pump)
    return yield* result
  }).pipe(
    Spans.span(Spans.names.mcp("tools/call", tool), {
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": tool,
      "armature.mcp.server": target.server
    })
  )
