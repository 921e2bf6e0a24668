/**
 * `armature mcp serve`: Armature's tools over MCP on stdio (or Streamable HTTP with `--http PORT`), every call
 * through the executor (permissions, hooks). Stdout is the protocol: logs go to stderr (and to the client as
 * `notifications/message`), and asks are refused headlessly (nobody can be prompted).
 */
import * as Path from "node:path"
import * as V8 from "node:v8"
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Layer, Logger, LogLevel, Option, Schema } from "effect"
import * as McpConfig from "../domain/McpConfig.js"
import * as McpOAuthText from "../domain/McpOAuth.js"
import { McpClients, type ServerStatus } from "../services/McpClients.js"
import { type EngineOptions, engineLayer, engineOptions, mcpReady, stderrPrettyLogger } from "./Runtime.js"

/**
 * The CLI's stderr logger (and Effect's default one, where the CLI's is not installed) replaced by one for info and
 * above: the minimum level is lowered to debug for the relay, and stderr must not get a line per call.
 */
const stderrInfoLogger = Layer.merge(
  Logger.replace(stderrPrettyLogger, Logger.none),
  Logger.replace(
    Logger.defaultLogger,
    Logger.filterLogLevel(stderrPrettyLogger, LogLevel.greaterThanEqual(LogLevel.Info))
  )
)

/**
 * The engine for serving: like `exec`'s, but always with the headless approver (stdin is the protocol, so nobody
 * can be asked) and with the servers of `--mcp-config` proxied.
 */
const serveLayer = (options: EngineOptions) => engineLayer(options, { approver: "headless", mcpStderr: "ignore" })

const serveOptions = {
  ...engineOptions,
  http: Options.integer("http").pipe(
    Options.withDescription("Serve Streamable HTTP on this port (at /mcp) instead of stdio; 0 picks a free port"),
    Options.optional
  ),
  host: Options.text("host").pipe(
    Options.withDescription("The address to listen on with --http (default 127.0.0.1)"),
    Options.withDefault("127.0.0.1")
  )
}

/**
 * Keeps WebAssembly (the shell grammar's parser) on V8's baseline compiler. Its optimising tier-up compiles the
 * parser in background threads, and Node waits for those at exit: seconds after stdin ended, while a server must
 * be gone within one. Parsing a command line is fast enough without it.
 */
const baselineWasmOnly = Effect.sync(() => V8.setFlagsFromString("--liftoff-only"))

/**
 * The MCP modules (and with them the MCP SDK), loaded only by this command; the HTTP transport (and its server
 * library) only with `--http`.
 */
const mcpModules = Effect.promise(() =>
  Promise.all([import("../layers/mcp/McpServer.js"), import("../layers/mcp/McpLogRelay.js")])
)
const httpModule = Effect.promise(() => import("../layers/mcp/McpHttpServer.js"))

const serve = Command.make("serve", serveOptions, (options) =>
  Effect.flatMap(Effect.zipRight(baselineWasmOnly, mcpModules), ([McpServer, McpLogRelay]) =>
    Option.match(options.http, {
      onNone: () => McpServer.serve(),
      onSome: (port) =>
        Effect.flatMap(httpModule, (McpHttpServer) =>
          Effect.scoped(
            McpHttpServer.serveHttp({
              port,
              host: options.host,
              onListening: (address) => {
                Effect.runSync(
                  Console.error(
                    `MCP server listening on http://${address.host}:${address.port}${McpHttpServer.endpoint}`
                  )
                )
              }
            })
          )
        )
    }).pipe(
      Effect.provide(serveLayer(options)),
      Effect.provide(Logger.add(McpLogRelay.logger)),
      Effect.provide(stderrInfoLogger),
      // Debug lines reach the relay (a client may ask for them); stderr keeps to info and above.
      Logger.withMinimumLogLevel(LogLevel.Debug)
    )
  )
).pipe(
  Command.withDescription(
    "Serve Armature's tools over MCP (stdio, or --http PORT); every call goes through the permission pipeline, hooks and executor; exits when stdin ends"
  )
)

// ---------------------------------------------------------------------------------------------------------------
// login, logout, list: OAuth for HTTP servers (see docs/mcp.md).

/** The command line names a server that is not there, or one that OAuth is not for. */
class UsageError extends Schema.TaggedError<UsageError>()("UsageError", { message: Schema.String }) {}

const serverArg = Args.text({ name: "server" }).pipe(
  Args.withDescription("The server's name in .mcp.json (or in the --mcp-config file)")
)

const lookupOptions = {
  cwd: engineOptions.cwd,
  mcpConfig: Options.file("mcp-config").pipe(
    Options.withDescription("An .mcp.json file to find the server in (before the project's .mcp.json)"),
    Options.optional
  )
}

const clientModules = Effect.promise(() =>
  Promise.all([import("../layers/mcp/McpClientsLive.js"), import("../layers/mcp/McpOAuth.js")])
)

/**
 * The HTTP server `name` of the `--mcp-config` file, else of the project's `.mcp.json` (approved or not: logging
 * in is the user's own doing, and connecting still needs the approval).
 */
