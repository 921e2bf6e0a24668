/**
 * One MCP server, supervised: connects, registers its tools as `mcp__{server}__{tool}`, follows
 * `notifications/tools/list_changed`, and reconnects with backoff when the server crashes or drops.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { type Tool as McpTool, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import {
  Chunk,
  type Context,
  Deferred,
  Duration,
  Effect,
  Exit,
  FiberSet,
  Option,
  Ref,
  Schedule,
  Schema,
  type Scope,
  Stream,
  SubscriptionRef
} from "effect"
import type { ResultContentBlock } from "../../domain/Blocks.js"
import * as McpConfig from "../../domain/McpConfig.js"
import * as McpFailure from "../../domain/McpFailure.js"
import * as McpOAuthText from "../../domain/McpOAuth.js"
import * as Tool from "../../domain/Tool.js"
import { Approver } from "../../services/Approver.js"
import { defaultModel, LanguageModel } from "../../services/LanguageModel.js"
import {
  McpElicitor,
  type McpOptions,
  pendingServersKey,
  type ServerState,
  type ServerStatus
} from "../../services/McpClients.js"
import { Sandbox, type SandboxError } from "../../services/Sandbox.js"
import { Session } from "../../services/Session.js"
import { ToolRegistry } from "../../services/ToolRegistry.js"
import * as McpCall from "./McpCall.js"
import * as McpClientHandlers from "./McpClientHandlers.js"
import * as McpOAuth from "./McpOAuth.js"
import * as McpSampling from "./McpSampling.js"
import { capOutput, errorText, inputSchemaOf, textOf, toContent, withServerHints } from "./McpToolShape.js"

/** Tunables of the client side (declared with the service, whose module needs no MCP SDK). */
export type Options = McpOptions

/** The default reconnection backoff: 200 ms doubling, capped at 30 s, forever. */
const defaultReconnectSchedule: Schedule.Schedule<unknown, unknown> = Schedule.exponential("200 millis").pipe(
  Schedule.union(Schedule.spaced("30 seconds"))
)

/** A connection attempt failed; `needsLogin` when an HTTP server wants an OAuth login first. */
class ConnectFailed extends Schema.TaggedError<ConnectFailed>()("ConnectFailed", {
  reason: Schema.String,
  needsLogin: Schema.optionalWith(Schema.Boolean, { exact: true })
}) {}

interface Connection {
  readonly client: Client
  readonly routes: McpCall.ProgressRoutes
  /** Notifies the server if the session's roots changed since last said. */
  readonly rootsChanged: Effect.Effect<void>
  readonly generation: number
  /** Completes with a reason when the transport closes. */
  readonly closed: Deferred.Deferred<string>
}

/** A running supervisor, as McpClientsLive sees it. */
export interface Supervisor {
  readonly status: Effect.Effect<ServerStatus>
  /** Completes after the first connection attempt, successful or not. */
  readonly ready: Effect.Effect<void>
  /** Runs a request on the connected client (waiting for a connection like a call does). */
  readonly withClient: <A>(f: (client: Client) => Promise<A>) => Effect.Effect<A, McpFailure.RequestFailure>
}

export { inputSchemaOf, toContent } from "./McpToolShape.js"

/**
 * Every tool of a server, following `nextCursor` page after page with `Stream.paginateEffect`. A server that hands
 * back a cursor it already gave would page forever, so that fails.
 */
export const listTools = (client: Client): Effect.Effect<ReadonlyArray<McpTool>, string> =>
  Stream.paginateEffect({ cursor: Option.none<string>(), seen: new Set<string>() }, ({ cursor, seen }) =>
    Effect.tryPromise({
      try: () => client.listTools(Option.isSome(cursor) ? { cursor: cursor.value } : undefined),
      catch: (e) => `tools/list failed: ${errorText(e)}`
    }).pipe(
      Effect.flatMap((page) => {
        const next = page.nextCursor
        if (next === undefined) return Effect.succeed([page.tools, Option.none()] as const)
        if (seen.has(next)) return Effect.fail(`tools/list returned the cursor ${JSON.stringify(next)} twice`)
        return Effect.succeed([
          page.tools,
          Option.some({ cursor: Option.some(next), seen: new Set([...seen, next]) })
        ] as const)
      })
    )
  ).pipe(Stream.flattenIterables, Stream.runCollect, Effect.map(Chunk.toReadonlyArray))

// ---------------------------------------------------------------------------------------------------------------
// The supervisor.

