/**
 * Sub-agents launched with `run_in_background` (docs/agents.md): the session's table of them, kept in the session
 * state so that BashOutput and KillShell find them by id as they find background shells, and the texts the model
 * is given — the launch notice, and the `<task-notification>` block that brings a finished agent's answer.
 */
import type { Effect } from "effect"
import { stateKey } from "./Tool.js"

/** Where a background agent is. */
export type AgentStatus = "running" | "completed" | "failed" | "killed"

/** A background agent as the tools see it. */
export interface BackgroundAgent {
  readonly id: string
  readonly description: string
  readonly agentType: string
  /** The Agent call that launched it. */
  readonly toolUseId: string
  readonly status: AgentStatus
  /** The final text (completed) or the reason it did not finish (failed). */
  readonly result: string | undefined
  /** Whether its result was read with BashOutput (it is then not read twice). */
  readonly read: boolean
  /** Stops it (the notification of a stopped agent is not sent: the one who stopped it knows). */
  readonly stop: Effect.Effect<void>
}

/** The session's background agents by id. */
export const backgroundAgentsKey = stateKey<ReadonlyMap<string, BackgroundAgent>>(
  "armature/backgroundAgents",
  new Map()
)

/** Whether an id names a background agent (rather than a background shell). */
export const isAgentId = (id: string): boolean => id.startsWith("agent_")

/** The table with one agent changed (unknown ids leave it as it is). */
export const update = (
  table: ReadonlyMap<string, BackgroundAgent>,
  id: string,
  change: (agent: BackgroundAgent) => BackgroundAgent
): ReadonlyMap<string, BackgroundAgent> => {
  const agent = table.get(id)
  if (agent === undefined) return table
  const next = new Map(table)
  next.set(id, change(agent))
  return next
}

/** The Agent call's result when the agent was launched in the background. */
export const launchedText = (id: string): string =>
  `Background agent launched: ${id}
It is working on its own now; its answer will come to you in a later message, in a <task-notification> block \
naming this id. Do not do its work yourself meanwhile. To check on it before then, call BashOutput with bash_id \
"${id}"; to stop it, KillShell with shell_id "${id}". Tell the user briefly what you launched.`

/** What a finished agent's notification reports. */
export interface Finished {
  readonly id: string
  readonly toolUseId: string
  readonly description: string
  readonly status: "completed" | "failed"
  readonly result: string
  readonly totalTokens: number
  readonly durationMs: number
}

const escapeClosing = (text: string): string => text.replace(/<\/(task-notification|result)>/g, "<\\/$1>")

/** The notification block that delivers a finished background agent's answer (Claude Code's form). */
export const notificationText = (f: Finished): string =>
  [
    "<task-notification>",
    `<task-id>${f.id}</task-id>`,
    `<tool-use-id>${f.toolUseId}</tool-use-id>`,
    `<status>${f.status}</status>`,
    `<summary>Agent "${f.description}" ${f.status === "completed" ? "completed" : "failed"}</summary>`,
    `<result>${escapeClosing(f.result)}</result>`,
    "<usage>",
    `  <subagent_tokens>${f.totalTokens}</subagent_tokens>`,
    `  <duration_ms>${f.durationMs}</duration_ms>`,
    "</usage>",
    "</task-notification>"
  ].join("\n")

/** What BashOutput shows of a background agent: its status, then its result the first time it is read. */
export const statusText = (agent: BackgroundAgent): string => {
  const head = `Status: ${agent.status} (background agent "${agent.description}", ${agent.agentType})`
  if (agent.status === "running") return `${head}\n(no result yet: it will come in a <task-notification> when it ends)`
  if (agent.result === undefined || agent.read) return `${head}\n(no new output)`
  return `${head}\n${agent.result}`
}
