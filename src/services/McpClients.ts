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
  /**
   * The most tokens of text (about four characters each) a call's result hands on; more is cut, with a note.
   * Default: `MAX_MCP_OUTPUT_TOKENS`, else 25,000. (`connectTimeout` defaults to `MCP_TIMEOUT` and `toolTimeout`
   * to `MCP_TOOL_TIMEOUT`, in milliseconds, when those are set.)
   */
  readonly maxOutputTokens?: number | undefined
  /** The backoff between connection attempts; it restarts after each successful connection. */
  readonly reconnectSchedule?: Schedule.Schedule<unknown, unknown> | undefined
  /** How long a call waits for a (re)connection before failing. Default 30 s. */
  readonly reconnectWait?: Duration.DurationInput | undefined
  /** What happens to a stdio server's stderr. Default "ignore". */
  readonly stderr?: "ignore" | "inherit" | undefined
  /**
   * The model name servers' sampling requests run with (default: the LanguageModel's default model). Servers may
   * ask for sampling only when the engine has a language model; see docs/mcp.md.
   */
  readonly samplingModel?: string | undefined
}

/**
 * Where a server's connection stands; "invalid": its configuration entry is invalid, it is not started;
 * "needs-login": an HTTP server wants an OAuth authorization that nobody logged in for (`armature mcp login`).
 */
export type ServerState = "connecting" | "connected" | "reconnecting" | "failed" | "needs-login" | "closed" | "invalid"

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

/** A value of an elicitation form: a string, number or boolean, or the choices of a multi-select field. */
export type ElicitationValue = string | number | boolean | ReadonlyArray<string>

/** The user's answer: accept with the form's content, decline, or cancel (dismissed). */
export type ElicitationAnswer =
  | { readonly action: "accept"; readonly content: Readonly<Record<string, ElicitationValue>> }
  | { readonly action: "decline" }
  | { readonly action: "cancel" }

/**
 * Who answers elicitation requests, ahead of the Approver. Optional: without it the Approver's `elicit` answers
 * (the terminal form, or `approveWith`'s `onElicitation`), and without that every request is declined.
 */
export class McpElicitor extends Context.Tag("armature/McpElicitor")<
  McpElicitor,
  { readonly elicit: (request: ElicitationRequest) => Effect.Effect<ElicitationAnswer> }
>() {}

/** Whether an MCP server may use the language model (`sampling/createMessage`): ask each time, always, or never. */
export type SamplingPolicy = "ask" | "allow" | "deny"

/** An MCP server's request to use the language model, as shown to whoever approves it. */
export interface SamplingRequest {
  /** The server's name in the configuration. */
  readonly server: string
  readonly systemPrompt: string | undefined
  /** The conversation the server wants completed (text only). */
  readonly messages: ReadonlyArray<{ readonly role: "user" | "assistant"; readonly text: string }>
  readonly maxTokens: number
}

/** An unapproved server of the project's `.mcp.json`, as shown to whoever approves it. */
export interface ProjectServerRequest {
  /** The `.mcp.json` file. */
  readonly file: string
  readonly server: string
  /** What it runs: the command line of a stdio server, the URL of an HTTP one. */
  readonly summary: string
}

/**
 * The answer about a project server, as Claude Code asks it: use it, use it and every other server of the
 * project's file, or do not use it. Answers are remembered in `.claude/settings.local.json`.
 */
export type ProjectServerAnswer = "approve" | "approve-all" | "reject"
