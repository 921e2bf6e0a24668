import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as ToolLoading from "../../src/programs/ToolLoading.js"

const assistant = (...names: ReadonlyArray<string>) =>
  JSON.stringify({
    type: "assistant",
    message: {
      role: "assistant",
      content: [{ type: "text", text: "…" }, ...names.map((name, i) => ({ type: "tool_use", id: `t${i}`, name }))]
    }
  })

describe("ToolLoading.usageOfTranscripts", () => {
  it("reads one turn per assistant message, older sessions first, skipping lines that are not JSON", () => {
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-usage-"))
    const transcripts = Path.join(dir, "transcripts")
    Fs.mkdirSync(transcripts)
    const older = Path.join(transcripts, "b.jsonl")
    const newer = Path.join(transcripts, "a.jsonl")
    Fs.writeFileSync(older, [assistant("WebFetch"), "{not json", assistant()].join("\n"))
    Fs.writeFileSync(
      newer,
      [JSON.stringify({ type: "user", message: {} }), assistant("Read", "Read", "Grep")].join("\n")
    )
    Fs.utimesSync(older, new Date(1_000_000), new Date(1_000_000))
    Fs.utimesSync(newer, new Date(2_000_000), new Date(2_000_000))
    expect(ToolLoading.usageOfTranscripts(dir)).toEqual([["WebFetch"], [], ["Read", "Grep"]])
    expect(ToolLoading.usageOfTranscripts(Path.join(dir, "missing"))).toEqual([])
  })
})
