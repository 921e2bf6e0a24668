/**
 * The timeline's data read from transcript lines (sections per turn, rows in request order, outcomes from the
 * engine's texts and decisions) and the page drawn from it (one row per call, everything escaped, no resource).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Texts from "../../../src/domain/Texts.js"
import * as TimelineData from "../../../src/layers/observability/TimelineData.js"
import * as TimelineHtml from "../../../src/layers/observability/TimelineHtml.js"
import type { TranscriptEntry } from "../../../src/services/Transcript.js"

const line = (entry: Record<string, unknown>): TranscriptEntry =>
  ({ session_id: "s", timestamp: "2026-01-01T00:00:00.000Z", ...entry }) as TranscriptEntry

const use = (id: string, name: string, input: unknown = {}) => ({ type: "tool_use", id, name, input })
const result = (id: string, content: string, isError = false) => ({
  type: "tool_result",
  tool_use_id: id,
  content,
  ...(isError ? { is_error: true } : {})
})
const states = (id: string, q: number, e: number | undefined, c: number, y: number) =>
  [
    ["queued", q],
    ["executing", e],
    ["completed", c],
    ["yielded", y]
  ]
    .filter(([, at]) => at !== undefined)
    .map(([state, at]) => line({ type: "tool_state", tool_use_id: id, state, at }))

const decision = (id: string, behavior: string) =>
  line({
    type: "permission_decision",
    tool_use_id: id,
    tool_name: "Bash",
    behavior,
    reason: `${behavior} by rule`,
    rule: behavior === "deny" ? "Bash(rm:*)" : null,
    source: behavior === "deny" ? "cliArg" : null,
    trace: [{ step: "denyRules", outcome: behavior, reason: "matched <rm>" }],
    at: 5
  })

// A run of two turns: the first streams two calls while the model writes (states come before the assistant
// line), the second answers with text only.
const transcript: ReadonlyArray<TranscriptEntry> = [
  line({ type: "model_stream", phase: "start", model: "m", at: 0 }),
  ...states("a", 10, 10, 40, 40),
  decision("b", "deny"),
  ...states("b", 12, 15, 16, 41),
  line({ type: "model_stream", phase: "end", model: "", at: 20 }),
  line({ type: "assistant", message: { role: "assistant", content: [use("a", "Read"), use("b", "Bash")] } }),
  ...states("c", 21, undefined, 22, 42),
  line({
    type: "user",
    message: {
      role: "user",
      content: [
        result("a", "file <contents>"),
        result("b", "<tool_use_error>denied</tool_use_error>", true),
        result("c", Texts.rejected, true)
      ]
    }
  }),
  line({ type: "model_stream", phase: "start", model: "m", at: 50 }),
  line({ type: "model_stream", phase: "end", model: "", at: 70 }),
  line({ type: "assistant", message: { role: "assistant", content: [{ type: "text", text: "done" }] } })
]

describe("TimelineData.fromEntries", () => {
  it("one section per turn with its model stream, one row per call in request order, outcomes", () => {
    const sections = TimelineData.fromEntries(transcript)
    expect(sections.map((s) => [s.title, s.model, s.rows.map((r) => r.id)])).toEqual([
      ["Turn 1", { start: 0, end: 20 }, ["a", "b"]],
      ["Turn 2", { start: 50, end: 70 }, []]
    ])
    const [a, b] = sections[0].rows
    expect(a).toMatchObject({ name: "Read", queued: 10, executing: 10, completed: 40, yielded: 40, kind: "ok" })
    expect(b).toMatchObject({ kind: "denied", decision: { rule: "Bash(rm:*)" } })
    expect(sections[1].text).toBe("done")
  })

  it("outcomes from the engine's texts: cancelled by a sibling, interrupted, error, pending", () => {
    const kind = TimelineData.kindOfResult
    expect(kind({ content: Texts.siblingErrored("Bash", "exit 3"), is_error: true }, undefined)).toBe("cancelled")
    expect(kind({ content: Texts.rejected, is_error: true }, undefined)).toBe("interrupted")
    expect(kind({ content: Texts.alreadyCancelled, is_error: true }, undefined)).toBe("interrupted")
    expect(kind({ content: "Exit code 3", is_error: true }, undefined)).toBe("error")
    expect(kind({ content: Texts.preToolUseBlocked("Bash", "no"), is_error: true }, undefined)).toBe("denied")
    expect(kind(undefined, undefined)).toBe("pending")
  })
})

describe("TimelineHtml.render", () => {
  it("a self-contained page: one row per call, the model row, text escaped", () => {
    const html = TimelineHtml.render(TimelineData.fromEntries(transcript), "run <x>")
    expect(html.match(/class="row call /g)).toHaveLength(2)
    expect(html.match(/class="row model-row"/g)).toHaveLength(2)
    expect(html).toContain("<title>run &lt;x&gt;</title>")
    expect(html).toContain("file &lt;contents&gt;")
    expect(html).toContain("matched &lt;rm&gt;")
    expect(html).not.toContain("<contents>")
    expect(html).not.toMatch(/(src|href)=/)
  })
})

describe("TimelineData: sub-agents", () => {
  it("a sub-agent's calls are nested rows under its Agent call, not sections of their own", () => {
    const use = (id: string, name: string) => ({ type: "tool_use", id, name, input: {} })
    const entries = [
      line({ type: "assistant", message: { role: "assistant", content: [use("ag", "Agent"), use("r0", "Read")] } }),
      line({
        type: "assistant",
        parent_tool_use_id: "ag",
        message: { role: "assistant", content: [use("s1", "Grep"), use("s2", "Read")] }
      }),
      line({
        type: "user",
        parent_tool_use_id: "ag",
        message: { role: "user", content: [{ type: "tool_result", tool_use_id: "s1", content: "found" }] }
      })
    ]
    const sections = TimelineData.fromEntries(entries)
    expect(sections).toHaveLength(1)
    expect(sections[0]!.rows.map((r) => [r.id, r.depth, r.kind])).toEqual([
      ["ag", 0, "pending"],
      ["s1", 1, "ok"],
      ["s2", 1, "pending"],
      ["r0", 0, "pending"]
    ])
    const html = TimelineHtml.render(sections, "nested")
    expect(html).toContain('<div class="label" style="padding-left:16px">↳ s1 Grep</div>')
  })
})

describe("TimelineData: tool policies", () => {
  it("a call's retries, rate-limit waits and open circuit are lines of its row, shown in its details", () => {
    const entries = [
      line({ type: "tool_policy", tool_use_id: "m", action: "rate_limit", key: "mcp__gh__*", waited_ms: 300, at: 1 }),
      line({
        type: "tool_policy",
        tool_use_id: "m",
        action: "retry",
        key: "mcp__gh__*",
        attempt: 1,
        delay_ms: 200,
        reason: "MCP server gh: overloaded",
        at: 2
      }),
      line({ type: "tool_policy", tool_use_id: "n", action: "circuit_open", key: "Deploy", retry_at: 0, at: 3 }),
      line({
        type: "assistant",
        message: { role: "assistant", content: [use("m", "mcp__gh__search"), use("n", "Deploy")] }
      })
    ]
    const rows = TimelineData.fromEntries(entries)[0]!.rows
    expect(rows.map((r) => r.policy)).toEqual([
      ["waited 300 ms for the rate limit (mcp__gh__*)", "retry 1 in 200 ms (mcp__gh__*): MCP server gh: overloaded"],
      ["refused: circuit open (Deploy) until 1970-01-01T00:00:00.000Z"]
    ])
    const html = TimelineHtml.render([{ title: "t", text: "", rows }], "policies")
    expect(html).toContain("policy: retry 1 in 200 ms (mcp__gh__*): MCP server gh: overloaded")
    expect(html).toContain("2 policy events")
  })
})
