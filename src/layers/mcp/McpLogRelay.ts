/**
 * Engine logs to MCP clients: an Effect logger that hands every log line to the connected MCP servers, which
 * forward it as `notifications/message` at or above the level the client chose (`logging/setLevel`).
 *
 * Install `logger` around the whole engine (layers included) so that logs of background fibers (MCP client
 * supervisors, hooks) are relayed too; with no connection subscribed it does nothing.
 */
import type { LoggingLevel } from "@modelcontextprotocol/sdk/types.js"
import { Cause, HashMap, Logger, LogLevel } from "effect"

/** Receives one log line. */
export type Listener = (level: LoggingLevel, logger: string, data: unknown) => void

const listeners = new Set<Listener>()

/** Starts relaying to `listener`; returns the function that stops it. */
export const subscribe = (listener: Listener): (() => void) => {
  listeners.add(listener)
  return () => {
    listeners.delete(listener)
  }
}

/** Effect's levels as MCP's (syslog) levels. */
const toMcpLevel = (level: LogLevel.LogLevel): LoggingLevel => {
  switch (level._tag) {
    case "Fatal":
      return "critical"
    case "Error":
      return "error"
    case "Warning":
      return "warning"
    case "Info":
      return "info"
    default:
      return "debug"
  }
}

const textOf = (message: unknown): string =>
  Array.isArray(message)
    ? message.map((m) => (typeof m === "string" ? m : JSON.stringify(m))).join(" ")
    : String(message)

/** The logger to add (`Logger.add(logger)`): relays every line that reaches it. */
export const logger = Logger.make(({ annotations, cause, logLevel, message }) => {
  if (listeners.size === 0 || LogLevel.lessThan(logLevel, LogLevel.Debug)) return
  const text = textOf(message)
  const data: Record<string, unknown> = { message: text }
  if (!Cause.isEmpty(cause)) data.cause = Cause.pretty(cause)
  if (HashMap.size(annotations) > 0) data.annotations = Object.fromEntries(annotations)
  for (const listener of listeners) listener(toMcpLevel(logLevel), "armature", data)
})