const findHttpServer = (name: string, cwd: string, mcpConfig: Option.Option<string>) =>
  Effect.gen(function* () {
    const [McpClientsLive] = yield* clientModules
    const files = [...Option.toArray(mcpConfig), Path.join(cwd, McpClientsLive.projectFileName)]
    for (const [i, file] of files.entries()) {
      const given = Option.isSome(mcpConfig) && i === 0
      // The project's file is optional; a --mcp-config file that cannot be read is an error.
      const read = yield* McpClientsLive.readConfig(file).pipe(
        Effect.catchAll((e) => (given ? Effect.fail(e) : Effect.succeed(undefined)))
      )
      if (read === undefined) continue
      const skipped = read.skipped.find((s) => s.server === name)
      if (skipped !== undefined) {
        return yield* Effect.fail(
          new UsageError({ message: McpConfig.skippedNotice(file, skipped).replace(/^armature: /, "") })
        )
      }
      const server = read.config.mcpServers[name]
      if (server === undefined) continue
      if (!McpConfig.isHttp(server)) {
        return yield* Effect.fail(
          new UsageError({ message: `MCP server ${name} of ${file} is a stdio server: OAuth is for HTTP servers` })
        )
      }
      return server
    }
    return yield* Effect.fail(
      new UsageError({ message: `no MCP server named ${JSON.stringify(name)} in ${files.join(" or ")}` })
    )
  })

const login = Command.make(
  "login",
  {
    server: serverArg,
    ...lookupOptions,
    timeout: Options.integer("timeout").pipe(
      Options.withDescription("Seconds to wait for the browser to come back (default 300)"),
      Options.withDefault(300)
    )
  },
  ({ server, cwd, mcpConfig, timeout }) =>
    Effect.gen(function* () {
      const config = yield* findHttpServer(server, cwd, mcpConfig)
      const [, McpOAuth] = yield* clientModules
      const result = yield* Effect.scoped(
        McpOAuth.login(server, config, {
          print: (line) => process.stdout.write(`${line}\n`),
          browser: process.env.BROWSER,
          timeout: `${Math.max(1, timeout)} seconds`
        })
      )
      yield* Console.log(
        result.authorized
          ? `Logged in to ${server}: ${result.tools} tool${result.tools === 1 ? "" : "s"}. The credentials are in ${result.file} (readable by you only).`
          : `MCP server ${server} did not ask for authorization: connected, ${result.tools} tool${result.tools === 1 ? "" : "s"}.`
      )
    })
).pipe(
  Command.withDescription(
    "Log in to an HTTP MCP server with OAuth: prints the URL to open in a browser, waits for its redirect on 127.0.0.1 and keeps the tokens in a file only you can read"
  )
)

const logout = Command.make("logout", { server: serverArg, ...lookupOptions }, ({ server, cwd, mcpConfig }) =>
  Effect.gen(function* () {
    const config = yield* findHttpServer(server, cwd, mcpConfig)
    const [, McpOAuth] = yield* clientModules
    const { file, removed } = yield* McpOAuth.logout(server, config)
    yield* Console.log(
      removed ? `Logged out of ${server}: removed ${file}.` : `No credentials were stored for ${server} (${file}).`
    )
  })
).pipe(Command.withDescription("Forget the OAuth tokens kept for an HTTP MCP server"))

/** One server's line of `mcp list`. */
const statusLine = (status: ServerStatus): string => {
  const tools = `${status.tools.length} tool${status.tools.length === 1 ? "" : "s"}`
  switch (status.state) {
    case "connected":
      return `${status.name}: connected, ${tools}`
    case "needs-login":
      return `${status.name}: needs login (${McpOAuthText.loginCommand(status.name)})`
    case "invalid":
      return `${status.name}: invalid entry (${status.lastError ?? ""})`
    default:
      return `${status.name}: ${status.state === "failed" ? "failed" : status.state}${status.lastError === undefined ? "" : ` (${status.lastError})`}`
  }
}

const list = Command.make(
  "list",
  {
    ...engineOptions,
    json: Options.boolean("json").pipe(Options.withDescription("Print a JSON array of {name, state, tools, error}"))
  },
  (options) =>
    Effect.gen(function* () {
      yield* mcpReady
      const servers = yield* Effect.serviceOption(McpClients).pipe(
        Effect.flatMap(Option.match({ onNone: () => Effect.succeed([]), onSome: (clients) => clients.servers }))
      )
      if (options.json) {
        const rows = servers.map((s) => ({
          name: s.name,
          state: s.state,
          tools: s.tools.length,
          ...(s.state === "connected" || s.lastError === undefined ? {} : { error: s.lastError })
        }))
        yield* Console.log(JSON.stringify(rows, null, 2))
        return
      }
      if (servers.length === 0) {
        yield* Console.log("No MCP servers configured (.mcp.json of the project, or --mcp-config FILE).")
        return
      }
      for (const status of servers) yield* Console.log(statusLine(status))
    }).pipe(Effect.provide(engineLayer(options, { approver: "headless" })))
).pipe(
  Command.withDescription(
    "Connect to every configured MCP server and show each one's state (connected, needs login, failed) and tool count"
  )
)

/** `armature mcp`. */
export const command = Command.make("mcp").pipe(
  Command.withDescription(
    "Model Context Protocol: expose Armature's tools to MCP clients, and log in to the HTTP servers it uses"
  ),
  Command.withSubcommands([serve, login, logout, list])
)
