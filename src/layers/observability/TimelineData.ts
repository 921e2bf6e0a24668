/**
 * The picture of a session, as data: one section per model turn (for `exec`, one section for the batch), one row per
 * call in request order with its state times, outcome, input, decision and result, and the model's stream when it
 * was recorded. Read from transcript lines (the messages plus the `CallLog` records). Pure: no I/O.
 */
import { contentText, type ToolResultContent } from "../../domain/Blocks.js"
import type { OutcomeKind } from "../../domain/Outcome.js"
import * as Texts from "../../domain/Texts.js"
import type { TranscriptEntry } from "../../services/Transcript.js"
import { type DecisionRecord, type PolicyRecord, policyLine } from "./CallLog.js"

/** One call. Times are epoch milliseconds; a state never reached is absent. */
export interface Row {
  readonly id: string
  readonly name: string
  readonly input: string
  readonly queued?: number | undefined
  readonly executing?: number | undefined
  readonly completed?: number | undefined
  readonly yielded?: number | undefined
  readonly kind: OutcomeKind | "pending"
  readonly result: string
  readonly decision?: DecisionRecord | undefined
  /** What tool policies did to the call (retries, rate-limit waits, an open circuit), one line each, in order. */
  readonly policy?: ReadonlyArray<string> | undefined
  /** How deep the call is nested: 0 for the run's own calls, 1 for a sub-agent's (shown under its Agent call). */
  readonly depth?: number | undefined
}

/** One turn: the model's stream (when recorded) and the calls of its message. */
export interface Section {
  readonly title: string
  readonly model?: { readonly start: number; readonly end: number | undefined } | undefined
  readonly text: string
  readonly rows: ReadonlyArray<Row>
}

const previewLength = 600
const inputLength = 300

const clip = (text: string, n: number): string => (text.length > n ? `${text.slice(0, n - 1)}…` : text)

/** How a call ended, from its result and decision (the texts are the engine's own). */
export const kindOfResult = (
  result: { readonly content: ToolResultContent; readonly is_error?: boolean | undefined } | undefined,
  decision: DecisionRecord | undefined
): Row["kind"] => {
  if (result === undefined) return "pending"
  if (result.is_error !== true) return "ok"
  const text = contentText(result.content)
  if (text.includes("Cancelled: parallel tool call")) return "cancelled"
  if (text === Texts.rejected || text === Texts.alreadyCancelled) {
    return decision?.behavior === "ask" ? "denied" : "interrupted"
  }
  if (decision !== undefined && decision.behavior !== "allow") return "denied"
  if (text.includes("PreToolUse:") && text.includes("hook error")) return "denied"
  return "error"
}

interface Block {
  readonly type: string
  readonly [key: string]: unknown
}

const blocksOf = (entry: TranscriptEntry): ReadonlyArray<Block> => {
  const content = entry.message?.content
  return Array.isArray(content) ? (content as ReadonlyArray<Block>) : []
}

/** The sections of a transcript, in order. */
export const fromEntries = (entries: ReadonlyArray<TranscriptEntry>): ReadonlyArray<Section> => {
  const states = new Map<string, Record<string, number>>()
  const decisions = new Map<string, DecisionRecord>()
  const policies = new Map<string, Array<string>>()
  const results = new Map<string, { content: ToolResultContent; is_error?: boolean }>()
  for (const entry of entries) {
    if (entry.type === "tool_state" && typeof entry.tool_use_id === "string" && typeof entry.at === "number") {
      const times = states.get(entry.tool_use_id) ?? {}
      times[String(entry.state)] ??= entry.at
      states.set(entry.tool_use_id, times)
    } else if (entry.type === "tool_policy" && typeof entry.tool_use_id === "string") {
      const lines = policies.get(entry.tool_use_id) ?? []
      lines.push(policyLine(entry as unknown as PolicyRecord))
      policies.set(entry.tool_use_id, lines)
    } else if (entry.type === "permission_decision" && typeof entry.tool_use_id === "string") {
      decisions.set(entry.tool_use_id, entry as unknown as DecisionRecord)
    } else if (entry.type === "user") {
      for (const block of blocksOf(entry)) {
        if (block.type === "tool_result" && typeof block.tool_use_id === "string") {
          results.set(block.tool_use_id, block as unknown as { content: ToolResultContent; is_error?: boolean })
        }
      }
    }
  }
  const rowOf = (b: Block): Row => {
    const id = String(b.id)
    const times = states.get(id) ?? {}
    const result = results.get(id)
    const decision = decisions.get(id)
    return {
      id,
      name: String(b.name),
      input: clip(JSON.stringify(b.input ?? {}), inputLength),
      queued: times.queued,
      executing: times.executing,
      completed: times.completed,
      yielded: times.yielded,
      kind: kindOfResult(result, decision),
      result: result === undefined ? "(no result)" : clip(contentText(result.content), previewLength),
      decision,
      ...(policies.has(id) ? { policy: policies.get(id) } : {})
    }
  }
  const callsOf = (entry: TranscriptEntry) =>
    blocksOf(entry).filter((b) => b.type === "tool_use" && typeof b.id === "string")
  // a sub-agent's calls, by the Agent call that ran it: shown as nested rows under that call
  const nested = new Map<string, Array<Block>>()
  for (const entry of entries) {
    if (entry.type !== "assistant" || typeof entry.parent_tool_use_id !== "string") continue
    nested.set(entry.parent_tool_use_id, [...(nested.get(entry.parent_tool_use_id) ?? []), ...callsOf(entry)])
  }
  const withNested = (b: Block, depth: number, seen: ReadonlySet<string>): ReadonlyArray<Row> => {
    const id = String(b.id)
    const children = seen.has(id) ? [] : (nested.get(id) ?? [])
    const inner = new Set([...seen, id])
    return [{ ...rowOf(b), depth }, ...children.flatMap((child) => withNested(child, depth + 1, inner))]
  }
  const sections: Array<Section> = []
  let model: { start: number; end: number | undefined } | undefined
  for (const entry of entries) {
    if (entry.type === "model_stream" && typeof entry.at === "number") {
      if (entry.phase === "start") model = { start: entry.at, end: undefined }
      else if (model !== undefined) model.end = entry.at
      continue
    }
    if (entry.type !== "assistant" || typeof entry.parent_tool_use_id === "string") continue
    const blocks = blocksOf(entry)
    const rows = callsOf(entry).flatMap((b) => withNested(b, 0, new Set()))
    const text = blocks
      .filter((b) => b.type === "text")
      .map((b) => String(b.text))
      .join("\n")
    sections.push({ title: `Turn ${sections.length + 1}`, model, text: clip(text, previewLength), rows })
    model = undefined
  }
  return sections
}
