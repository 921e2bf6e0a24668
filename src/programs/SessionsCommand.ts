/**
 * `armature resume SESSION_ID` and `armature sessions`: the commands of durable sessions. Their work lives in
 * DurableRun, loaded only when one of them runs (the workflow engine and the SQL drivers are not part of a start).
 */
import { Args, Command, Options } from "@effect/cli"
import { Effect } from "effect"
import * as ExitCode from "./ExitCode.js"
import { loadDurable as load } from "./LoadDurable.js"

const database = Options.text("database").pipe(
  Options.withDescription("The PostgreSQL database of the sessions (postgres://…); default: SQLite under .armature/"),
  Options.optional
)

/** `armature resume SESSION_ID`. */
export const resume = Command.make(
  "resume",
  {
    sessionId: Args.text({ name: "SESSION_ID" }).pipe(Args.withDescription("The durable session to continue")),
    database,
    output: Options.choice("output", ["text", "json", "stream-json"]).pipe(
      Options.withDescription(
        "text, json (the result object) or stream-json (JSON Lines: init, messages, result); default: the format " +
          "the session was started with"
      ),
      Options.optional
    ),
    timeline: Options.text("timeline").pipe(
      Options.withDescription("Write a self-contained HTML picture of the resumed turns to this file"),
      Options.optional
    )
  },
  ({ database, output, sessionId, timeline }) =>
    Effect.flatMap(load, (durable) => durable.resume(sessionId, database, { output, timeline })).pipe(
      ExitCode.onInvalidInput
    )
).pipe(
  Command.withDescription(
    "Continue a durable session (run --durable) that was cut short: stored turns and tool results are replayed, not re-run"
  )
)

/** `armature sessions`. */
export const sessions = Command.make(
  "sessions",
  { database, json: Options.boolean("json").pipe(Options.withDescription("Print JSON lines instead of a table")) },
  ({ database, json }) =>
    Effect.flatMap(load, (durable) => durable.sessions(database, json)).pipe(ExitCode.onInvalidInput)
).pipe(Command.withDescription("List the durable sessions and their state (running, interrupted, or how they ended)"))