/** Quotes one word for `/bin/bash -c`. */
const shellQuote = (word: string): string => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`)

/**
 * For a stdio entry with `"sandbox": true`: the command line wrapped by the sandbox, for `/bin/bash -c` (scoped: the
 * sandbox's per-command state lives as long as the connection's scope). Fails closed when the sandbox is off or
 * cannot run: the server is not started unsandboxed.
 */
const sandboxedLine = (
  name: string,
  config: McpConfig.StdioServer,
  sandbox: Option.Option<Context.Tag.Service<Sandbox>>,
  generation: number
): Effect.Effect<string | undefined, ConnectFailed, Scope.Scope> => {
  if (config.sandbox !== true) return Effect.succeed(undefined)
  if (Option.isNone(sandbox) || sandbox.value.availability._tag !== "Ready") {
    const why = Option.match(sandbox, {
      onNone: () => "the sandbox is off",
      onSome: (s) =>
        s.availability._tag === "Unavailable"
          ? `the sandbox cannot run here (${s.availability.reasons.join("; ")})`
          : "the sandbox is off (sandbox.enabled or --sandbox)"
    })
    return Effect.fail(new ConnectFailed({ reason: `the entry asks for the sandbox ("sandbox": true), but ${why}` }))
  }
  const line = [config.command, ...config.args].map(shellQuote).join(" ")
  return sandbox.value
    .wrap(line, { id: `mcp:${name}:${generation}`, commandText: line })
    .pipe(Effect.mapError((e: SandboxError) => new ConnectFailed({ reason: e.message })))
}

const makeTransport = (
  config: McpConfig.ServerConfig,
  options: Options,
  wrapped: string | undefined,
  authProvider: McpOAuth.FileOAuthProvider | undefined
): Transport =>
  McpConfig.isHttp(config)
    ? new StreamableHTTPClientTransport(new URL(config.url), {
        requestInit: { headers: { ...config.headers } },
        ...(authProvider === undefined ? {} : { authProvider })
      })
    : new StdioClientTransport({
        command: wrapped === undefined ? config.command : "/bin/bash",
        args: wrapped === undefined ? [...config.args] : ["-c", wrapped],
        env: { ...(process.env as Record<string, string>), ...config.env },
        stderr: options.stderr ?? "ignore",
        ...(config.cwd !== undefined ? { cwd: config.cwd } : {})
      })

/**
 * An HTTP server's OAuth side for one connection attempt: the credentials, read afresh (a login may have happened
 * since the last attempt); how an error becomes a ConnectFailed (a server that needs a login says so and names
 * `armature mcp login`; anything else has the server's secrets redacted); and an expired token's renewal.
 */
const oauthOf = (name: string, config: McpConfig.ServerConfig) => {
  const authProvider = McpConfig.isHttp(config) ? McpOAuth.headlessProvider(name, config) : undefined
  const connectFailed = (e: unknown) =>
    McpOAuth.isNeedsLogin(e)
      ? new ConnectFailed({ reason: McpOAuthText.needsLoginReason(name), needsLogin: true })
      : new ConnectFailed({ reason: authProvider === undefined ? errorText(e) : authProvider.redact(errorText(e)) })
  const refreshIfDue =
    authProvider === undefined || !McpConfig.isHttp(config)
      ? Effect.void
      : Effect.tryPromise({ try: () => McpOAuth.refreshIfDue(authProvider, config.url), catch: connectFailed })
  return { authProvider, connectFailed, refreshIfDue }
}

/** How long a stdio server has to exit after its stdin is closed before it gets SIGTERM (the SDK waits 2 s). */
const stdioCloseGraceMs = 200

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

/** The failure of a call during which the connection to `server` was lost; `what` says what happened next. */
const disconnected = (server: string, tool: string, what: string) =>
  new McpFailure.McpDisconnected({
    server,
    tool,
    message: `MCP server ${server} disconnected during the call to ${tool} ${what}`
  })

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
    const sandbox = yield* Effect.serviceOption(Sandbox)
    const approver = yield* Effect.serviceOption(Approver)
    const elicit = McpClientHandlers.elicitorOf(yield* Effect.serviceOption(McpElicitor), approver)
    const sampler = Option.map(
      yield* Effect.serviceOption(LanguageModel),
      (model): McpSampling.Sampler => ({ model, modelName: options.samplingModel ?? defaultModel, approver })
    )
    const fromEnv = McpConfig.envTunables(process.env)
    const connectTimeout = Duration.decode(options.connectTimeout ?? fromEnv.connectTimeoutMs ?? "30 seconds")
    const toolTimeoutMs = Duration.toMillis(
      Duration.decode(options.toolTimeout ?? fromEnv.toolTimeoutMs ?? "10 minutes")
    )
    const maxOutputTokens = options.maxOutputTokens ?? fromEnv.maxOutputTokens ?? McpConfig.defaultMaxOutputTokens
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
              new McpFailure.McpNotConnected({
                server: name,
                message: `MCP server ${name} is not connected${error === undefined ? "" : ` (${error})`}`
              })
            )
          )
        )
      )

    const target = (conn: Connection): McpCall.Target => ({
      client: conn.client,
      routes: conn.routes,
      server: name,
      http: McpConfig.isHttp(config)
    })

    const callOnce = (conn: Connection, tool: string, args: Record<string, unknown>, ctx: Tool.ToolContext) =>
      McpCall.callOnce(target(conn), tool, args, ctx.progress, toolTimeoutMs)

    const callTool = (tool: string, readOnly: boolean) => (args: Record<string, unknown>, ctx: Tool.ToolContext) =>
      Effect.gen(function* () {
        const conn = yield* awaitConnection(0)
        yield* conn.rootsChanged
        const result = yield* callOnce(conn, tool, args, ctx).pipe(
          Effect.catchTag("Disconnected", (d) =>
            readOnly
              ? awaitConnection(conn.generation).pipe(
                  Effect.flatMap((next) => callOnce(next, tool, args, ctx)),
                  Effect.map((result) => ({ ...result, retriedAfter: d.reason })),
                  Effect.catchTag("Disconnected", (again) =>
                    Effect.fail(disconnected(name, tool, `(${again.reason}), again after reconnecting`))
                  ),
                  Effect.catchAll((e) =>
                    Effect.fail(disconnected(name, tool, `(${d.reason}); retry failed: ${e.message}`))
                  )
                )
              : Effect.fail(
                  disconnected(name, tool, `(${d.reason}); the call was not retried because it may have side effects`)
                )
          )
        )
        const retried =
          "retriedAfter" in result
            ? `[MCP server ${name} disconnected during this call (${result.retriedAfter}); it was retried once after reconnecting, as ${tool} is read-only]`
            : undefined
        const content = capOutput(toContent(result), maxOutputTokens)
        const blocks: ReadonlyArray<ResultContentBlock> =
          retried === undefined ? content : [...content, { type: "text", text: retried }]
        if (result.isError === true) {
          const text = textOf(blocks)
          return yield* new McpFailure.McpToolError({
            server: name,
            tool,
            message: text === "" ? `MCP tool ${tool} on server ${name} returned an error` : text
          })
        }
        return blocks
      })

    // -- tools ---------------------------------------------------------------------------------------------------

    const makeTool = (spec: McpTool) => {
      const readOnly = spec.annotations?.readOnlyHint === true
      // MCP's default for destructiveHint is true: only an explicit false makes a writing tool non-destructive.
      const destructive = !readOnly && spec.annotations?.destructiveHint !== false
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
        isIdempotent: () => spec.annotations?.idempotentHint === true,
        interruptBehavior: "cancel",
        failure: McpFailure.ToolCallFailure,
        call: callTool(spec.name, readOnly),
        toResult: (blocks) => blocks as ReadonlyArray<ResultContentBlock>
      }).pipe(
        Effect.map(
          (tool): Tool.Any =>
            withServerHints({ ...tool, inputJsonSchema: jsonSchema as Tool.JsonObjectSchema }, spec.annotations)
        )
      )
    }

    const listAll = (client: Client) =>
      listTools(client).pipe(Effect.mapError((reason) => new ConnectFailed({ reason })))

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
      const client = new Client(
        { name: "armature", version: "0.1.0" },
        { capabilities: McpClientHandlers.clientCapabilities(Option.isSome(sampler)) }
      )
      const rootsChanged = yield* McpClientHandlers.install(client, name, session, elicit)
      McpSampling.install(client, name, config.sampling ?? "ask", sampler)
      client.onclose = () => {
        Deferred.unsafeDone(closed, Exit.succeed("connection closed"))
      }
      client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
        run(
          sync(client).pipe(
            // A refresh that fails because the connection is closing (the scope ends, the server went away) is
            // no news: the supervisor reconnects, or everything is shutting down.
            Effect.catchAll((e) =>
              Effect.flatMap(Deferred.isDone(closed), (gone) =>
                gone || client.transport === undefined || /not connected/i.test(e.reason)
                  ? Effect.logDebug(`MCP server ${name}: refreshing tools skipped: ${e.reason}`)
                  : Effect.logWarning(`MCP server ${name}: refreshing tools failed: ${e.reason}`)
              )
            )
          )
        )
      })
      const wrapped = McpConfig.isHttp(config) ? undefined : yield* sandboxedLine(name, config, sandbox, generation)
      const { authProvider, connectFailed, refreshIfDue } = oauthOf(name, config)
      yield* refreshIfDue
      const transport = makeTransport(config, options, wrapped, authProvider)
      const routes = new McpCall.ProgressRoutes()
      routes.tap(transport)
      const close = Effect.promise(() => closeClient(client, transport))
      yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: (signal) => client.connect(transport, { signal, timeout: Duration.toMillis(connectTimeout) }),
          catch: connectFailed
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
      return { client, routes, generation, closed, rootsChanged } satisfies Connection
    })

    /** Records a failed attempt; only the first failure of a series is logged as a warning. */
    const failed = (e: ConnectFailed) =>
      Effect.gen(function* () {
        const previous = yield* Ref.getAndSet(state, e.needsLogin === true ? "needs-login" : "failed")
        yield* Ref.set(lastError, e.reason)
        yield* setPending(false)
        yield* Deferred.succeed(firstAttempt, undefined)
        const text = `MCP server ${name}: ${e.reason}`
        yield* previous === "failed" || previous === "needs-login" ? Effect.logDebug(text) : Effect.logWarning(text)
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
      ready: Deferred.await(firstAttempt),
      withClient: <A>(f: (client: Client) => Promise<A>) =>
        Effect.flatMap(awaitConnection(0), (conn) =>
          Effect.tryPromise({
            try: () => f(conn.client),
            catch: (e) =>
              new McpFailure.McpRequestFailed({
                server: name,
                message: `MCP server ${name}: ${errorText(e)}`,
                transient: false
              })
          })
        )
    }
  })
