/**
 * The MCP client side: connections to the servers of `.mcp.json`, whose tools live in the ToolRegistry.
 */
import { Context, type Duration, type Effect, type Schedule } from "effect"
import { pendingMcpServersKey } from "../domain/DeferredTools.js"

/** Tunables of the client side; the defaults suit interactive use, tests shorten them. */
export interface McpOptions {
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

/** Where a server's connection stands. */
export type ServerState = "connecting" | "connected" | "reconnecting" | "failed" | "closed"

/** One server as the client side sees it. */
export interface ServerStatus {
  readonly name: string
  readonly state: ServerState
  /** The registry names of the tools it currently contributes. */
  readonly tools: ReadonlyArray<string>
  /** How many times the connection was (re-)established. */
  readonly connections: number
  /** The last connection error, if any. */
  readonly lastError: string | undefined
}

/** The session-state key listing the servers still connecting, so ToolSearch can say their tools are coming. */
export const pendingServersKey = pendingMcpServersKey

/** The port. */
export class McpClients extends Context.Tag("armature/McpClients")<
  McpClients,
  {
    /** Every configured server's status, in configuration order. */
    readonly servers: Effect.Effect<ReadonlyArray<ServerStatus>>
    /**
     * Completes when every server has finished its first connection attempt (connected or failed), so a caller
     * that must see the tools (e.g. a one-shot `exec`) can wait; the agent loop need not.
     */
    readonly ready: Effect.Effect<void>
  }
>() {}

/** An MCP server's request for structured input from the user (`elicitation/create`). */
export interface ElicitationRequest {
  /** The server's name in the configuration. */
  readonly server: string
  readonly message: string
  /** A flat JSON Schema object of primitive fields (MCP restricts elicitation forms to those). */
  readonly requestedSchema: Readonly<Record<string, unknown>>
}

/** The user's answer: accept with the form's content, decline, or cancel (dismissed). */
export type ElicitationAnswer =
  | { readonly action: "accept"; readonly content: Readonly<Record<string, string | number | boolean>> }
  | { readonly action: "decline" }
  | { readonly action: "cancel" }

/**
 * Who answers elicitation requests (a terminal form, or an embedding application's callback). Optional: without
 * it, as when headless, every request is declined.
 */
export class McpElicitor extends Context.Tag("armature/McpElicitor")<
  McpElicitor,
  { readonly elicit: (request: ElicitationRequest) => Effect.Effect<ElicitationAnswer> }
>() {}
