/**
 * One MCP server, supervised: connects, registers its tools as `mcp__{server}__{tool}`, follows
 * `notifications/tools/list_changed`, and reconnects with backoff when the server crashes or drops.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import {
  type CallToolResult,
  ErrorCode,
  McpError,
  type Tool as McpTool,
  ToolListChangedNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"
import { Ajv, type ErrorObject } from "ajv"
import {
  Data,
  Deferred,
  Duration,
  Effect,
  Exit,
  Fiber,
  FiberSet,
  Option,
  ParseResult,
  Queue,
  Ref,
  Schedule,
  Schema,
  SchemaAST,
  type Scope,
  Stream,
  SubscriptionRef
} from "effect"
import type { ResultContentBlock } from "../../domain/Blocks.js"
import { ToolFailure } from "../../domain/Errors.js"
import * as McpConfig from "../../domain/McpConfig.js"
import * as Tool from "../../domain/Tool.js"
import { pendingServersKey, type ServerState, type ServerStatus } from "../../services/McpClients.js"
import { Session } from "../../services/Session.js"
import { ToolRegistry } from "../../services/ToolRegistry.js"

/** Tunables of the client side; the defaults suit interactive use, tests shorten them. */
export interface Options {
  /** How long one connection attempt (spawn + initialize) may take. Default 30 s. */
  readonly connectTimeout?: Duration.DurationInput | undefined
  /** A call with no response and no progress for this long fails. Default 10 minutes. */
  readonly toolTimeout?: Duration.DurationInput | undefined
  /** The backoff between connection attempts; it restarts after each successful connection. */
  readonly reconnectSchedule?: Schedule.Schedule<unknown, unknown> | undefined
  /** How long a call waits for a (re)connection before failing. Default 30 s. */
  readonly reconnectWait?: Duration.DurationInput | undefined
  /** What happens to a stdio server's stderr. Default "ignore". */
  readonly stderr?: "ignore" | "inherit" | undefined
}

/** The default reconnection backoff: 200 ms doubling, capped at 30 s, forever. */
export const defaultReconnectSchedule: Schedule.Schedule<unknown, unknown> = Schedule.exponential("200 millis").pipe(
  Schedule.union(Schedule.spaced("30 seconds"))
)

/** The connection ended while a call was in flight. */
class Disconnected extends Data.TaggedError("Disconnected")<{ readonly reason: string }> {}

/** A connection attempt failed. */
class ConnectFailed extends Data.TaggedError("ConnectFailed")<{ readonly reason: string }> {}

interface Connection {
  readonly client: Client
  readonly generation: number
  /** Completes with a reason when the transport closes. */
  readonly closed: Deferred.Deferred<string>
}

/** A running supervisor, as McpClientsLive sees it. */
export interface Supervisor {
  readonly status: Effect.Effect<ServerStatus>
  /** Completes after the first connection attempt, successful or not. */
  readonly ready: Effect.Effect<void>
}

/** A progress notification as passed to `ctx.progress`. */
interface ProgressData {
  readonly progress: number
  readonly total: number | undefined
  readonly message: string | undefined
}

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e))

// ---------------------------------------------------------------------------------------------------------------
// Input: any object, validated by ajv against the server's own JSON Schema, with readable issues.

const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false })

const expectedAst = (type: unknown): Schema.Schema.AnyNoContext => {
  switch (type) {
    case "string":
      return Schema.String
    case "number":
      return Schema.Number
    case "integer":
      return Schema.Int
    case "boolean":
      return Schema.Boolean
    case "array":
      return Schema.Array(Schema.Unknown)
    case "null":
      return Schema.Null
    default:
      return Schema.Object
  }
}

const pointerPath = (instancePath: string): Array<PropertyKey> =>
  instancePath === ""
    ? []
    : instancePath
        .slice(1)
        .split("/")
        .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
        .map((s) => (/^\d+$/.test(s) ? Number(s) : s))

const valueAt = (input: unknown, path: ReadonlyArray<PropertyKey>): unknown =>
  path.reduce<unknown>(
    (v, k) => (typeof v === "object" && v !== null ? (v as Record<PropertyKey, unknown>)[k] : undefined),
    input
  )

const withPath = (path: ReadonlyArray<PropertyKey>, input: unknown, issue: ParseResult.ParseIssue) =>
  path.length === 0 ? issue : new ParseResult.Pointer(path as [PropertyKey, ...Array<PropertyKey>], input, issue)

