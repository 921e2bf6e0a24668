/**
 * `armature timeline TRANSCRIPT.jsonl -o FILE.html`: draws the timeline page of a saved transcript — a `run`
 * session's, or the audit trail of `exec --transcript`. See docs/observability.md.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import { InvalidInputError } from "../domain/Errors.js"
import * as TranscriptLive from "../layers/agent/TranscriptLive.js"
import * as Audit from "./Audit.js"
import * as ExitCode from "./ExitCode.js"

/** Renders `transcript` to `output`; a missing or unreadable transcript is an input error. */
export const timeline = (transcript: string, output: string) =>
  Effect.gen(function* () {
    const text = yield* Effect.try({
      try: () => Fs.readFileSync(transcript, "utf8"),
      catch: (e) =>
        new InvalidInputError({
          message: `${transcript}: ${e instanceof Error && "code" in e && e.code === "ENOENT" ? "no such file" : String(e)}`
        })
    })
    const entries = TranscriptLive.parse(text)
    if (!entries.some((e) => e.type === "assistant")) {
      return yield* new InvalidInputError({
        message: `${transcript}: no assistant message with calls in this transcript`
      })
    }
    yield* Audit.writeTimeline(output, entries, `armature timeline — ${Path.basename(transcript)}`)
    yield* Console.error(`wrote ${output}`)
  })

const transcript = Args.file({ name: "TRANSCRIPT", exists: "yes" }).pipe(
  Args.withDescription("A transcript (.jsonl) written by run or by exec --transcript")
)

const output = Options.text("output").pipe(
  Options.withAlias("o"),
  Options.withDescription("The HTML file to write (self-contained: no network resource)")
)

/** `armature timeline`. */
export const command = Command.make("timeline", { transcript, output }, (args) =>
  timeline(args.transcript, args.output).pipe(ExitCode.onInvalidInput)
).pipe(Command.withDescription("Draw the calls of a saved transcript over time as a self-contained HTML page"))
