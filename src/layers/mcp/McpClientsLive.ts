/**
 * The MCP client side as a layer: every server of a `.mcp.json` supervised in parallel, its tools in the registry.
 */
import * as Fs from "node:fs/promises"
import { Effect, Layer } from "effect"
import * as McpConfig from "../../domain/McpConfig.js"
import { McpClients } from "../../services/McpClients.js"
import * as McpSupervisor from "./McpSupervisor.js"

/** Tunables (timeouts, reconnection backoff, stderr of stdio servers). */
export type Options = McpSupervisor.Options

/**
 * Connects to every server of `config` in parallel without waiting: a slow server does not block the layer nor
 * the others, its tools appear when it is ready. Needs a ToolRegistry and a Session.
 */
export const make = (config: McpConfig.McpConfig, options: Options = {}) =>
  Effect.gen(function* () {
    const supervisors = yield* Effect.forEach(Object.entries(config.mcpServers), ([name, server]) =>
      McpSupervisor.start(name, server, options)
    )
    return McpClients.of({
      servers: Effect.forEach(supervisors, (s) => s.status),
      ready: Effect.forEach(supervisors, (s) => s.ready, { concurrency: "unbounded", discard: true })
    })
  })

/** The client side for a decoded config. */
export const layer = (config: McpConfig.McpConfig, options: Options = {}) =>
  Layer.scoped(McpClients, make(config, options))

/** Reads and decodes a `.mcp.json` file, expanding `${VAR}` from the environment; errors name the file and path. */
export const readConfig = (path: string) =>
  Effect.tryPromise({
    try: () => Fs.readFile(path, "utf8"),
    catch: (e) =>
      new McpConfig.McpConfigError({ file: path, reason: `cannot be read (${e instanceof Error ? e.message : e})` })
  }).pipe(Effect.flatMap((text) => McpConfig.decodeText(path, text, process.env)))

/** The client side for the servers of a `.mcp.json` file (`--mcp-config FILE`). */
export const layerFromFile = (path: string, options: Options = {}) =>
  Layer.scoped(
    McpClients,
    Effect.flatMap(readConfig(path), (config) => make(config, options))
  )