const issueOf = (input: unknown, error: ErrorObject): ParseResult.ParseIssue => {
  const path = pointerPath(error.instancePath)
  const params = error.params as Record<string, unknown>
  if (error.keyword === "required" && typeof params.missingProperty === "string") {
    return withPath(
      [...path, params.missingProperty],
      input,
      new ParseResult.Missing(new SchemaAST.Type(SchemaAST.unknownKeyword))
    )
  }
  if (error.keyword === "additionalProperties" && typeof params.additionalProperty === "string") {
    const key = params.additionalProperty
    return withPath([...path, key], input, new ParseResult.Unexpected(valueAt(input, [...path, key])))
  }
  const actual = valueAt(input, path)
  if (error.keyword === "type") return withPath(path, input, new ParseResult.Type(expectedAst(params.type).ast, actual))
  return withPath(path, input, new ParseResult.Type(Schema.Unknown.ast, actual, error.message ?? error.keyword))
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The input Schema of an MCP tool: accepts any object and, when the server's JSON Schema compiles, validates it
 * with ajv, turning each ajv error into a ParseResult issue (missing, unexpected, wrong type) at its path.
 */
export const inputSchemaOf = (jsonSchema: Record<string, unknown>): Schema.Schema<Record<string, unknown>> => {
  const { $schema: _ignored, ...rest } = jsonSchema
  const validate = Option.liftThrowable(() => ajv.compile(rest))()
  return Schema.declare([], {
    decode: () => (input, _options, ast) => {
      if (!isObject(input)) return ParseResult.fail(new ParseResult.Type(ast, input, "Expected an object"))
      if (Option.isNone(validate) || validate.value(input) === true) return ParseResult.succeed(input)
      const errors = validate.value.errors ?? []
      const issues = errors.map((e) => issueOf(input, e))
      return issues.length === 0
        ? ParseResult.fail(new ParseResult.Type(ast, input, "Invalid input"))
        : ParseResult.fail(new ParseResult.Composite(ast, input, issues as [ParseResult.ParseIssue]))
    },
    encode: () => (input) => ParseResult.succeed(input)
  }).annotations({
    identifier: "McpToolInput",
    jsonSchema: { type: "object", properties: {} }
  }) as unknown as Schema.Schema<Record<string, unknown>>
}

// ---------------------------------------------------------------------------------------------------------------
// Output: MCP content blocks to tool_result content.

/** Maps an MCP tool result's content to tool_result blocks (text and image; others described in text). */
export const toContent = (result: CallToolResult): ReadonlyArray<ResultContentBlock> => {
  const blocks = result.content.map((block): ResultContentBlock => {
    switch (block.type) {
      case "text":
        return { type: "text", text: block.text }
      case "image":
        return { type: "image", source: { type: "base64", media_type: block.mimeType, data: block.data } }
      case "audio":
        return { type: "text", text: `[audio ${block.mimeType}, ${block.data.length} base64 characters]` }
      case "resource":
        return {
          type: "text",
          text:
            "text" in block.resource && typeof block.resource.text === "string"
              ? block.resource.text
              : `[resource ${block.resource.uri}${block.resource.mimeType ? ` (${block.resource.mimeType})` : ""}]`
        }
      default:
        return { type: "text", text: `[resource link: ${block.name} ${block.uri}]` }
    }
  })
  if (blocks.length === 0 && result.structuredContent !== undefined) {
    return [{ type: "text", text: JSON.stringify(result.structuredContent) }]
  }
  return blocks
}

const textOf = (blocks: ReadonlyArray<ResultContentBlock>): string =>
  blocks
    .filter((b) => b.type === "text")
    .map((b) => b.text)
    .join("\n")

// ---------------------------------------------------------------------------------------------------------------
// The supervisor.

const makeTransport = (config: McpConfig.ServerConfig, options: Options): Transport =>
  McpConfig.isHttp(config)
    ? new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: { ...config.headers } } })
    : new StdioClientTransport({
        command: config.command,
        args: [...config.args],
        env: { ...(process.env as Record<string, string>), ...config.env },
        stderr: options.stderr ?? "ignore",
        ...(config.cwd !== undefined ? { cwd: config.cwd } : {})
      })

/** How long a stdio server has to exit after its stdin is closed before it gets SIGTERM (the SDK waits 2 s). */
export const stdioCloseGraceMs = 200

