/**
 * The state of one execution and its transitions. It has a single owner — the execution's loop fiber (see
 * `Execution.ts`) — which applies one transition per message (arrival, a call's exit, interrupt,
 * abort, input end) and then `settle`s: dependencies, admission by the pure planner, results in request order.
 * Transitions only change this record and list what the owner must do next (`Commands`): no effects run here.
 */
import { Cause, Either, Exit, type Fiber, type Tracer } from "effect"
import { plan, type Scheduling } from "../../domain/Admission.js"
import { type ToolResult, toolResult } from "../../domain/Blocks.js"
import type { CallState, ExecutorEvent, ToolCall } from "../../domain/ExecutorEvent.js"
import { cancelledOutcome, defectText, errorOutcome, type Outcome } from "../../domain/Outcome.js"
import { resourcesOf } from "../../domain/Resources.js"
import * as Texts from "../../domain/Texts.js"
import * as Tool from "../../domain/Tool.js"
import type { CancellationPolicy } from "../../services/ToolExecutor.js"
import { decode } from "./CallInput.js"
import { release } from "./OrderedYield.js"

/** One call in the execution. Written only by the owner. */
export interface Entry {
  readonly index: number
  readonly call: ToolCall
  readonly tool: Tool.Any | undefined
  readonly deps: ReadonlyArray<string>
  /** When the call arrived, in milliseconds since the execution started. */
  readonly queuedAt: number
  /** When the call started executing, in milliseconds since the execution started. */
  startedAt: number | undefined
  /** True once the input is decoded: at arrival, or when the dependencies resolve. */
  ready: boolean
  input: unknown
  safe: boolean
  resources: ReadonlyArray<Tool.Resource>
  status: CallState
  fiber: Fiber.RuntimeFiber<unknown, unknown> | undefined
  /** The call's `execute_tool` span, from its start to its completion (see docs/observability.md). */
  span: Tracer.Span | undefined
  /** The result to give when the call's fiber is interrupted on purpose. */
  cancel: Outcome | undefined
  outcome: Outcome | undefined
}

/** What the owner must do after a transition, in this order: apply modifiers, start, interrupt, emit. */
export interface Commands {
  readonly modifiers: Array<Tool.ContextModifier>
  readonly start: Array<Entry>
  readonly interrupt: Array<Fiber.RuntimeFiber<unknown, unknown>>
  readonly events: Array<ExecutorEvent>
  /** The entries completed since the last commands were taken (their spans end). */
  readonly completed: Array<Entry>
}

/** The fixed settings of one execution. */
export interface Settings {
  readonly cap: number
  readonly scheduling: Scheduling
  readonly cancellation: CancellationPolicy
  /** Milliseconds since the execution started. */
  readonly now: () => number
  /** False when nobody reads state events: they are not built. */
  readonly detailed: boolean
}

/** The whole state. */
export interface State {
  readonly settings: Settings
  readonly entries: Array<Entry>
  readonly byId: Map<string, Entry>
  readonly running: Set<Entry>
  /** How many running calls are concurrency-safe (their modifiers wait until none runs). */
  runningSafe: number
  /** Entries before this index have all left the queue: admission scans from here. */
  firstQueued: number
  /** Queued entries whose input waits for dependencies (or a resolver). */
  unready: Array<Entry>
  /** Modifiers of safe calls, applied in request order once no safe call runs. */
  pendingModifiers: Array<{ readonly index: number; readonly modifier: Tool.ContextModifier }>
  /** The next entry to yield: results leave strictly in request order. */
  nextToYield: number
  siblingError: Outcome | undefined
  interrupted: boolean
  inputEnded: boolean
  commands: Commands
}

/** A fresh state. */
export const make = (settings: Settings): State => ({
  settings,
  entries: [],
  byId: new Map(),
  running: new Set(),
  runningSafe: 0,
  firstQueued: 0,
  unready: [],
  pendingModifiers: [],
  nextToYield: 0,
  siblingError: undefined,
  interrupted: false,
  inputEnded: false,
  commands: emptyCommands()
})

const emptyCommands = (): Commands => ({ modifiers: [], start: [], interrupt: [], events: [], completed: [] })

/** Hands the owner the commands gathered since the last call. */
export const takeCommands = (state: State): Commands => {
  const commands = state.commands
  state.commands = emptyCommands()
  return commands
}

const emitState = (state: State, entry: Entry, to: CallState): void => {
  if (state.settings.detailed) {
    state.commands.events.push({ type: "state", tool_use_id: entry.call.id, state: to, t_ms: state.settings.now() })
  }
}

