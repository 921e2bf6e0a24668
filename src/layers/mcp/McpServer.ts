/**
 * Armature's tools as an MCP server: the registry's pool is listed with fail-closed annotations, and every call
 * runs through the ToolExecutor, so the permission pipeline and the hooks apply. Files, agents and skills are offered
 * as resources and prompts (McpServerContent). One SDK `Server` per connection
 * (stdio has one; Streamable HTTP one per session); each lives in its own scope, so closing the connection
 * interrupts its calls in flight and waits for them.
 */
import * as Crypto from "node:crypto"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  type LoggingLevel,
  LoggingLevelSchema,
  type Tool as McpTool,
  SetLevelRequestSchema
} from "@modelcontextprotocol/sdk/types.js"
import { Deferred, Effect, Exit, Fiber, FiberSet, Option, type Scope, Stream } from "effect"
import type { ToolResultContent } from "../../domain/Blocks.js"
import type { ResultEvent } from "../../domain/ExecutorEvent.js"
import type * as Tool from "../../domain/Tool.js"
import { PermissionPolicy } from "../../services/PermissionPolicy.js"
import { ToolExecutor } from "../../services/ToolExecutor.js"
import { ToolRegistry } from "../../services/ToolRegistry.js"
import { annotationsOf } from "./McpAnnotations.js"
import * as McpLogRelay from "./McpLogRelay.js"
import * as McpServerContent from "./McpServerContent.js"
import { StdioLinesTransport } from "./StdioLines.js"

/** The name and version the server announces in `initialize`. */
export const serverInfo = { name: "armature", version: "0.1.0" }

/** The MCP form of one tool: its API schema and fail-closed annotations. */
export const toMcpTool = (tool: Tool.Any): McpTool => ({
  name: tool.name,
  description: tool.description,
  inputSchema: tool.inputJsonSchema as McpTool["inputSchema"],
  annotations: annotationsOf(tool)
})

/** Maps tool_result content to MCP content blocks. */
export const toMcpContent = (content: ToolResultContent): CallToolResult["content"] =>
  typeof content === "string"
    ? [{ type: "text", text: content }]
    : content.map((block) =>
        block.type === "text"
          ? { type: "text" as const, text: block.text }
          : block.type === "image"
            ? { type: "image" as const, data: block.source.data, mimeType: block.source.media_type }
            : { type: "text" as const, text: block.tool_name }
      )

/** One `notifications/progress` payload (without the token). */
export interface ProgressParams {
  readonly progress: number
  readonly total?: number
  readonly message?: string
}

const num = (u: unknown): number | undefined => (typeof u === "number" && Number.isFinite(u) ? u : undefined)

/**
 * The progress notification for a tool's progress event: `{progress, total}` as the tool gave them (MCP-proxied
 * tools), elapsed out of elapsed + remaining milliseconds (Sleep), elapsed milliseconds alone (Bash), or else the
 * event's ordinal `step` with no total. The message is the event's own message, or its data as JSON.
 */
export const progressOf = (data: unknown, step: number): ProgressParams => {
  const record = typeof data === "object" && data !== null ? (data as Record<string, unknown>) : {}
  const message =
    typeof record.message === "string" ? record.message : typeof data === "string" ? data : JSON.stringify(data)
  const progress = num(record.progress)
  if (progress !== undefined) {
    const total = num(record.total)
    return total === undefined ? { progress, message } : { progress, total, message }
  }
  const elapsed = num(record.elapsed_ms)
  const remaining = num(record.remaining_ms)
  if (elapsed !== undefined && remaining !== undefined)
    return { progress: elapsed, total: elapsed + remaining, message }
  if (elapsed !== undefined) return { progress: elapsed, message }
  return { progress: step, message }
}

const severity = (level: LoggingLevel): number => LoggingLevelSchema.options.indexOf(level)

/** The level below which engine logs are not forwarded until the client sets one. */
export const defaultLogLevel: LoggingLevel = "info"

/**
 * Serves the pool over one connection until the client disconnects or the scope closes. Calls in flight are
 * interrupted (and awaited) when the connection closes. Nothing but the protocol is written to the transport.
 */
