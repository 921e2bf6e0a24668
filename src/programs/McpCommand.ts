/**
 * `armature mcp serve`: Armature's tools over MCP on stdio (or Streamable HTTP with `--http PORT`), every call
 * through the executor (permissions, hooks). Stdout is the protocol: logs go to stderr (and to the client as
 * `notifications/message`), and asks are refused headlessly (nobody can be prompted).
 */
import * as V8 from "node:v8"
import { Command, Options } from "@effect/cli"
import { Console, Effect, Layer, Logger, LogLevel, Option } from "effect"
import { type EngineOptions, engineLayer, engineOptions, stderrPrettyLogger } from "./Runtime.js"

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
export const serveLayer = (options: EngineOptions) =>
  engineLayer(options, { approver: "headless", mcpStderr: "ignore" })

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

/** `armature mcp`. */
export const command = Command.make("mcp").pipe(
  Command.withDescription("Model Context Protocol: expose Armature's tools to MCP clients"),
  Command.withSubcommands([serve])
)