/** Decodes an entry's input and evaluates its safety and resources; the error result when decoding fails. */
const prepare = (entry: Entry, raw: unknown, undiscovered: boolean): Outcome | undefined =>
  Either.match(decode(entry.tool!, raw, undiscovered), {
    onLeft: (outcome) => outcome,
    onRight: (input) => {
      entry.input = input
      entry.safe = Tool.safely(entry.tool!.isConcurrencySafe, input)
      entry.resources = resourcesOf(entry.tool!, input)
      entry.ready = true
      return undefined
    }
  })

const noDependencies: ReadonlyArray<string> = []
const noResources: ReadonlyArray<Tool.Resource> = []

/** A call enters: queued, or completed at once (unknown tool, bad input, after an interrupt or a sibling's error). */
export const arrive = (
  state: State,
  call: ToolCall,
  tool: Tool.Any | undefined,
  discovered: ReadonlySet<string>
): void => {
  const entry: Entry = {
    index: state.entries.length,
    call,
    tool,
    deps: call.depends_on ?? noDependencies,
    queuedAt: state.settings.now(),
    startedAt: undefined,
    ready: false,
    input: undefined,
    safe: true,
    resources: noResources,
    status: "queued",
    fiber: undefined,
    span: undefined,
    cancel: undefined,
    outcome: undefined
  }
  state.entries.push(entry)
  state.byId.set(call.id, entry)
  emitState(state, entry, "queued")
  const immediate: Outcome | undefined =
    tool === undefined
      ? errorOutcome(Texts.noSuchTool(call.name))
      : state.interrupted
        ? cancelledOutcome(Texts.alreadyCancelled, "user_interrupt")
        : state.siblingError !== undefined
          ? state.siblingError
          : entry.deps.length === 0 && call.resolve === undefined
            ? prepare(entry, call.input, Tool.isDeferred(tool) && !discovered.has(tool.name))
            : undefined
  if (immediate !== undefined) complete(state, entry, immediate)
  else if (!entry.ready) state.unready.push(entry)
}

/**
 * A running call's fiber ended. `ran` is the tool's result when the tool had returned before the fiber ended: it
 * stands even if a cancellation landed afterwards.
 */
export const exited = (state: State, entry: Entry, exit: Exit.Exit<Outcome>, ran?: Outcome): void => {
  const outcome: Outcome = Exit.isSuccess(exit)
    ? exit.value
    : (ran ??
      entry.cancel ??
      (Cause.isInterruptedOnly(exit.cause) ? errorOutcome(Texts.rejected) : errorOutcome(defectText(exit.cause))))
  complete(state, entry, outcome)
}

/** A user interrupt (`all: false`: only calls whose tool cancels on interrupt) or a hard abort (`all: true`). */
export const interrupt = (state: State, all: boolean): void => {
  state.interrupted = true
  const cause = all ? "abort" : "user_interrupt"
  cancelAll(
    state,
    cancelledOutcome(Texts.alreadyCancelled, cause),
    cancelledOutcome(Texts.rejected, cause),
    undefined,
    (e) => (all ? true : e.tool?.interruptBehavior === "cancel")
  )
}

/** The input ended; dependencies on calls that never came now fail. */
export const inputEnded = (state: State): void => {
  state.inputEnded = true
}

/** True once every call that came has been yielded and no more can come. */
export const isFinished = (state: State): boolean => state.inputEnded && state.nextToYield === state.entries.length

/** Completes an entry (first completion wins), keeps its modifier, and cascades an execution failure. */
const complete = (state: State, entry: Entry, outcome: Outcome): void => {
  if (entry.status === "completed" || entry.status === "yielded") return
  if (entry.status === "executing") {
    state.running.delete(entry)
    if (entry.safe) state.runningSafe--
  }
  entry.status = "completed"
  entry.outcome = outcome
  // the fiber is not needed once the call completed; holding it would keep every finished fiber of a long batch alive
  entry.fiber = undefined
  state.commands.completed.push(entry)
  emitState(state, entry, "completed")
  if (outcome.modifier !== undefined) {
    if (entry.safe) state.pendingModifiers.push({ index: entry.index, modifier: outcome.modifier })
    else state.commands.modifiers.push(outcome.modifier)
  }
  if (state.runningSafe === 0 && state.pendingModifiers.length > 0) {
    const ready = state.pendingModifiers.splice(0).sort((a, b) => a.index - b.index)
    state.commands.modifiers.push(...ready.map((m) => m.modifier))
  }
  if (
    outcome.executionFailed &&
    entry.cancel === undefined &&
    state.siblingError === undefined &&
    entry.tool !== undefined &&
    cascades(state, entry)
  ) {
    state.siblingError = cancelledOutcome(Texts.siblingErrored(entry.tool.name, summaryOf(entry)), "sibling_error")
    cancelAll(state, state.siblingError, state.siblingError, entry, () => true)
  }
}

