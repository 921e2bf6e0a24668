/**
 * The session transcript's port: one JSON line per message or event, appended as the session goes, synced to disk
 * at the end of each turn, and read back to resume a session (`--resume ID`).
 */

import type { Effect } from "effect"
import { Context, Schema } from "effect"
import type { Message } from "./LanguageModel.js"

/** One line of a transcript. `user` and `assistant` lines carry a message; other types are events. */
export interface TranscriptEntry {
  readonly type: string
  readonly session_id: string
  readonly timestamp: string
  readonly message?: Message
  readonly [key: string]: unknown
}

/** A transcript could not be written or read. */
export class TranscriptError extends Schema.TaggedError<TranscriptError>()("TranscriptError", {
  path: Schema.String,
  message: Schema.String
}) {}

/** The port. */
export class Transcript extends Context.Tag("armature/Transcript")<
  Transcript,
  {
    /** Where the transcript is written. */
    readonly path: string
    /** The entries already in the transcript when the session started (empty for a new session). */
    readonly previous: ReadonlyArray<TranscriptEntry>
    /** Appends one line (`session_id` and `timestamp` are filled in). */
    readonly append: <Entry extends { readonly type: string }>(entry: Entry) => Effect.Effect<void, TranscriptError>
    /** Flushes the file to disk (fsync); called at the end of every turn. */
    readonly sync: Effect.Effect<void, TranscriptError>
  }
>() {}

const interruptedText =
  "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed."

/**
 * The conversation recorded in a transcript, ready to continue: every `user`/`assistant` message in order (after the
 * last `compact_boundary` line, when the conversation was compacted); an
 * assistant message whose tool_use blocks were never answered (the process died mid-turn) gets is_error results,
 * so the resumed conversation is valid for the API.
 */
export const messagesOf = (entries: ReadonlyArray<TranscriptEntry>): ReadonlyArray<Message> => {
  const messages: Array<Message> = []
  // a compacted conversation continues from its last boundary (the short history recorded after it)
  let boundary = -1
  entries.forEach((e, i) => {
    if (e.type === "system" && e.subtype === "compact_boundary") boundary = i
  })
  for (const entry of entries.slice(boundary + 1)) {
    // only role and content go back to the API: a stored assistant message also carries id, model, stop_reason and
    // usage (as Claude Code's transcripts do), which the Messages API refuses as extra inputs
    const message = entry.message
    if ((entry.type === "user" || entry.type === "assistant") && message !== undefined) {
      messages.push({ role: message.role, content: message.content } as Message)
    }
  }
  const repaired: Array<Message> = []
  messages.forEach((message, i) => {
    repaired.push(message)
    if (message.role !== "assistant") return
    const ids = message.content.flatMap((b) => (b.type === "tool_use" && "id" in b ? [String(b.id)] : []))
    if (ids.length === 0) return
    const next = messages[i + 1]
    const answered = new Set(
      next !== undefined && next.role === "user" && typeof next.content !== "string"
        ? next.content.flatMap((b) => (b.type === "tool_result" ? [b.tool_use_id] : []))
        : []
    )
    const missing = ids.filter((id) => !answered.has(id))
    if (missing.length === 0) return
    const results = missing.map((id) => ({
      type: "tool_result" as const,
      tool_use_id: id,
      content: interruptedText,
      is_error: true
    }))
    if (next !== undefined && next.role === "user" && typeof next.content !== "string" && answered.size > 0) {
      messages[i + 1] = { role: "user", content: [...next.content, ...results] }
    } else {
      repaired.push({ role: "user", content: results })
    }
  })
  return repaired
}