export const connect = (
  transport: Transport,
  options: { readonly onConnected?: (() => void) | undefined } = {}
): Effect.Effect<void, never, ToolRegistry | ToolExecutor | PermissionPolicy | Scope.Scope> =>
  Effect.gen(function* () {
    const registry = yield* ToolRegistry
    const executor = yield* ToolExecutor
    const policy = yield* PermissionPolicy
    const closed = yield* Deferred.make<void>()
    const runCall = yield* FiberSet.makeRuntime<never, CallToolResult>()

    const pool = registry.pool({ isDenied: policy.isToolDenied })

    const server = new Server(serverInfo, {
      capabilities: {
        tools: { listChanged: true },
        logging: {},
        resources: { subscribe: true },
        prompts: {},
        completions: {}
      }
    })
    yield* McpServerContent.install(server)
    server.onclose = () => {
      Deferred.unsafeDone(closed, Exit.void)
    }

    let logLevel: LoggingLevel = defaultLogLevel
    server.setRequestHandler(SetLevelRequestSchema, async (request) => {
      logLevel = request.params.level
      return {}
    })

    server.setRequestHandler(ListToolsRequestSchema, () =>
      Effect.runPromise(Effect.map(pool, (tools) => ({ tools: tools.map(toMcpTool) })))
    )

    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const name = request.params.name
      if (Option.isNone(await Effect.runPromise(registry.lookup(name)))) {
        // A plain Error with a code: the SDK sends its message as is (an McpError's carries an "MCP error" prefix).
        throw Object.assign(new Error(`Unknown tool: ${name}`), { code: ErrorCode.InvalidParams })
      }
      const id = `toolu_mcp_${Crypto.randomUUID().replace(/-/g, "")}`
      const token = request.params._meta?.progressToken
      let step = 0
      const call = Effect.gen(function* () {
        yield* Effect.logDebug(`tools/call ${name}`)
        const discovered = new Set((yield* pool).map((t) => t.name))
        const events = executor.runBatch([{ type: "tool_use", id, name, input: request.params.arguments ?? {} }], {
          discovered
        })
        const result = yield* events.pipe(
          Stream.tap((event) =>
            event.type === "progress" && token !== undefined
              ? Effect.promise(() =>
                  extra.sendNotification({
                    method: "notifications/progress",
                    params: { progressToken: token, ...progressOf(event.data, ++step) }
                  })
                ).pipe(Effect.ignore)
              : Effect.void
          ),
          Stream.filter((event): event is ResultEvent => event.type === "tool_result"),
          Stream.runHead
        )
        return Option.match(result, {
          onNone: (): CallToolResult => ({ content: [{ type: "text", text: `No result for ${name}` }], isError: true }),
          onSome: (event): CallToolResult =>
            event.is_error
              ? { content: toMcpContent(event.content), isError: true }
              : { content: toMcpContent(event.content) }
        })
      }).pipe(
        Effect.catchAll(
          (error): Effect.Effect<CallToolResult> =>
            Effect.succeed({ content: [{ type: "text", text: error.message }], isError: true })
        )
      )
      const fiber = runCall(call)
      extra.signal.addEventListener("abort", () => fiber.unsafeInterruptAsFork(fiber.id()), { once: true })
      return Effect.runPromise(Fiber.join(fiber))
    })

    // A server's tools arrive one registration at a time: one notification per burst is enough.
    const notify = registry.changes.pipe(
      Stream.debounce("20 millis"),
      Stream.runForEach(() => Effect.promise(() => server.sendToolListChanged().catch(() => undefined)))
    )

    const unsubscribe = McpLogRelay.subscribe((level, logger, data) => {
      if (severity(level) < severity(logLevel)) return
      server.sendLoggingMessage({ level, logger, data }).catch(() => undefined)
    })
    yield* Effect.addFinalizer(() => Effect.sync(unsubscribe))
    yield* Effect.acquireRelease(
      Effect.promise(() => server.connect(transport)),
      () => Effect.promise(() => server.close().catch(() => undefined))
    )
    yield* Effect.forkScoped(notify)
    options.onConnected?.()
    yield* Deferred.await(closed)
  })

/**
 * Serves over stdio (by default) until stdin ends, the client disconnects or the scope closes. Keep logs off
 * stdout when serving over stdio.
 */
export const serve = (
  transport: Transport = new StdioLinesTransport()
): Effect.Effect<void, never, ToolRegistry | ToolExecutor | PermissionPolicy> => Effect.scoped(connect(transport))