const cascades = (state: State, entry: Entry): boolean =>
  state.settings.cancellation === "any-error" ||
  (state.settings.cancellation === "declared" && entry.tool!.cancelsSiblingsOnError)

const summaryOf = (entry: Entry): string => {
  try {
    return entry.tool!.summarize(entry.input)
  } catch {
    return ""
  }
}

/**
 * Cancels the calls that have not completed: queued ones complete at once with `queuedOutcome`; running ones
 * chosen by `which` get `runningOutcome` and are interrupted (they complete when their fiber exits).
 */
const cancelAll = (
  state: State,
  queuedOutcome: Outcome,
  runningOutcome: Outcome,
  except: Entry | undefined,
  which: (entry: Entry) => boolean
): void => {
  for (let i = state.nextToYield; i < state.entries.length; i++) {
    const entry = state.entries[i]
    if (entry === except) continue
    if (entry.status === "queued") complete(state, entry, queuedOutcome)
    else if (entry.status === "executing" && which(entry) && entry.cancel === undefined) {
      entry.cancel = runningOutcome
      if (entry.fiber !== undefined) state.commands.interrupt.push(entry.fiber)
    }
  }
}

type Dependencies = "Wait" | "Ready" | { readonly failed: string }

const dependencies = (state: State, entry: Entry): Dependencies => {
  for (const dep of entry.deps) {
    const upstream = state.byId.get(dep)
    if (upstream === undefined) return state.inputEnded ? { failed: dep } : "Wait"
    if (upstream.outcome === undefined) return "Wait"
    if (upstream.outcome.isError) return { failed: dep }
  }
  return "Ready"
}

const upstreamResults = (state: State, entry: Entry): ReadonlyMap<string, ToolResult> =>
  new Map(
    entry.deps.flatMap((dep) => {
      const outcome = state.byId.get(dep)?.outcome
      return outcome === undefined ? [] : [[dep, toolResult(dep, outcome.content, outcome.isError)] as const]
    })
  )

const resolveInput = (state: State, entry: Entry): Either.Either<unknown, Outcome> => {
  if (entry.call.resolve === undefined) return Either.right(entry.call.input)
  try {
    return Either.right(entry.call.resolve(upstreamResults(state, entry)))
  } catch (e) {
    return Either.left(errorOutcome(`Dependency resolver failed: ${e instanceof Error ? e.message : String(e)}`))
  }
}

/** Prepares the queued entries whose dependencies settled; true when any entry changed. */
const settleDependencies = (state: State): boolean => {
  if (state.unready.length === 0) return false
  const waiting: Array<Entry> = []
  let changed = false
  for (const entry of state.unready) {
    if (entry.status !== "queued") continue
    const deps = dependencies(state, entry)
    if (deps === "Wait") {
      waiting.push(entry)
      continue
    }
    changed = true
    if (deps !== "Ready") {
      complete(state, entry, errorOutcome(Texts.dependencyFailed(deps.failed)))
      continue
    }
    const failed = Either.match(resolveInput(state, entry), {
      onLeft: (outcome) => outcome,
      onRight: (raw) => prepare(entry, raw, false)
    })
    if (failed !== undefined) complete(state, entry, failed)
  }
  state.unready = waiting
  return changed
}

function* queuedFrom(state: State): Generator<Entry> {
  const entries = state.entries
  for (let i = state.firstQueued; i < entries.length; i++) {
    if (entries[i].status === "queued") yield entries[i]
  }
}

/** Brings the state to rest after transitions: dependencies, admission, then results in request order. */
export const settle = (state: State): void => {
  while (settleDependencies(state)) {
    // a failed dependency can fail its own dependants: repeat until nothing changes
  }
  const entries = state.entries
  while (state.firstQueued < entries.length && entries[state.firstQueued].status !== "queued") state.firstQueued++
  const toStart = plan({
    queued: queuedFrom(state),
    running: [...state.running],
    cap: state.settings.cap,
    scheduling: state.settings.scheduling
  })
  for (const entry of toStart) {
    entry.status = "executing"
    state.running.add(entry)
    if (entry.safe) state.runningSafe++
    emitState(state, entry, "executing")
    state.commands.start.push(entry)
  }
  state.nextToYield = release(
    entries,
    state.nextToYield,
    state.settings.now(),
    state.commands.events,
    state.settings.detailed
  )
}
