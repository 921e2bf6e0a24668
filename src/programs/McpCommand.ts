/**
 * `armature mcp serve`: Armature's tools over MCP on stdio, every call through the executor (permissions, hooks).
 * Stdout is the protocol: logs go to stderr, and asks are refused headlessly (nobody can be prompted).
 */
import { Command } from "@effect/cli"
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer, Logger, Option } from "effect"
import * as FsResultStore from "../layers/FsResultStore.js"
import * as HooksLive from "../layers/HooksLive.js"
import * as McpClientsLive from "../layers/McpClientsLive.js"
import * as McpServer from "../layers/McpServer.js"
import * as RulePermissionPolicy from "../layers/RulePermissionPolicy.js"
import * as StreamingExecutor from "../layers/StreamingExecutor.js"
import * as ToolRegistryLive from "../layers/ToolRegistryLive.js"
import * as TreeSitterShellAnalyzer from "../layers/TreeSitterShellAnalyzer.js"
import * as BuiltinTools from "../layers/tools/index.js"
import * as Approver from "../services/Approver.js"
import * as Session from "../services/Session.js"
import { Settings } from "../services/Settings.js"
import { type EngineOptions, engineOptions, settingsLayer } from "./Runtime.js"

/** Logs on stderr only: stdout carries the protocol. */
export const stderrLogger = Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger))

/**
 * The engine for serving: like `exec`'s, but always with the headless approver (stdin is the protocol, so nobody
 * can be asked) and with the servers of `--mcp-config` proxied.
 */
export const serveLayer = (options: EngineOptions) => {
  const base = Layer.mergeAll(Session.layer({ cwd: options.cwd }), NodeContext.layer, TreeSitterShellAnalyzer.layer)
  const services = Layer.mergeAll(
    RulePermissionPolicy.layer,
    Approver.headless,
    Layer.unwrapEffect(Effect.map(Settings, (s) => HooksLive.layerFromSession({ config: s.hooks }))),
    FsResultStore.layer
  ).pipe(Layer.provideMerge(settingsLayer(options)))
  const tools = Option.match(options.mcpConfig, {
    onNone: () => BuiltinTools.layer,
    onSome: (file) => Layer.merge(BuiltinTools.layer, McpClientsLive.layerFromFile(file, { stderr: "ignore" }))
  })
  return StreamingExecutor.layer(
    Option.match(options.maxConcurrency, { onNone: () => ({}), onSome: (maxConcurrency) => ({ maxConcurrency }) })
  ).pipe(
    Layer.provideMerge(tools),
    Layer.provideMerge(ToolRegistryLive.layer),
    Layer.provideMerge(services),
    Layer.provideMerge(base)
  )
}

const serve = Command.make("serve", engineOptions, (options) =>
  Effect.scoped(McpServer.serve()).pipe(Effect.provide(serveLayer(options)), Effect.provide(stderrLogger))
).pipe(
  Command.withDescription(
    "Serve Armature's tools over MCP on stdio; every call goes through the permission pipeline, hooks and executor"
  )
)

/** `armature mcp`. */
export const command = Command.make("mcp").pipe(
  Command.withDescription("Model Context Protocol: expose Armature's tools to MCP clients"),
  Command.withSubcommands([serve])
)
