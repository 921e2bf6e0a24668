/**
 * The audit trail of `exec --transcript` / `--timeline` and `run --timeline`: the call log's lines (state changes,
 * decisions, the model's stream) and the messages, kept in memory for the timeline and written as JSON Lines to a
 * transcript as they come. See docs/observability.md.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Clock, Effect } from "effect"
import { InvalidInputError } from "../domain/Errors.js"
import type { PermissionDecision } from "../domain/Permission.js"
import * as CallLog from "../layers/observability/CallLog.js"
import * as TimelineData from "../layers/observability/TimelineData.js"
import * as TimelineHtml from "../layers/observability/TimelineHtml.js"
import type { PermissionRequest } from "../services/PermissionPolicy.js"
import type { TranscriptEntry } from "../services/Transcript.js"

/** The lines of one command, and where else they go. */
export interface Audit {
  readonly entries: Array<TranscriptEntry>
  /** The session the lines belong to; set once the session exists. */
  sessionId: string
  /** Where each line is also written (a transcript); set once the writer exists. */
  sink: (line: { readonly type: string; readonly [key: string]: unknown }) => Effect.Effect<void>
}

/** An empty audit that writes nowhere yet. */
export const make = (): Audit => ({ entries: [], sessionId: "", sink: () => Effect.void })

/** Keeps a line (stamped with the session and the time) and hands it to the sink. */
export const add = <Line extends { readonly type: string }>(audit: Audit, line: Line): Effect.Effect<void> =>
  Effect.suspend(() => {
    audit.entries.push({ ...line, session_id: audit.sessionId, timestamp: new Date().toISOString() } as TranscriptEntry)
    return audit.sink(line)
  })

/** Keeps a line for the timeline only (it is in the transcript already). */
export const keep = <Line extends { readonly type: string }>(audit: Audit, line: Line): Effect.Effect<void> =>
  Effect.sync(() => {
    audit.entries.push({ ...line, session_id: audit.sessionId, timestamp: new Date().toISOString() } as TranscriptEntry)
  })

/** The decision callback for the engine's policy: records each decision. */
export const onDecision =
  (audit: Audit) =>
  (request: PermissionRequest, decision: PermissionDecision): Effect.Effect<void> =>
    Effect.flatMap(Clock.currentTimeMillis, (at) => add(audit, CallLog.decisionRecord(request, decision, at)))

/** A sink appending JSON lines to `path` (the file is started afresh); an unwritable path is an input error. */
export const fileSink = (path: string, sessionId: string) =>
  Effect.try({
    try: () => {
      Fs.mkdirSync(Path.dirname(Path.resolve(path)), { recursive: true })
      const fd = Fs.openSync(path, "w")
      return (line: { readonly type: string; readonly [key: string]: unknown }) =>
        Effect.sync(() => {
          Fs.writeSync(
            fd,
            `${JSON.stringify({ ...line, session_id: sessionId, timestamp: new Date().toISOString() })}\n`
          )
        })
    },
    catch: (e) =>
      new InvalidInputError({ message: `--transcript ${path}: ${e instanceof Error ? e.message : String(e)}` })
  })

/** Writes the timeline page of `entries` to `path`. */
export const writeTimeline = (path: string, entries: ReadonlyArray<TranscriptEntry>, title: string) =>
  Effect.try({
    try: () => {
      Fs.mkdirSync(Path.dirname(Path.resolve(path)), { recursive: true })
      Fs.writeFileSync(path, TimelineHtml.render(TimelineData.fromEntries(entries), title))
    },
    catch: (e) =>
      new InvalidInputError({ message: `--timeline ${path}: ${e instanceof Error ? e.message : String(e)}` })
  })
