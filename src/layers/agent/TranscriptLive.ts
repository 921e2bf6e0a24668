/**
 * The JSON Lines transcript at the session's `transcriptPath` (`<stateDir>/transcripts/{sessionId}.jsonl`):
 * entries already there are read when the layer is built (resume), new ones appended, fsync'd on `sync`.
 */

import * as Path from "node:path"
import { FileSystem } from "@effect/platform"
import { Effect, Layer } from "effect"
import { Session } from "../../services/Session.js"
import { Transcript, type TranscriptEntry, TranscriptError } from "../../services/Transcript.js"

const encoder = new TextEncoder()

/** Parses a transcript's text; a line that is not JSON (a torn last write) is skipped. */
export const parse = (text: string): ReadonlyArray<TranscriptEntry> =>
  text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .flatMap((line) => {
      try {
        const value: unknown = JSON.parse(line)
        return typeof value === "object" && value !== null && "type" in value ? [value as TranscriptEntry] : []
      } catch {
        return []
      }
    })

/** Reads the transcript at `path`; a missing file is an empty transcript. */
export const read = (path: string) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const exists = yield* fs.exists(path)
    if (!exists) return []
    return parse(yield* fs.readFileString(path))
  }).pipe(Effect.mapError((e) => new TranscriptError({ path, message: e.message })))

/** Opens the session's transcript for appending, for the life of the scope. */
export const make = Effect.flatMap(Session, (session) => openAt(session.transcriptPath, session.id))

/**
 * Opens a transcript at `path` for appending, for the life of the scope; `fields` are added to every line (a
 * sub-agent's side chain carries `parent_tool_use_id`).
 */
export const openAt = (path: string, sessionId: string, fields: Record<string, unknown> = {}) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const fail = (e: { readonly message: string }) => new TranscriptError({ path, message: e.message })
    const previous = yield* read(path)
    yield* fs.makeDirectory(Path.dirname(path), { recursive: true }).pipe(Effect.mapError(fail))
    const file = yield* fs.open(path, { flag: "a" }).pipe(Effect.mapError(fail))
    const lock = yield* Effect.makeSemaphore(1)
    return Transcript.of({
      path,
      previous,
      append: (entry) =>
        lock.withPermits(1)(
          Effect.suspend(() => {
            const line = JSON.stringify({
              ...entry,
              ...fields,
              session_id: sessionId,
              timestamp: new Date().toISOString()
            })
            return file.writeAll(encoder.encode(`${line}\n`))
          }).pipe(Effect.mapError(fail))
        ),
      sync: lock.withPermits(1)(file.sync).pipe(Effect.mapError(fail))
    })
  })

/** The transcript as a layer (needs FileSystem and Session). */
export const layer = Layer.scoped(Transcript, make)

/** A transcript that records nothing: for tests and embedders that keep their own. */
export const none = Layer.succeed(
  Transcript,
  Transcript.of({ path: "", previous: [], append: () => Effect.void, sync: Effect.void })
)
