/**
 * `armature run` with sub-agents, over the scripted Messages server: an Agent call runs a sub-agent from a
 * `.claude/agents/*.md` file with only its declared tools and its system prompt; its final text is the call's result;
 * two Agent calls of one turn are in flight at once (a barrier in the server, not timing); an interrupt cancels both.
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as MessagesServer from "../fixtures/MessagesServer.js"

const bin = Path.resolve(__dirname, "../../bin/armature.mjs")

interface Outcome {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `armature run …`; `onStart` gets the child once it runs (to signal it). */
const armature = (
  args: ReadonlyArray<string>,
  env: Record<string, string | undefined>,
  onStart?: (child: ChildProcess.ChildProcess) => void
) =>
  Effect.async<Outcome>((resume) => {
    const child = ChildProcess.spawn(process.execPath, [bin, "run", ...args], {
      env: { ...process.env, ANTHROPIC_API_KEY: "dummy", ANTHROPIC_MODEL: undefined, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout!.on("data", (d: Buffer) => {
      stdout += d.toString("utf8")
    })
    child.stderr!.on("data", (d: Buffer) => {
      stderr += d.toString("utf8")
    })
    child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
    onStart?.(child)
    return Effect.sync(() => child.kill("SIGKILL"))
  })

const lines = (stdout: string): ReadonlyArray<Record<string, unknown>> =>
  stdout
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>)

const reviewer = `---
name: reviewer
description: Reviews code for bugs
tools: Read, Grep
model: inherit
---
You are the reviewer. Report every bug you find.
`

/** A project with `.claude/agents/reviewer.md` and a file to read. */
const project = () => {
  const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-agents-")))
  Fs.mkdirSync(Path.join(dir, ".claude", "agents"), { recursive: true })
  Fs.writeFileSync(Path.join(dir, ".claude", "agents", "reviewer.md"), reviewer)
  Fs.writeFileSync(Path.join(dir, "main.ts"), "export const x = 1\n")
  return { dir, env: { ARMATURE_STATE_DIR: Path.join(dir, ".armature"), HOME: dir } }
}

const systemText = (body: MessagesServer.RecordedRequest["body"]): string =>
  JSON.stringify(body.system ?? "").includes("You are the reviewer") ? "reviewer" : "main"

const agentCall = (id: string, prompt: string): MessagesServer.ScriptBlock => ({
  type: "tool_use",
  id,
  name: "Agent",
  input: { description: "review main.ts", prompt, subagent_type: "reviewer" }
})

const resultsOf = (request: MessagesServer.RecordedRequest) =>
  request.body.messages.flatMap((m) =>
    Array.isArray(m.content)
      ? (m.content as ReadonlyArray<Record<string, unknown>>).filter((b) => b.type === "tool_result")
      : []
  )

describe("armature run: sub-agents", () => {
  it.scopedLive(
    "an Agent call runs the sub-agent of .claude/agents with its own tools and prompt; its text is the result",
    () =>
      Effect.gen(function* () {
        const { dir, env } = project()
        const server = yield* MessagesServer.make(
          [
            MessagesServer.message([agentCall("toolu_agent", "Review main.ts")], { inputTokens: 100 }),
            MessagesServer.message([{ type: "text", text: "The reviewer found one bug." }], { inputTokens: 300 })
          ],
          {
            laneOf: systemText,
            lanes: {
              reviewer: [
                MessagesServer.message(
                  [
                    {
                      type: "tool_use",
                      id: "toolu_read",
                      name: "Read",
                      input: { file_path: Path.join(dir, "main.ts") }
                    }
                  ],
                  { inputTokens: 1000, outputTokens: 10 }
                ),
                MessagesServer.message([{ type: "text", text: "One bug: x is never used." }], {
                  inputTokens: 2000,
                  outputTokens: 20
                })
              ]
            }
          }
        )
        const out = yield* armature(["review please", "--output", "stream-json", "--cwd", dir], {
          ...env,
          ANTHROPIC_BASE_URL: server.url
        })
        expect(out.code, out.stderr).toBe(0)
        expect(server.laneOfRequest).toEqual(["main", "reviewer", "reviewer", "main"])
        // the parent offers Agent, listing the reviewer; the sub-agent gets only its declared tools
        const parentTools = (server.requests[0].body.tools ?? []).map((t) => String(t.name))
        expect(parentTools[0]).toBe("Agent")
        expect(String(server.requests[0].body.tools?.[0]?.description)).toContain("- reviewer: Reviews code for bugs")
        const sub = server.requests[1].body
        expect((sub.tools ?? []).map((t) => String(t.name))).toEqual(["Grep", "Read"])
        const system = JSON.stringify(sub.system)
        expect(system).toContain("You are the reviewer. Report every bug you find.")
        expect(system).not.toContain("You are an agent that completes the user's task")
        expect(sub.messages).toEqual([{ role: "user", content: [{ type: "text", text: "Review main.ts" }] }])
        // the sub-agent's Read ran; its final text is the Agent call's result in the parent's next request
        expect(resultsOf(server.requests[2])).toEqual([
          { type: "tool_result", tool_use_id: "toolu_read", content: expect.stringContaining("export const x = 1") }
        ])
        expect(resultsOf(server.requests[3])).toEqual([
          { type: "tool_result", tool_use_id: "toolu_agent", content: "One bug: x is never used." }
        ])
        // the sub-agent's events are in the stream with parent_tool_use_id; its usage is rolled into the result
        const events = lines(out.stdout)
        const nested = events.filter((e) => e.parent_tool_use_id === "toolu_agent")
        expect(nested.map((e) => e.type)).toEqual(["assistant", "user", "assistant"])
        expect(events.filter((e) => e.type === "system" && e.parent_tool_use_id !== undefined)).toEqual([])
        const result = events.at(-1) as { type: string; result: string; usage: { input_tokens: number } }
        expect(result).toMatchObject({ type: "result", subtype: "success", result: "The reviewer found one bug." })
        expect(result.usage.input_tokens).toBe(100 + 300 + 1000 + 2000)
        // its side chain is next to the parent's transcript, linked by the Agent call's id
        const sessionId = String(events.at(-1)?.session_id)
        const chain = Path.join(dir, ".armature", "transcripts", sessionId, "agents", "toolu_agent.jsonl")
        const recorded = lines(Fs.readFileSync(chain, "utf8"))
        expect(recorded.every((l) => l.parent_tool_use_id === "toolu_agent" && l.isSidechain === true)).toBe(true)
        expect(recorded.map((l) => l.type)).toEqual(["system", "user", "assistant", "user", "assistant", "result"])
      }),
    120_000
  )

  it.scopedLive(
    "two Agent calls of one turn run concurrently: both sub-agent requests wait at one barrier",
    () =>
      Effect.gen(function* () {
        const { dir, env } = project()
        const answer = (text: string): MessagesServer.Reply => ({
          kind: "barrier",
          name: "both",
          parties: 2,
          reply: MessagesServer.message([{ type: "text", text }])
        })
        const server = yield* MessagesServer.make(
          [
            MessagesServer.message([agentCall("toolu_a", "Review part A"), agentCall("toolu_b", "Review part B")]),
            MessagesServer.message([{ type: "text", text: "Both reviews are in." }])
          ],
          { laneOf: systemText, lanes: { reviewer: [answer("review one"), answer("review two")] } }
        )
        const out = yield* armature(["review both", "--output", "stream-json", "--cwd", dir], {
          ...env,
          ANTHROPIC_BASE_URL: server.url
        })
        expect(out.code, out.stderr).toBe(0)
        const last = server.requests.at(-1)!
        const results = resultsOf(last)
        // had the calls run one after the other, the first would have waited at the barrier until it gave up (400)
        expect(results.map((r) => r.tool_use_id)).toEqual(["toolu_a", "toolu_b"])
        expect(results.every((r) => r.is_error === undefined)).toBe(true)
        expect(new Set(results.map((r) => r.content))).toEqual(new Set(["review one", "review two"]))
        expect(lines(out.stdout).at(-1)).toMatchObject({ subtype: "success", result: "Both reviews are in." })
      }),
    120_000
  )

  it.scopedLive(
    "an interrupt cancels both running sub-agents: their requests are abandoned and each call is answered",
    () =>
      Effect.gen(function* () {
        const { dir, env } = project()
        const server = yield* MessagesServer.make(
          [MessagesServer.message([agentCall("toolu_a", "Review part A"), agentCall("toolu_b", "Review part B")])],
          { laneOf: systemText, lanes: { reviewer: [{ kind: "hold" }, { kind: "hold" }] } }
        )
        const out = yield* armature(
          ["review both", "--output", "stream-json", "--cwd", dir],
          { ...env, ANTHROPIC_BASE_URL: server.url },
          (child) => {
            void server.waitForHeld(2).then(() => child.kill("SIGINT"))
          }
        )
        expect(out.code, out.stderr).toBe(1)
        expect(server.requests).toHaveLength(3)
        expect(server.held).toEqual({ count: 2, abandoned: 2 })
        const events = lines(out.stdout)
        const answered = events
          .filter((e) => e.type === "user" && e.parent_tool_use_id === undefined)
          .flatMap((e) => (e.message as { content: ReadonlyArray<Record<string, unknown>> }).content)
        expect(answered.map((r) => [r.tool_use_id, r.is_error])).toEqual([
          ["toolu_a", true],
          ["toolu_b", true]
        ])
        expect(events.at(-1)).toMatchObject({ type: "result", subtype: "interrupted" })
      }),
    120_000
  )
})

describe("armature run: auto-compaction", () => {
  it.scopedLive(
    "past --compact-threshold the conversation is summarized, continues from the summary, and --resume starts there",
    () =>
      Effect.gen(function* () {
        const { dir, env } = project()
        const settings = Path.join(dir, "hooks.json")
        Fs.writeFileSync(
          settings,
          JSON.stringify({
            hooks: {
              PreCompact: [{ matcher: "auto", hooks: [{ type: "command", command: `cat > ${dir}/precompact.json` }] }]
            }
          })
        )
        const isCompaction = (body: MessagesServer.RecordedRequest["body"]) =>
          JSON.stringify(body.system ?? "").includes("You are summarizing a conversation") ? "compact" : "main"
        const server = yield* MessagesServer.make(
          [
            MessagesServer.message(
              [{ type: "tool_use", id: "toolu_read", name: "Read", input: { file_path: Path.join(dir, "main.ts") } }],
              { inputTokens: 5000 }
            ),
            MessagesServer.message([{ type: "text", text: "Done reading." }], { inputTokens: 300 }),
            MessagesServer.message([{ type: "text", text: "Still here." }], { inputTokens: 400 })
          ],
          {
            laneOf: isCompaction,
            lanes: {
              compact: [MessagesServer.message([{ type: "text", text: "SUMMARY: the user asked to read main.ts" }])]
            }
          }
        )
        const base = ["--output", "stream-json", "--cwd", dir, "--compact-threshold", "1000", "--settings", settings]
        const out = yield* armature(["read main.ts please", ...base], { ...env, ANTHROPIC_BASE_URL: server.url })
        expect(out.code, out.stderr).toBe(0)
        expect(server.laneOfRequest).toEqual(["main", "compact", "main"])
        // the compaction request: the whole conversation, no tools, the instruction last
        const compaction = server.requests[1].body
        expect(compaction.tools ?? []).toEqual([])
        expect(compaction.messages).toHaveLength(3)
        expect(JSON.stringify(compaction.messages.at(-1))).toContain("Write a summary of the conversation so far")
        // the next request starts from the summary, the user's request and the call still being answered
        const next = server.requests[2].body.messages
        expect(next.map((m) => m.role)).toEqual(["user", "assistant", "user"])
        const opening = JSON.stringify(next[0])
        expect(opening).toContain("SUMMARY: the user asked to read main.ts")
        expect(opening).toContain("read main.ts please")
        expect(resultsOf(server.requests[2])).toEqual([
          { type: "tool_result", tool_use_id: "toolu_read", content: expect.stringContaining("export const x = 1") }
        ])
        const events = lines(out.stdout)
        expect(events.filter((e) => e.subtype === "compact_boundary")).toMatchObject([
          { type: "system", compact_metadata: { trigger: "auto", pre_tokens: 5000 } }
        ])
        expect(events.at(-1)).toMatchObject({ subtype: "success", result: "Done reading." })
        // the PreCompact hook ran with trigger auto
        expect(JSON.parse(Fs.readFileSync(Path.join(dir, "precompact.json"), "utf8"))).toMatchObject({
          hook_event_name: "PreCompact",
          trigger: "auto"
        })
        // --resume continues from the compacted history, not from the first prompt
        const sessionId = String(events.at(-1)?.session_id)
        const resumed = yield* armature(["and now?", ...base, "--resume", sessionId], {
          ...env,
          ANTHROPIC_BASE_URL: server.url
        })
        expect(resumed.code, resumed.stderr).toBe(0)
        const again = server.requests[3].body.messages
        expect(again.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user"])
        expect(JSON.stringify(again[0])).toContain("SUMMARY: the user asked to read main.ts")
        expect(again.at(-1)).toEqual({ role: "user", content: [{ type: "text", text: "and now?" }] })
        expect(lines(resumed.stdout).at(-1)).toMatchObject({ subtype: "success", result: "Still here." })
      }),
    120_000
  )

  it.scopedLive(
    "a bad agent definition stops the run before it starts, naming the file and the field",
    () =>
      Effect.gen(function* () {
        const { dir, env } = project()
        const bad = Path.join(dir, ".claude", "agents", "broken.md")
        Fs.writeFileSync(bad, "---\nname: broken\n---\nNo description.\n")
        const out = yield* armature(["hi", "--cwd", dir], { ...env, ANTHROPIC_BASE_URL: "http://127.0.0.1:9" })
        expect(out.code).toBe(2)
        expect(out.stderr).toContain(`agent definition ${bad}: description: missing`)
      }),
    60_000
  )
})
