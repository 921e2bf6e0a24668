/**
 * `armature mcp serve`: Armature's tools over MCP on stdio, every call through the executor (permissions, hooks).
 * Stdout is the protocol: logs go to stderr, and asks are refused headlessly (nobody can be prompted).
 */
import { Command } from "@effect/cli"
import { Effect } from "effect"
import { type EngineOptions, engineLayer, engineOptions, stderrLogger } from "./Runtime.js"

/**
 * The engine for serving: like `exec`'s, but always with the headless approver (stdin is the protocol, so nobody
 * can be asked) and with the servers of `--mcp-config` proxied.
 */
export const serveLayer = (options: EngineOptions) =>
  engineLayer(options, { approver: "headless", mcpStderr: "ignore" })

const serve = Command.make("serve", engineOptions, (options) =>
  // The MCP SDK is loaded only by this command.
  Effect.promise(() => import("../layers/mcp/McpServer.js")).pipe(
    Effect.flatMap((McpServer) => Effect.scoped(McpServer.serve())),
    Effect.provide(serveLayer(options)),
    Effect.provide(stderrLogger)
  )
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
