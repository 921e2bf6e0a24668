/**
 * Results kept across a retried model turn. When a model stream fails mid-way, the attempt's executor is discarded
 * and the whole message is requested again; the results the discarded attempt already yielded are kept here and
 * handed to the retried message's call with the same id, or else with the same tool name and input (each result used
 * once), so a call that completed is never executed twice. See docs/architecture.md.
 */
import type { ToolResult, ToolUse } from "../../domain/Blocks.js"

/** Results yielded before a discard, kept for the retry: by id, and by tool name + input (each used once). */
export interface Salvage {
  readonly byId: Map<string, ToolResult>
  readonly byKey: Map<string, Array<{ readonly id: string; readonly result: ToolResult }>>
}

const callKey = (name: string, input: unknown): string => `${name}\u0000${JSON.stringify(input)}`

/** An empty salvage, one per run. */
export const make = (): Salvage => ({ byId: new Map(), byKey: new Map() })

/** Takes the result kept for a call (by its id, else by its tool name and input), re-addressed to the call's id. */
export const take = (salvage: Salvage, call: ToolUse): ToolResult | undefined => {
  const byId = salvage.byId.get(call.id)
  const key = callKey(call.name, call.input)
  const list = salvage.byKey.get(key) ?? []
  const found = byId !== undefined ? { id: call.id, result: byId } : list[0]
  if (found === undefined) return undefined
  salvage.byId.delete(found.id)
  salvage.byKey.set(
    key,
    list.filter((entry) => entry.id !== found.id)
  )
  return { ...found.result, tool_use_id: call.id }
}

/**
 * Keeps what a discarded attempt produced: the results its executor yielded (by id and by name + input) and the
 * results it reused from an earlier salvage without yielding them (by id only).
 */
export const keep = (
  salvage: Salvage,
  attempt: {
    readonly yielded: ReadonlyMap<string, ToolResult>
    readonly results: ReadonlyMap<string, ToolResult>
    readonly callsById: ReadonlyMap<string, ToolUse>
  }
): void => {
  for (const [id, result] of attempt.yielded) {
    const call = attempt.callsById.get(id)
    if (call === undefined) continue
    salvage.byId.set(id, result)
    const key = callKey(call.name, call.input)
    salvage.byKey.set(key, [...(salvage.byKey.get(key) ?? []), { id, result }])
  }
  for (const [id, result] of attempt.results) {
    if (!attempt.yielded.has(id)) salvage.byId.set(id, result)
  }
}
