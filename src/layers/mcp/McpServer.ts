/**
 * Armature's tools as an MCP server: the registry's pool is listed with annotations derived from each tool's flags,
 * and every call runs through the ToolExecutor, so the permission pipeline and the hooks apply.
 */
import * as Crypto from "node:crypto"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type Tool as McpTool
} from "@modelcontextprotocol/sdk/types.js"
import { Deferred, Effect, Exit, Option, Runtime, type Scope, Stream } from "effect"
import type { ToolResultContent } from "../../domain/Blocks.js"
import type { ResultEvent } from "../../domain/ExecutorEvent.js"
import * as Tool from "../../domain/Tool.js"
import { PermissionPolicy } from "../../services/PermissionPolicy.js"
import { ToolExecutor } from "../../services/ToolExecutor.js"
import { ToolRegistry } from "../../services/ToolRegistry.js"

/** The name and version the server announces in `initialize`. */
export const serverInfo = { name: "armature", version: "0.1.0" }

/** The MCP form of one tool: its API schema, with annotations computed (fail-closed) on an empty input. */
export const toMcpTool = (tool: Tool.Any): McpTool => {
  const readOnly = Tool.safely(tool.isReadOnly, {})
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputJsonSchema as McpTool["inputSchema"],
    annotations: {
      readOnlyHint: readOnly,
      destructiveHint: !readOnly && Tool.safely(tool.isDestructive, {}),
      openWorldHint: tool.category === "network" || tool.category === "mcp"
    }
  }
}

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

/**
 * Serves the pool over `transport` (stdio by default) until the client disconnects or the scope closes. Nothing
 * but the protocol is written to the transport: keep logs off stdout when serving over stdio.
 */
export const serve = (
  transport: Transport = new StdioServerTransport()
): Effect.Effect<void, never, ToolRegistry | ToolExecutor | PermissionPolicy | Scope.Scope> =>
  Effect.gen(function* () {
    const registry = yield* ToolRegistry
    const executor = yield* ToolExecutor
    const policy = yield* PermissionPolicy
    const runtime = yield* Effect.runtime<never>()
    const closed = yield* Deferred.make<void>()

    const pool = registry.pool({ isDenied: policy.isToolDenied })

    const server = new Server(serverInfo, { capabilities: { tools: { listChanged: true } } })
    server.onclose = () => {
      Deferred.unsafeDone(closed, Exit.void)
    }

    server.setRequestHandler(ListToolsRequestSchema, () =>
      Runtime.runPromise(runtime)(Effect.map(pool, (tools) => ({ tools: tools.map(toMcpTool) })))
    )

    server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
      const id = `toolu_mcp_${Crypto.randomUUID().replace(/-/g, "")}`
      const token = request.params._meta?.progressToken
      let step = 0
      const call = Effect.gen(function* () {
        const discovered = new Set((yield* pool).map((t) => t.name))
        const events = executor.runBatch(
          [{ type: "tool_use", id, name: request.params.name, input: request.params.arguments ?? {} }],
          { discovered }
        )
        const result = yield* events.pipe(
          Stream.tap((event) =>
            event.type === "progress" && token !== undefined
              ? Effect.promise(() =>
                  extra.sendNotification({
                    method: "notifications/progress",
                    params: {
                      progressToken: token,
                      progress: ++step,
                      message: typeof event.data === "string" ? event.data : JSON.stringify(event.data)
                    }
                  })
                ).pipe(Effect.ignore)
              : Effect.void
          ),
          Stream.filter((event): event is ResultEvent => event.type === "tool_result"),
          Stream.runHead
        )
        return Option.match(result, {
          onNone: (): CallToolResult => ({
            content: [{ type: "text", text: `No result for ${request.params.name}` }],
            isError: true
          }),
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
      return Runtime.runPromise(runtime)(call, { signal: extra.signal })
    })

    // A server's tools arrive one registration at a time: one notification per burst is enough.
    const notify = registry.changes.pipe(
      Stream.debounce("20 millis"),
      Stream.runForEach(() => Effect.promise(() => server.sendToolListChanged().catch(() => undefined)))
    )

    yield* Effect.acquireRelease(
      Effect.promise(() => server.connect(transport)),
      () => Effect.promise(() => server.close().catch(() => undefined))
    )
    yield* Effect.forkScoped(notify)
    yield* Deferred.await(closed)
  })
