/**
 * What the tools of MCP servers (`mcp__{server}__{tool}`, ListMcpResources, ReadMcpResource) fail with. The failures
 * of the way to the server — no connection, a lost connection, a JSON-RPC error, no answer in time — are marked
 * `transient`, the only failures a retry policy retries (docs/tools.md, "Tool policies"); a tool's own error
 * result is its answer and is not.
 */
import { Schema } from "effect"

/** Marks a failure transient: always there, so the constructor need not be given it. */
const transient = Schema.optionalWith(Schema.Literal(true), { default: () => true as const })

/** The server is not connected, and no connection came within the wait. */
export class McpNotConnected extends Schema.TaggedError<McpNotConnected>()("McpNotConnected", {
  message: Schema.String,
  server: Schema.String,
  transient
}) {}

/** The connection to the server was lost during the call (and, for a read-only tool, again on the one retry). */
export class McpDisconnected extends Schema.TaggedError<McpDisconnected>()("McpDisconnected", {
  message: Schema.String,
  server: Schema.String,
  tool: Schema.String,
  transient
}) {}

/** A call had neither progress nor result for `timeoutMs`; it was cancelled on the server. */
export class McpTimedOut extends Schema.TaggedError<McpTimedOut>()("McpTimedOut", {
  message: Schema.String,
  server: Schema.String,
  tool: Schema.String,
  timeoutMs: Schema.Number,
  transient
}) {}

/**
 * A request to the server failed: a JSON-RPC error, or a transport that failed without closing. Transient for tool
 * calls; a resource request's failure is reported as it is, not marked transient.
 */
export class McpRequestFailed extends Schema.TaggedError<McpRequestFailed>()("McpRequestFailed", {
  message: Schema.String,
  server: Schema.String,
  transient: Schema.Boolean
}) {}

/** The tool answered with an error result (`isError`); the message is its text. Not transient. */
export class McpToolError extends Schema.TaggedError<McpToolError>()("McpToolError", {
  message: Schema.String,
  server: Schema.String,
  tool: Schema.String
}) {}

/** No configured MCP server has this name. */
export class UnknownMcpServer extends Schema.TaggedError<UnknownMcpServer>()("UnknownMcpServer", {
  message: Schema.String,
  server: Schema.String
}) {}

/** What an MCP server's tool fails with. */
export const ToolCallFailure = Schema.Union(
  McpNotConnected,
  McpDisconnected,
  McpTimedOut,
  McpRequestFailed,
  McpToolError
)

/** What an MCP server's tool fails with. */
export type ToolCallFailure = typeof ToolCallFailure.Type

/** What a request other than a tool call (a resource's list or read) fails with. */
export type RequestFailure = McpNotConnected | McpRequestFailed

/** What ListMcpResources and ReadMcpResource fail with. */
export const ResourceFailure = Schema.Union(UnknownMcpServer, McpNotConnected, McpRequestFailed)

/** What ListMcpResources and ReadMcpResource fail with. */
export type ResourceFailure = typeof ResourceFailure.Type
