/**
 * Checks on the calls given to the executor, before any of them runs: each has an id and a tool name, ids are
 * unique, dependencies name known calls, and the dependency graph has no cycle.
 */
import { DependencyCycleError, InvalidInputError } from "./Errors.js"
import type { ToolCall } from "./ExecutorEvent.js"

/** The error for the call at `position` (0-based) when it lacks an id or a name or repeats an id, else undefined. */
export const checkCall = (
  call: ToolCall,
  position: number,
  seen: { readonly has: (id: string) => boolean }
): InvalidInputError | undefined => {
  if (typeof call.id !== "string" || call.id === "") {
    return new InvalidInputError({ message: `Call ${position + 1} has no id` })
  }
  if (typeof call.name !== "string" || call.name === "") {
    return new InvalidInputError({ message: `Call ${position + 1} (${call.id}) has no tool name` })
  }
  if (seen.has(call.id)) {
    return new InvalidInputError({ message: `Call ${position + 1} repeats the tool_use id ${call.id}` })
  }
  return undefined
}

/**
 * Finds a cycle in a dependency graph (id → the ids it depends on), or undefined. Ids outside the graph are
 * ignored. With `from`, only the cycles reachable from those ids are looked for.
 */
export const findCycle = (
  graph: ReadonlyMap<string, ReadonlyArray<string>>,
  from: Iterable<string> = graph.keys()
): ReadonlyArray<string> | undefined => {
  const state = new Map<string, "visiting" | "done">()
  const stack: Array<string> = []
  const visit = (id: string): ReadonlyArray<string> | undefined => {
    const seen = state.get(id)
    if (seen === "done") return undefined
    if (seen === "visiting") return [...stack.slice(stack.indexOf(id)), id]
    state.set(id, "visiting")
    stack.push(id)
    for (const dep of graph.get(id) ?? []) {
      if (!graph.has(dep)) continue
      const found = visit(dep)
      if (found !== undefined) return found
    }
    stack.pop()
    state.set(id, "done")
    return undefined
  }
  for (const id of from) {
    const found = visit(id)
    if (found !== undefined) return found
  }
  return undefined
}

/** Checks a whole batch: every call well-formed and unique, every dependency known, no cycle. */
export const checkBatch = (calls: ReadonlyArray<ToolCall>): InvalidInputError | DependencyCycleError | undefined => {
  const ids = new Set<string>()
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i]
    const error = checkCall(call, i, ids)
    if (error !== undefined) return error
    ids.add(call.id)
  }
  let edges = 0
  for (const call of calls) {
    for (const dep of call.depends_on ?? []) {
      if (!ids.has(dep)) return new InvalidInputError({ message: `Call ${call.id} depends on unknown call ${dep}` })
      edges++
    }
  }
  // a batch without dependencies has no cycle: skip building the graph
  if (edges === 0) return undefined
  const cycle = findCycle(new Map(calls.map((c) => [c.id, c.depends_on ?? []])))
  return cycle === undefined ? undefined : new DependencyCycleError({ cycle })
}

/**
 * The checks of a streamed input, one call at a time: the same per-call checks as a batch, and a cycle check on
 * each call that declares dependencies (a dependency may still arrive later; one that never does fails its
 * dependant when the input ends). Owned by the fiber that reads the input.
 */
export const makeStreamCheck = () => {
  const graph = new Map<string, ReadonlyArray<string>>()
  return (call: ToolCall): InvalidInputError | DependencyCycleError | undefined => {
    const error = checkCall(call, graph.size, graph)
    if (error !== undefined) return error
    const deps = call.depends_on ?? []
    graph.set(call.id, deps)
    if (deps.length === 0) return undefined
    const cycle = findCycle(graph, [call.id])
    return cycle === undefined ? undefined : new DependencyCycleError({ cycle })
  }
}