/**
 * Closes a client. For a stdio server: stdin is closed, and a server that has not exited after a short grace gets
 * SIGTERM (then the SDK's SIGKILL), so shutting down never waits the SDK's full two seconds per server.
 */
const closeClient = (client: Client, transport: Transport): Promise<void> => {
  const pid = transport instanceof StdioClientTransport ? transport.pid : null
  const timer =
    pid === null
      ? undefined
      : setTimeout(() => {
          try {
            process.kill(pid, "SIGTERM")
          } catch {
            // already gone
          }
        }, stdioCloseGraceMs)
  return client
    .close()
    .catch(() => undefined)
    .finally(() => clearTimeout(timer))
}

/**
 * Starts supervising one server in the current scope and returns at once: the first connection happens in the
 * background. Closing the scope closes the client (a stdio server is killed) and unregisters its tools.
 */
export const start = (
  name: string,
  config: McpConfig.ServerConfig,
  options: Options = {}
): Effect.Effect<Supervisor, never, ToolRegistry | Session | Scope.Scope> =>
  Effect.gen(function* () {
    const registry = yield* ToolRegistry
    const session = yield* Session
    const connectTimeout = Duration.decode(options.connectTimeout ?? "30 seconds")
    const toolTimeoutMs = Duration.toMillis(Duration.decode(options.toolTimeout ?? "10 minutes"))
    const reconnectWait = Duration.decode(options.reconnectWait ?? "30 seconds")
    const schedule = options.reconnectSchedule ?? defaultReconnectSchedule

    const connection = yield* SubscriptionRef.make<Option.Option<Connection>>(Option.none())
    const state = yield* Ref.make<ServerState>("connecting")
    const lastError = yield* Ref.make<string | undefined>(undefined)
    const generations = yield* Ref.make(0)
    const connections = yield* Ref.make(0)
    /** Registered tool names, with a fingerprint of the definition they were made from. */
    const registered = yield* Ref.make<ReadonlyMap<string, string>>(new Map())
    const syncLock = yield* Effect.makeSemaphore(1)
    const firstAttempt = yield* Deferred.make<void>()
    const run = yield* FiberSet.makeRuntime<never>()

    const setPending = (pending: boolean) =>
      session.state.modify(pendingServersKey, (names) => {
        const others = names.filter((n) => n !== name)
        return [undefined, pending ? [...others, name] : others] as const
      })

    // -- calls ---------------------------------------------------------------------------------------------------

    const awaitConnection = (after: number) =>
      connection.changes.pipe(
        Stream.filterMap((c) => Option.filter(c, (conn) => conn.generation > after)),
        Stream.runHead,
        Effect.flatten,
        Effect.timeoutFail({
          duration: reconnectWait,
          onTimeout: () => undefined
        }),
        Effect.catchAll(() =>
          Effect.flatMap(Ref.get(lastError), (error) =>
            Effect.fail(
              new ToolFailure({
                message: `MCP server ${name} is not connected${error === undefined ? "" : ` (${error})`}`
              })
            )
          )
        )
      )

    const request = (
      conn: Connection,
      tool: string,
      args: Record<string, unknown>,
      onProgress: (data: ProgressData) => void
    ): Effect.Effect<CallToolResult, ToolFailure | Disconnected> =>
      Effect.async<CallToolResult, ToolFailure | Disconnected>((resume) => {
        const controller = new AbortController()
        const promise = conn.client.callTool({ name: tool, arguments: args }, undefined, {
          signal: controller.signal,
          timeout: toolTimeoutMs,
          resetTimeoutOnProgress: true,
          onprogress: (p) => onProgress({ progress: p.progress, total: p.total, message: p.message })
        })
        promise.then(
          (result) => resume(Effect.succeed(result as CallToolResult)),
          (error: unknown) => {
            if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
              resume(Effect.fail(new Disconnected({ reason: error.message })))
            } else if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
              resume(
                Effect.fail(
                  new ToolFailure({
                    message: `MCP tool ${tool} on server ${name} timed out after ${toolTimeoutMs} ms without progress`
                  })
                )
              )
            } else if (error instanceof McpError) {
              resume(Effect.fail(new ToolFailure({ message: `MCP server ${name}: ${error.message}` })))
            } else if (McpConfig.isHttp(config)) {
              // A transport error on HTTP means the server is gone: close, so the supervisor reconnects.
              conn.client.close().catch(() => undefined)
              resume(Effect.fail(new Disconnected({ reason: errorText(error) })))
            } else {
              resume(Effect.fail(new ToolFailure({ message: `MCP server ${name}: ${errorText(error)}` })))
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

    /** One request; progress events reach `ctx.progress` in order, all of them before the result. */
    const callOnce = (conn: Connection, tool: string, args: Record<string, unknown>, ctx: Tool.ToolContext) =>
      Effect.gen(function* () {
        const queue = yield* Queue.unbounded<Option.Option<ProgressData>>()
        const pump = yield* Effect.fork(
          Effect.iterate(true, {
            while: (more) => more,
            body: () =>
              Effect.flatMap(
                Queue.take(queue),
                Option.match({ onNone: () => Effect.succeed(false), onSome: (p) => Effect.as(ctx.progress(p), true) })
              )
          })
        )
        const result = yield* Effect.exit(request(conn, tool, args, (p) => queue.unsafeOffer(Option.some(p))))
        yield* Queue.offer(queue, Option.none())
        yield* Fiber.join(pump)
        return yield* result
      })

    const callTool = (tool: string, readOnly: boolean) => (args: Record<string, unknown>, ctx: Tool.ToolContext) =>
      Effect.gen(function* () {
        const conn = yield* awaitConnection(0)
        const result = yield* callOnce(conn, tool, args, ctx).pipe(
          Effect.catchTag("Disconnected", (d) =>
            readOnly
              ? awaitConnection(conn.generation).pipe(
                  Effect.flatMap((next) => callOnce(next, tool, args, ctx)),
                  Effect.catchTag("Disconnected", (again) =>
                    Effect.fail(
                      new ToolFailure({
                        message: `MCP server ${name} disconnected during the call to ${tool} (${again.reason}), again after reconnecting`
                      })
                    )
                  ),
                  Effect.catchAll((e) =>
                    Effect.fail(
                      new ToolFailure({
                        message: `MCP server ${name} disconnected during the call to ${tool} (${d.reason}); retry failed: ${e.message}`
                      })
                    )
                  )
                )
              : Effect.fail(
                  new ToolFailure({
                    message: `MCP server ${name} disconnected during the call to ${tool} (${d.reason}); the call was not retried because it may have side effects`
                  })
                )
          )
        )
        const blocks = toContent(result)
        if (result.isError === true) {
          const text = textOf(blocks)
          return yield* Effect.fail(
            new ToolFailure({ message: text === "" ? `MCP tool ${tool} on server ${name} returned an error` : text })
          )
        }
        return blocks
      })

    // -- tools ---------------------------------------------------------------------------------------------------

    const makeTool = (spec: McpTool) => {
      const readOnly = spec.annotations?.readOnlyHint === true
      const destructive = spec.annotations?.destructiveHint === true && !readOnly
      const jsonSchema = spec.inputSchema as Record<string, unknown>
      return Tool.make({
        name: McpConfig.toolName(name, spec.name),
        description: spec.description ?? spec.title ?? spec.annotations?.title ?? `${spec.name} (MCP server ${name})`,
        input: inputSchemaOf(jsonSchema),
        output: Schema.Array(Schema.Unknown),
        category: "mcp",
        searchHint: `${name} ${spec.name} ${spec.title ?? ""}`.trim(),
        isReadOnly: () => readOnly,
        isConcurrencySafe: () => readOnly,
        isDestructive: () => destructive,
        interruptBehavior: "cancel",
        call: callTool(spec.name, readOnly),
        toResult: (blocks) => blocks as ReadonlyArray<ResultContentBlock>
      }).pipe(Effect.map((tool): Tool.Any => ({ ...tool, inputJsonSchema: jsonSchema as Tool.JsonObjectSchema })))
    }

    const listAll = (client: Client) =>
      Effect.tryPromise({
        try: async () => {
          const tools: Array<McpTool> = []
          let cursor: string | undefined
          do {
            const page = await client.listTools(cursor === undefined ? undefined : { cursor })
            tools.push(...page.tools)
            cursor = page.nextCursor
          } while (cursor !== undefined)
          return tools
        },
        catch: (e) => new ConnectFailed({ reason: `tools/list failed: ${errorText(e)}` })
      })

    /** Makes the registry hold exactly the server's current tools, replacing the ones whose definition changed. */
    const sync = (client: Client) =>
      syncLock.withPermits(1)(
        Effect.gen(function* () {
          const specs = yield* listAll(client)
          const before = yield* Ref.get(registered)
          const after = new Map<string, string>()
          for (const spec of specs) {
            const toolName = McpConfig.toolName(name, spec.name)
            const fingerprint = JSON.stringify(spec)
            after.set(toolName, fingerprint)
            if (before.get(toolName) === fingerprint) continue
            if (before.has(toolName)) yield* registry.unregister(toolName)
            const made = yield* Effect.either(makeTool(spec))
            const added = made._tag === "Right" ? yield* Effect.either(registry.register(made.right)) : made
            if (added._tag === "Left") {
              after.delete(toolName)
              yield* Effect.logWarning(`MCP server ${name}: tool ${spec.name} not registered: ${added.left.message}`)
            }
          }
          for (const old of before.keys()) {
            if (!after.has(old)) yield* registry.unregister(old)
          }
          yield* Ref.set(registered, after)
        })
      )

    const unregisterAll = Effect.flatMap(Ref.getAndSet(registered, new Map()), (names) =>
      Effect.forEach(names.keys(), (n) => registry.unregister(n), { discard: true })
    )

    // -- connection ----------------------------------------------------------------------------------------------

    const connect = Effect.gen(function* () {
      const closed = yield* Deferred.make<string>()
      const generation = yield* Ref.updateAndGet(generations, (n) => n + 1)
      const client = new Client({ name: "armature", version: "0.1.0" }, { capabilities: {} })
      client.onclose = () => {
        Deferred.unsafeDone(closed, Exit.succeed("connection closed"))
      }
      client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
        run(
          sync(client).pipe(
            Effect.catchAll((e) => Effect.logWarning(`MCP server ${name}: refreshing tools failed: ${e.reason}`))
          )
        )
      })
      const transport = makeTransport(config, options)
      const close = Effect.promise(() => closeClient(client, transport))
      yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: (signal) => client.connect(transport, { signal, timeout: Duration.toMillis(connectTimeout) }),
          catch: (e) => new ConnectFailed({ reason: errorText(e) })
        }).pipe(
          Effect.timeoutFail({
            duration: connectTimeout,
            onTimeout: () => new ConnectFailed({ reason: `no answer within ${Duration.format(connectTimeout)}` })
          }),
          Effect.onError(() => close)
        ),
        () => close
      )
      yield* sync(client)
      return { client, generation, closed } satisfies Connection
    })

    /** Records a failed attempt; only the first failure of a series is logged as a warning. */
    const failed = (e: ConnectFailed) =>
      Effect.gen(function* () {
        const previous = yield* Ref.getAndSet(state, "failed")
        yield* Ref.set(lastError, e.reason)
        yield* setPending(false)
        yield* Deferred.succeed(firstAttempt, undefined)
        const text = `MCP server ${name}: ${e.reason}`
        yield* previous === "failed" ? Effect.logDebug(text) : Effect.logWarning(text)
      })

    /** One connection's life: connect (retrying with backoff), serve until the transport closes. */
    const lifetime = Effect.scoped(
      Effect.gen(function* () {
        const conn = yield* connect.pipe(Effect.tapError(failed), Effect.retry(schedule))
        yield* SubscriptionRef.set(connection, Option.some(conn))
        yield* Ref.set(state, "connected")
        yield* Ref.update(connections, (n) => n + 1)
        yield* setPending(false)
        yield* Deferred.succeed(firstAttempt, undefined)
        const reason = yield* Deferred.await(conn.closed)
        yield* SubscriptionRef.set(connection, Option.none())
        yield* Ref.set(lastError, reason)
        yield* Ref.set(state, "reconnecting")
        yield* setPending(true)
      })
    )

    yield* setPending(true)
    yield* Effect.addFinalizer(() =>
      Effect.all([unregisterAll, Ref.set(state, "closed"), setPending(false)], { discard: true })
    )
    yield* Effect.forkScoped(Effect.forever(lifetime))

    return {
      status: Effect.gen(function* () {
        return {
          name,
          state: yield* Ref.get(state),
          tools: [...(yield* Ref.get(registered)).keys()].sort(),
          connections: yield* Ref.get(connections),
          lastError: yield* Ref.get(lastError)
        }
      }),
      ready: Deferred.await(firstAttempt)
    }
  })
