import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as TranscriptLive from "../../../src/layers/agent/TranscriptLive.js"
import * as SessionLive from "../../../src/layers/session/SessionLive.js"
import { messagesOf, Transcript, type TranscriptEntry } from "../../../src/services/Transcript.js"

const rejected =
  "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed."

const entry = (type: string, message?: TranscriptEntry["message"]): TranscriptEntry => ({
  type,
  session_id: "s",
  timestamp: "t",
  ...(message === undefined ? {} : { message })
})

describe("Transcript", () => {
  it.scoped("appends one JSON line per entry and reads them back as `previous` when reopened", () =>
    Effect.gen(function* () {
      const stateDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-transcript-"))
      const layer = TranscriptLive.layer.pipe(
        Layer.provideMerge(SessionLive.layer({ cwd: stateDir, stateDir, id: "abc" })),
        Layer.provide(NodeContext.layer)
      )
      yield* Effect.gen(function* () {
        const transcript = yield* Transcript
        expect(transcript.previous).toEqual([])
        yield* transcript.append({ type: "user", message: { role: "user", content: "hi" } })
        yield* transcript.append({ type: "result", subtype: "success" })
        yield* transcript.sync
      }).pipe(Effect.provide(layer))
      const path = Path.join(stateDir, "transcripts", "abc.jsonl")
      const lines = Fs.readFileSync(path, "utf8").split("\n")
      expect(lines).toHaveLength(3)
      expect(JSON.parse(lines[0])).toMatchObject({
        type: "user",
        session_id: "abc",
        message: { role: "user", content: "hi" }
      })
      Fs.appendFileSync(path, '{"type":"assistant","mess') // a torn last write
      const previous = yield* Effect.map(Transcript, (t) => t.previous).pipe(Effect.provide(layer))
      expect(previous.map((e) => e.type)).toEqual(["user", "result"])
    })
  )

  it("messagesOf answers tool_use blocks left unanswered by a crash", () => {
    const messages = messagesOf([
      entry("system"),
      entry("user", { role: "user", content: "go" }),
      entry("assistant", {
        role: "assistant",
        content: [
          { type: "tool_use", id: "t1", name: "Sleep", input: {} },
          { type: "tool_use", id: "t2", name: "Sleep", input: {} }
        ]
      }),
      entry("user", { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "ok" }] }),
      entry("assistant", { role: "assistant", content: [{ type: "tool_use", id: "t3", name: "Sleep", input: {} }] })
    ])
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user"])
    expect(messages[2].content).toEqual([
      { type: "tool_result", tool_use_id: "t1", content: "ok" },
      { type: "tool_result", tool_use_id: "t2", content: rejected, is_error: true }
    ])
    expect(messages[4].content).toEqual([{ type: "tool_result", tool_use_id: "t3", content: rejected, is_error: true }])
  })
  it("messagesOf gives the API only each message's role and content", () => {
    const stored = {
      id: "msg_1",
      type: "message",
      model: "claude-sonnet-5-5",
      role: "assistant",
      content: [{ type: "text", text: "done" }],
      stop_reason: "end_turn",
      usage: { input_tokens: 3, output_tokens: 1 }
    } as unknown as TranscriptEntry["message"]
    const messages = messagesOf([entry("user", { role: "user", content: "go" }), entry("assistant", stored)])
    expect(messages).toEqual([
      { role: "user", content: "go" },
      { role: "assistant", content: [{ type: "text", text: "done" }] }
    ])
  })
})
