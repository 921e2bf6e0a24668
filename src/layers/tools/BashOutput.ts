/**
 * BashOutput: the new output of a background shell since the last read, and its status.
 */
import { Effect, Schema } from "effect"
import * as BackgroundAgents from "../../domain/BackgroundAgents.js"
import * as Tool from "../../domain/Tool.js"
import {
  BackgroundShells,
  ShellLogFailed,
  type ShellOutput,
  type ShellStatus,
  UnknownShell
} from "../../services/BackgroundShells.js"
import * as ProcessBackgroundShells from "../process/ProcessBackgroundShells.js"
import * as ToolRegistryLive from "../registry/ToolRegistryLive.js"

const Input = Schema.Struct({
  bash_id: Schema.String.pipe(Schema.minLength(1)).annotations({
    description:
      "The ID returned by Bash with run_in_background (e.g. bash_1a2b3c4d), or by Agent with run_in_background (e.g. agent_1a2b3c4d)."
  }),
  filter: Schema.optional(
    Schema.String.annotations({
      description:
        "A JavaScript regular expression; only new lines matching it are returned. Lines that do not match are consumed and will not be shown again."
    })
  )
})

const description = `Reads the output of a command started with Bash run_in_background, and tells whether it is still running.

Use it to follow a dev server, a watcher or a long build you started in the background: each call returns only
the output written since the previous call, so call it again later to see more. Do not call it in a tight loop;
if you are waiting for something, do other work or use Sleep between reads. Do not use it for commands you ran in
the foreground: their output was already in the Bash result.

Parameters:
- bash_id: the ID from "Command running in background with ID: …".
- filter: optional regular expression (JavaScript syntax, e.g. "error|warn"); only matching lines are returned,
  the others are discarded for good.

The ID of a background agent (Agent with run_in_background, "agent_…") works too: the result tells whether it is
still running, and gives its answer once it has ended (the answer also comes to you as a notification).

Result: a status line ("Status: running", "Status: completed with exit code N", "Status: killed"), then the new
output, or "(no new output)". When more than ${ProcessBackgroundShells.maxReadBytes} bytes arrived since the last read, only the
latest ones are shown and the note says where the full log is.`

const statusLine = (status: ShellStatus): string => {
  switch (status._tag) {
    case "running":
      return "Status: running"
    case "killed":
      return "Status: killed"
    case "completed":
      return status.exitCode === null
        ? `Status: completed, killed by signal ${status.signal ?? "unknown"}`
        : `Status: completed with exit code ${status.exitCode}`
  }
}

/** The text of a read: status line, notes, then the new output. */
export const render = (output: ShellOutput): string => {
  const lines = [statusLine(output.info.status)]
  if (output.skippedBytes > 0) {
    lines.push(`[${output.skippedBytes} earlier bytes of new output skipped; the full log is ${output.info.logPath}]`)
  }
  if (output.filteredLines > 0) lines.push(`[${output.filteredLines} lines did not match the filter]`)
  const text = output.text.replace(/\n+$/, "")
  lines.push(text.length === 0 ? "(no new output)" : text)
  return lines.join("\n")
}

/** No background agent has this id. */
export class NoBackgroundAgent extends Schema.TaggedError<NoBackgroundAgent>()("NoBackgroundAgent", {
  message: Schema.String,
  id: Schema.String
}) {}

/** The filter is not a valid regular expression. */
export class InvalidFilter extends Schema.TaggedError<InvalidFilter>()("InvalidFilter", { message: Schema.String }) {}

/** What BashOutput fails with: its own failures and the background shells' (an unknown shell id, an unreadable log). */
export const Failure = Schema.Union(NoBackgroundAgent, InvalidFilter, UnknownShell, ShellLogFailed)

/** What a background agent has to show: its status, and its answer the first time it is read after it ended. */
const readAgent = (id: string, state: Tool.SessionState) =>
  Effect.flatMap(
    state.modify(BackgroundAgents.backgroundAgentsKey, (table) => {
      const agent = table.get(id)
      if (agent === undefined) return [undefined, table] as const
      return [agent, BackgroundAgents.update(table, id, (a) => ({ ...a, read: a.status !== "running" }))] as const
    }),
    (agent) =>
      agent === undefined
        ? Effect.fail(
            new NoBackgroundAgent({ id, message: `No background agent with ID: ${id}. Use the ID Agent returned.` })
          )
        : Effect.succeed(BackgroundAgents.statusText(agent))
  )

/** Makes BashOutput; its `call` takes the BackgroundShells service from the context it runs in. */
export const make = Tool.make({
  name: "BashOutput",
  description,
  input: Input,
  output: Schema.String,
  category: "shell",
  searchHint: "background shell output logs tail",
  isReadOnly: () => true,
  // Two reads of one shell must not interleave: each consumes output.
  isConcurrencySafe: () => false,
  checkPermissions: () => Effect.succeed({ behavior: "allow", reason: "BashOutput only reads a background log" }),
  summarize: (input) => input.bash_id,
  failure: Failure,
  call: (input, ctx) =>
    Effect.gen(function* () {
      if (BackgroundAgents.isAgentId(input.bash_id)) return yield* readAgent(input.bash_id, ctx.state)
      const filter =
        input.filter === undefined
          ? undefined
          : yield* Effect.try({
              try: () => new RegExp(input.filter ?? ""),
              catch: (e) =>
                new InvalidFilter({
                  message: `Invalid filter regular expression: ${e instanceof Error ? e.message : String(e)}`
                })
            })
      const shells = yield* BackgroundShells
      return render(yield* shells.read(input.bash_id, filter))
    })
})

/** Registers BashOutput. Requires ToolRegistry and BackgroundShells. */
export const layer = ToolRegistryLive.register(make)
