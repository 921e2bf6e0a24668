/**
 * KillShell: stops a background shell and everything it started (see docs/processes.md).
 */
import { Effect, Schema } from "effect"
import * as BackgroundAgents from "../../domain/BackgroundAgents.js"
import * as Tool from "../../domain/Tool.js"
import { BackgroundShells, UnknownShell } from "../../services/BackgroundShells.js"
import * as ToolRegistryLive from "../registry/ToolRegistryLive.js"
import * as BashOutput from "./BashOutput.js"

const Input = Schema.Struct({
  shell_id: Schema.String.pipe(Schema.minLength(1)).annotations({
    description:
      "The ID returned by Bash with run_in_background (e.g. bash_1a2b3c4d), or by Agent with run_in_background (e.g. agent_1a2b3c4d)."
  })
})

const description = `Stops a command started with Bash run_in_background.

Use it when a background process is no longer needed (a dev server after testing, a watcher, a build that hangs),
and before starting a replacement that would use the same port or files. It kills the command and every process it
started (SIGTERM, then SIGKILL after 2 seconds). Do not use it for foreground commands.

Parameters:
- shell_id: the ID from "Command running in background with ID: …".

The ID of a background agent (Agent with run_in_background, "agent_…") stops that agent; its notification is then
not sent.

Result: "Killed background shell {id}: {command}". It fails when the ID is unknown or the command had already
finished (the failure gives its exit status; its output stays readable with BashOutput).`

/** The shell had already finished: there was nothing to kill. */
export class ShellNotRunning extends Schema.TaggedError<ShellNotRunning>()("ShellNotRunning", {
  message: Schema.String,
  id: Schema.String
}) {}

/** The background agent had already ended: there was nothing to stop. */
export class AgentNotRunning extends Schema.TaggedError<AgentNotRunning>()("AgentNotRunning", {
  message: Schema.String,
  id: Schema.String
}) {}

/** What KillShell fails with: its own failures and the background shells' (an unknown shell id). */
export const Failure = Schema.Union(BashOutput.NoBackgroundAgent, ShellNotRunning, AgentNotRunning, UnknownShell)

/** Stops a background agent; fails when the id is unknown or the agent had already ended. */
const stopAgent = (id: string, state: Tool.SessionState) =>
  Effect.gen(function* () {
    const agent = (yield* state.get(BackgroundAgents.backgroundAgentsKey)).get(id)
    if (agent === undefined) {
      return yield* new BashOutput.NoBackgroundAgent({
        id,
        message: `No background agent with ID: ${id}. Use the ID Agent returned.`
      })
    }
    if (agent.status !== "running") {
      return yield* new AgentNotRunning({
        id,
        message: `Background agent ${id} is not running (it has ${agent.status === "killed" ? "been stopped" : agent.status}), so there was nothing to stop.`
      })
    }
    yield* agent.stop
    return `Stopped background agent ${id}: ${agent.description}`
  })

/** Makes KillShell; its `call` takes the BackgroundShells service from the context it runs in. */
export const make = Tool.make({
  name: "KillShell",
  description,
  input: Input,
  output: Schema.String,
  category: "shell",
  searchHint: "stop kill background shell process",
  summarize: (input) => input.shell_id,
  failure: Failure,
  call: (input, ctx) =>
    Effect.gen(function* () {
      if (BackgroundAgents.isAgentId(input.shell_id)) return yield* stopAgent(input.shell_id, ctx.state)
      const shells = yield* BackgroundShells
      const { info, wasRunning } = yield* shells.kill(input.shell_id)
      if (!wasRunning) {
        const status =
          info.status._tag === "completed"
            ? info.status.exitCode === null
              ? `killed by signal ${info.status.signal ?? "unknown"}`
              : `exit code ${info.status.exitCode}`
            : "already killed"
        return yield* new ShellNotRunning({
          id: info.id,
          message: `Shell ${info.id} is not running (it had already finished: ${status}), so there was nothing to kill.`
        })
      }
      return `Killed background shell ${info.id}: ${info.command}`
    })
})

/** Registers KillShell. Requires ToolRegistry and BackgroundShells. */
export const layer = ToolRegistryLive.register(make)
