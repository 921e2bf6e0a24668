/**
 * The state of one execution as a pure step function: `step(state, message)` returns the next state and the
 * commands its owner must carry out (apply context modifiers, emit events, start calls, end calls' spans and
 * metrics, interrupt calls). No effects, no clock (each message carries its time), no fibers (calls are named by
 * their index), and the state passed in is never changed — the owner in `layers/executor/Execution.ts` folds its
 * inbox through `step`, and the property tests fold generated messages through it without any fiber.
 *
 * After each message the state is brought to rest: dependencies resolve, the admission planner
 * (`Admission.plan`) picks the calls that start — the only place the concurrency cap is enforced — and completed
 * calls leave in request order.
 *
 * Cost: a step copies the record and, when it changes them, the small collections of in-flight calls (running,
 * started or completed but not yet yielded). The calls that arrived and the outcomes already yielded are
 * append-only logs shared between a state and its successors; each state reads them only up to its own length, and
 * a step from an older state copies them before appending (so stepping one state twice gives the same result).
 */
import { Cause, Either, Exit } from "effect"
import { plan as admissionPlan, type Scheduling } from "./Admission.js"
import { type ToolResult, toolResult } from "./Blocks.js"
import { decode } from "./CallInput.js"
import type { ExecutorEvent, ResultEvent, ToolCall } from "./ExecutorEvent.js"
import { cancelledOutcome, defectText, errorOutcome, type Outcome } from "./Outcome.js"
import { resourcesOf } from "./Resources.js"
import * as Texts from "./Texts.js"
import * as Tool from "./Tool.js"

/**
 * Which failures cancel the other calls of the batch: `declared` — a call of a tool that cancels its siblings ran
 * and failed; `any-error` — any call ran and failed; `none` — never. A refusal never cancels anything.
 */
export type CancellationPolicy = "declared" | "none" | "any-error"

/** The fixed settings of one execution. */
export interface Settings {
  /** The most calls that run at once (at least 1). */
  readonly cap: number
  readonly scheduling: Scheduling
  readonly cancellation: CancellationPolicy
  /** False when nobody reads state events: they are not built. */
  readonly detailed: boolean
}

/** A call as it arrived; never changes. */
export interface Arrived {
  readonly index: number
  readonly call: ToolCall
  readonly tool: Tool.Any | undefined
  readonly deps: ReadonlyArray<string>
  /** When the call arrived, in milliseconds since the execution started. */
  readonly queuedAt: number
  /** Its decoded input, when it was decoded at arrival (no dependencies, no resolver). */
  readonly ready: Ready | undefined
}

/** A call whose input is decoded: what it claims (as the planner sees it) and its input. */
export interface Ready {
  readonly ready: true
  readonly index: number
  readonly input: unknown
  readonly safe: boolean
  readonly resources: ReadonlyArray<Tool.Resource>
}

/** Where a call that arrived and was not yielded yet stands. */
export type Progress =
  | { readonly _tag: "Queued"; readonly ready: Ready | undefined }
  | {
      readonly _tag: "Running"
      readonly ready: Ready
      readonly startedAt: number
      /** The result to give when the call's fiber ends interrupted on purpose (set when it is cancelled). */
      readonly cancel: Outcome | undefined
    }
  | {
      readonly _tag: "Completed"
      readonly outcome: Outcome
      /** Whether it ran as a concurrency-safe call (its modifier waits until no safe call runs). */
      readonly safe: boolean
      readonly input: unknown
    }

/** What the owner tells the state. Each message carries its time, in milliseconds since the execution started. */
export type Message =
  | {
      readonly _tag: "Arrive"
      readonly call: ToolCall
      /** The call's tool, or undefined when no tool has that name. */
      readonly tool: Tool.Any | undefined
      /** The deferred tools loaded so far (an undiscovered tool's input error says how to load it). */
      readonly discovered: ReadonlySet<string>
      readonly t: number
    }
  | {
      readonly _tag: "Exited"
      readonly index: number
      readonly exit: Exit.Exit<Outcome>
      /** The tool's result when it had returned before the fiber ended (a late cancellation must not replace it). */
      readonly ran: Outcome | undefined
      readonly t: number
    }
  /**
   * Several calls' fibers ended, in this order: one step for all of them, as if they had ended at the same moment
   * (the state comes to rest once, after the last; state events come grouped by kind).
   */
  | {
      readonly _tag: "ExitedAll"
      readonly exits: ReadonlyArray<{
        readonly index: number
        readonly exit: Exit.Exit<Outcome>
        readonly ran: Outcome | undefined
      }>
      readonly t: number
    }
  /** A user interrupt (`all: false`: only calls whose tool cancels on interrupt) or a hard abort (`all: true`). */
  | { readonly _tag: "Interrupt"; readonly all: boolean; readonly t: number }
  /** No more calls come; dependencies on calls that never came now fail. */
  | { readonly _tag: "InputEnded"; readonly t: number }
  /**
   * A whole batch: its calls arrive in order and the input ends, in one step (the state comes to rest once, not
   * after each call). Its state events are those of the calls' arrivals one by one, grouped by kind.
   */
  | {
      readonly _tag: "Batch"
      readonly calls: ReadonlyArray<{ readonly call: ToolCall; readonly tool: Tool.Any | undefined }>
      readonly discovered: ReadonlySet<string>
      readonly t: number
    }
  /** Nothing more is yielded: running calls are interrupted, queued ones never start. */
  | { readonly _tag: "Discard"; readonly t: number }

/** A call to start now. */
export interface Start {
  readonly call: Arrived
  readonly input: unknown
  readonly startedAt: number
}

/** A call that completed: its span and metrics end. */
export interface Ended {
  readonly call: Arrived
  readonly outcome: Outcome
}

/** What the owner must do after a step, in this order: modifiers, events, starts, ended calls, interrupts. */
export interface Commands {
  readonly modifiers: ReadonlyArray<Tool.ContextModifier>
  readonly events: ReadonlyArray<ExecutorEvent>
  readonly start: ReadonlyArray<Start>
  readonly ended: ReadonlyArray<Ended>
  /** The indices of running calls to interrupt. */
  readonly interrupt: ReadonlyArray<number>
  /** True once the execution is over: every call yielded after the input ended, or a discard. */
  readonly finished: boolean
  /** True when the execution was discarded (the owner interrupts every call and tells its sink). */
  readonly discarded: boolean
}

/** The whole state. Read it only through this module's functions. */
export interface State {
  readonly settings: Settings
  /** The calls that arrived (append-only, shared with later states: read only the first `arrived`). */
  readonly log: Array<Arrived>
  readonly arrived: number
  /** The index of each call id (append-only like `log`: only indices below `arrived` count). */
  readonly ids: Map<string, number>
  /** The outcomes of yielded calls, by index (append-only: read only the first `yielded`). */
  readonly results: Array<Outcome>
  /** The calls before this index have been yielded: results leave strictly in request order. */
  readonly yielded: number
  /** Calls at or after `yielded` that are not simply queued as they arrived. */
  readonly progress: Slots
  /** The running calls, as the planner sees them. */
  readonly running: ReadonlyArray<Ready>
  /** The calls before this index have all left the queue: admission scans from here. */
  readonly firstQueued: number
  /** Queued calls whose input waits for their dependencies (or a resolver). */
  readonly unready: ReadonlyArray<number>
  /** Modifiers of safe calls, applied in request order once no safe call runs. */
  readonly pendingModifiers: ReadonlyArray<{ readonly index: number; readonly modifier: Tool.ContextModifier }>
  /** The result that cancels the rest of the batch once a call's failure cascaded. */
  readonly siblingError: Outcome | undefined
  readonly interrupted: boolean
  readonly inputEnded: boolean
  readonly discarded: boolean
}

/**
 * The progress of the calls in flight, by index: an array of slots from `base` on rather than a Map, because a step
 * that changes it copies it (the previous state keeps its own) and copying a short array is a `slice`, where a Map
 * was rebuilt entry by entry (3% of the executor's CPU time in a 10-call batch profile). A copy starts at the first
 * call not yet yielded, so it holds only calls from there to the last one started or completed.
 */
export class Slots {
  static readonly empty = new Slots(0, [])
  private constructor(
    private readonly base: number,
    private readonly items: Array<Progress | undefined>
  ) {}
  /** The slot of `index` (at or after the `from` of the copy this was made as). */
  get(index: number): Progress | undefined {
    return index < this.base ? undefined : this.items[index - this.base]
  }
  /** A copy holding the slots from `from` on (`from` at or after this one's start). */
  copyFrom(from: number): Slots {
    return new Slots(from, this.items.slice(Math.max(0, from - this.base)))
  }
  /** Only on a copy the caller owns. */
  set(index: number, progress: Progress): void {
    this.items[index - this.base] = progress
  }
  /** Only on a copy the caller owns. */
  delete(index: number): void {
    this.items[index - this.base] = undefined
  }
}

/** A fresh state. */
export const make = (settings: Settings): State => ({
  settings,
  log: [],
  arrived: 0,
  ids: new Map(),
  results: [],
  yielded: 0,
  progress: Slots.empty,
  running: [],
  firstQueued: 0,
  unready: [],
  pendingModifiers: [],
  siblingError: undefined,
  interrupted: false,
  inputEnded: false,
  discarded: false
})

/** True once the execution is over: every call that came was yielded and no more can come, or it was discarded. */
export const isFinished = (state: State): boolean =>
  state.discarded || (state.inputEnded && state.yielded === state.arrived)

/** Where a call stands: `undefined` once yielded (or for an index that never arrived). */
export const progressOf = (state: State, index: number): Progress | undefined => {
  if (index < state.yielded || index >= state.arrived) return undefined
  return state.progress.get(index) ?? { _tag: "Queued", ready: state.log[index].ready }
}

/** A call's outcome: once completed, and after it was yielded. */
export const outcomeOf = (state: State, index: number): Outcome | undefined => {
  if (index < state.yielded) return state.results[index]
  const progress = state.progress.get(index)
  return progress?._tag === "Completed" ? progress.outcome : undefined
}

/** The call that arrived at `index`. */
export const arrivedAt = (state: State, index: number): Arrived => state.log[index]

/** The commands of a step that changed nothing the owner must act on (compare by reference). */
export const noCommands: Commands = {
  modifiers: [],
  events: [],
  start: [],
  ended: [],
  interrupt: [],
  finished: false,
  discarded: false
}

/**
 * One step: the next state and the commands for the owner. `state` is left as it was.
 */
export const step = (state: State, message: Message): readonly [State, Commands] => {
  if (state.discarded) return [state, { ...noCommands, finished: true, discarded: true }]
  const draft = new Draft(state, message.t)
  switch (message._tag) {
    case "Arrive":
      draft.arrive(message.call, message.tool, message.discovered)
      break
    case "Exited":
      draft.exited(message.index, message.exit, message.ran)
      break
    case "ExitedAll":
      for (const { index, exit, ran } of message.exits) draft.exited(index, exit, ran)
      break
    case "Interrupt":
      draft.interrupt(message.all)
      break
    case "InputEnded":
      draft.inputEnded = true
      break
    case "Batch":
      for (const { call, tool } of message.calls) draft.arrive(call, tool, message.discovered)
      draft.inputEnded = true
      break
    case "Discard":
      return draft.discard()
  }
  draft.rest()
  return draft.finish()
}

const noDependencies: ReadonlyArray<string> = []

/**
 * The state being built by one step: fields are copied from the previous state, collections are copied the first
 * time the step changes them (the previous state keeps its own), and the commands are gathered as it goes.
 */
class Draft {
  readonly settings: Settings
  log: Array<Arrived>
  arrived: number
  ids: Map<string, number>
  results: Array<Outcome>
  yielded: number
  progress: Slots
  running: ReadonlyArray<Ready>
  firstQueued: number
  unready: ReadonlyArray<number>
  pendingModifiers: State["pendingModifiers"]
  siblingError: Outcome | undefined
  interrupted: boolean
  inputEnded: boolean
  private ownProgress: Slots | undefined = undefined
  private modifiers: Array<Tool.ContextModifier> | undefined = undefined
  private events: Array<ExecutorEvent> | undefined = undefined
  private started: Array<Start> | undefined = undefined
  private ended: Array<Ended> | undefined = undefined
  private toInterrupt: Array<number> | undefined = undefined

  constructor(
    readonly previous: State,
    readonly t: number
  ) {
    this.settings = previous.settings
    this.log = previous.log
    this.arrived = previous.arrived
    this.ids = previous.ids
    this.results = previous.results
    this.yielded = previous.yielded
    this.progress = previous.progress
    this.running = previous.running
    this.firstQueued = previous.firstQueued
    this.unready = previous.unready
    this.pendingModifiers = previous.pendingModifiers
    this.siblingError = previous.siblingError
    this.interrupted = previous.interrupted
    this.inputEnded = previous.inputEnded
  }

  private writableProgress(): Slots {
    if (this.ownProgress === undefined) {
      this.ownProgress = this.progress.copyFrom(this.yielded)
      this.progress = this.ownProgress
    }
    return this.ownProgress
  }

  private setProgress(index: number, progress: Progress): void {
    this.writableProgress().set(index, progress)
  }

  private progressAt(index: number): Progress {
    return this.progress.get(index) ?? { _tag: "Queued", ready: this.log[index].ready }
  }

  private emit(event: ExecutorEvent): void {
    if (this.events === undefined) this.events = []
    this.events.push(event)
  }

  private emitState(
    call: ToolCall,
    to: "queued" | "executing" | "completed" | "yielded",
    version?: string | undefined
  ): void {
    if (!this.settings.detailed) return
    this.emit(
      version === undefined
        ? { type: "state", tool_use_id: call.id, state: to, t_ms: this.t }
        : { type: "state", tool_use_id: call.id, state: to, t_ms: this.t, version }
    )
  }

  private applyModifier(modifier: Tool.ContextModifier): void {
    if (this.modifiers === undefined) this.modifiers = []
    this.modifiers.push(modifier)
  }

  /** A call enters: queued, or completed at once (unknown tool, bad input, after an interrupt or a sibling's error). */
  arrive(call: ToolCall, tool: Tool.Any | undefined, discovered: ReadonlySet<string>): void {
    if (this.log.length !== this.arrived) {
      // this state was stepped before: the shared logs hold another future, copy ours out of them
      this.log = this.log.slice(0, this.arrived)
      this.ids = new Map(this.log.map((a) => [a.call.id, a.index]))
    }
    const index = this.arrived
    const deps = call.depends_on ?? noDependencies
    const queuedAt = this.t
    let immediate: Outcome | undefined
    let ready: Ready | undefined
    if (tool === undefined) immediate = errorOutcome(Texts.noSuchTool(call.name))
    else if (this.interrupted) immediate = cancelledOutcome(Texts.alreadyCancelled, "user_interrupt")
    else if (this.siblingError !== undefined) immediate = this.siblingError
    else if (deps.length === 0 && call.resolve === undefined) {
      const decoded = decodeInput(index, tool, call.input, Tool.isDeferred(tool) && !discovered.has(tool.name))
      if (Either.isLeft(decoded)) immediate = decoded.left
      else ready = decoded.right
    }
    const arrived: Arrived = { index, call, tool, deps, queuedAt, ready }
    this.log.push(arrived)
    this.ids.set(call.id, index)
    this.arrived = index + 1
    this.emitState(call, "queued")
    if (immediate !== undefined) this.complete(index, immediate)
    else if (ready === undefined) this.unready = [...this.unready, index]
  }

  /** A running call's fiber ended. A result the tool returned stands even if a cancellation landed afterwards. */
  exited(index: number, exit: Exit.Exit<Outcome>, ran: Outcome | undefined): void {
    const progress = this.progress.get(index)
    if (progress?._tag !== "Running") return
    const outcome: Outcome = Exit.isSuccess(exit)
      ? exit.value
      : (ran ??
        progress.cancel ??
        (Cause.isInterruptedOnly(exit.cause) ? errorOutcome(Texts.rejected) : errorOutcome(defectText(exit.cause))))
    this.complete(index, outcome)
  }

  /** A user interrupt cancels the calls whose tool cancels on interrupt; an abort cancels every call. */
  interrupt(all: boolean): void {
    this.interrupted = true
    const cause = all ? "abort" : "user_interrupt"
    this.cancelAll(
      cancelledOutcome(Texts.alreadyCancelled, cause),
      cancelledOutcome(Texts.rejected, cause),
      undefined,
      (ready) => all || this.log[ready.index].tool?.interruptBehavior === "cancel"
    )
  }

  /** Every running call is interrupted; nothing is emitted any more. */
  discard(): readonly [State, Commands] {
    const interrupt = this.running.map((r) => r.index)
    const state: State = { ...this.snapshot(), discarded: true }
    return [state, { ...noCommands, interrupt, finished: true, discarded: true }]
  }

  /** Completes a call (first completion wins), keeps its modifier, and cascades an execution failure. */
  private complete(index: number, outcome: Outcome): void {
    const progress = this.progressAt(index)
    if (progress._tag === "Completed") return
    const arrived = this.log[index]
    let safe = true
    let input: unknown = progress.ready?.input
    if (progress._tag === "Running") {
      this.running = this.running.filter((r) => r.index !== index)
      safe = progress.ready.safe
      input = progress.ready.input
    }
    this.setProgress(index, { _tag: "Completed", outcome, safe, input })
    if (this.ended === undefined) this.ended = []
    this.ended.push({ call: arrived, outcome })
    this.emitState(arrived.call, "completed")
    if (outcome.modifier !== undefined) {
      if (safe) this.pendingModifiers = [...this.pendingModifiers, { index, modifier: outcome.modifier }]
      else this.applyModifier(outcome.modifier)
    }
    if (this.pendingModifiers.length > 0 && !this.running.some((r) => r.safe)) {
      const pending = [...this.pendingModifiers].sort((a, b) => a.index - b.index)
      this.pendingModifiers = []
      for (const p of pending) this.applyModifier(p.modifier)
    }
    if (
      outcome.executionFailed &&
      (progress._tag !== "Running" || progress.cancel === undefined) &&
      this.siblingError === undefined &&
      arrived.tool !== undefined &&
      this.cascades(arrived.tool)
    ) {
      const summary = summaryOf(arrived.tool, input)
      this.siblingError = cancelledOutcome(Texts.siblingErrored(arrived.tool.name, summary), "sibling_error")
      this.cancelAll(this.siblingError, this.siblingError, index, () => true)
    }
  }

  private cascades(tool: Tool.Any): boolean {
    const policy = this.settings.cancellation
    return policy === "any-error" || (policy === "declared" && tool.cancelsSiblingsOnError)
  }

  /**
   * Cancels the calls that have not completed: queued ones complete at once with `queuedOutcome`; running ones
   * chosen by `which` get `runningOutcome` and are interrupted (they complete when their fiber's exit comes).
   */
  private cancelAll(
    queuedOutcome: Outcome,
    runningOutcome: Outcome,
    except: number | undefined,
    which: (ready: Ready) => boolean
  ): void {
    for (let i = this.yielded; i < this.arrived; i++) {
      if (i === except) continue
      const progress = this.progressAt(i)
      if (progress._tag === "Queued") this.complete(i, queuedOutcome)
      else if (progress._tag === "Running" && progress.cancel === undefined && which(progress.ready)) {
        this.setProgress(i, { ...progress, cancel: runningOutcome })
        if (this.toInterrupt === undefined) this.toInterrupt = []
        this.toInterrupt.push(i)
      }
    }
  }

  /** Brings the state to rest: dependencies, admission, then results in request order. */
  rest(): void {
    while (this.resolveDependencies()) {
      // a failed dependency can fail its own dependants: repeat until nothing changes
    }
    this.admit()
    this.release()
  }

  private dependencies(arrived: Arrived): "Wait" | "Ready" | { readonly failed: string } {
    for (const dep of arrived.deps) {
      const upstream = this.ids.get(dep)
      if (upstream === undefined || upstream >= this.arrived) return this.inputEnded ? { failed: dep } : "Wait"
      const outcome = this.outcomeAt(upstream)
      if (outcome === undefined) return "Wait"
      if (outcome.isError) return { failed: dep }
    }
    return "Ready"
  }

  private outcomeAt(index: number): Outcome | undefined {
    if (index < this.yielded) return this.results[index]
    const progress = this.progress.get(index)
    return progress?._tag === "Completed" ? progress.outcome : undefined
  }

  private upstreamResults(arrived: Arrived): ReadonlyMap<string, ToolResult> {
    const results = new Map<string, ToolResult>()
    for (const dep of arrived.deps) {
      const index = this.ids.get(dep)
      const outcome = index === undefined ? undefined : this.outcomeAt(index)
      if (outcome !== undefined) results.set(dep, toolResult(dep, outcome.content, outcome.isError))
    }
    return results
  }

  private resolveInput(arrived: Arrived): Either.Either<unknown, Outcome> {
    if (arrived.call.resolve === undefined) return Either.right(arrived.call.input)
    try {
      return Either.right(arrived.call.resolve(this.upstreamResults(arrived)))
    } catch (e) {
      return Either.left(errorOutcome(`Dependency resolver failed: ${e instanceof Error ? e.message : String(e)}`))
    }
  }

  /** Decodes the input of queued calls whose dependencies settled; true when any call changed. */
  private resolveDependencies(): boolean {
    if (this.unready.length === 0) return false
    const waiting: Array<number> = []
    let changed = false
    for (const index of this.unready) {
      const progress = this.progressAt(index)
      if (progress._tag !== "Queued") continue
      const arrived = this.log[index]
      const deps = this.dependencies(arrived)
      if (deps === "Wait") {
        waiting.push(index)
        continue
      }
      changed = true
      if (deps !== "Ready") {
        this.complete(index, errorOutcome(Texts.dependencyFailed(deps.failed)))
        continue
      }
      const decoded = Either.flatMap(this.resolveInput(arrived), (raw) => decodeInput(index, arrived.tool!, raw, false))
      if (Either.isLeft(decoded)) this.complete(index, decoded.left)
      else this.setProgress(index, { _tag: "Queued", ready: decoded.right })
    }
    this.unready = waiting
    return changed
  }

  /**
   * What the planner sees of a call that is still queued (its claim, or `notReady` while it waits for dependencies);
   * undefined when it is not queued. Unlike `progressAt`, it builds nothing for a call queued as it arrived.
   */
  private candidateAt(index: number): Ready | typeof notReady | undefined {
    const progress = this.progress.get(index)
    if (progress === undefined) return this.log[index].ready ?? notReady
    return progress._tag === "Queued" ? (progress.ready ?? notReady) : undefined
  }

  /** Starts the queued calls the planner picks. */
  private admit(): void {
    while (this.firstQueued < this.arrived && this.candidateAt(this.firstQueued) === undefined) this.firstQueued++
    if (this.firstQueued === this.arrived || this.running.length >= this.settings.cap) return
    const picked = plan(this)
    if (picked.length === 0) return
    this.running = [...this.running, ...picked]
    if (this.started === undefined) this.started = []
    for (const ready of picked) {
      this.setProgress(ready.index, { _tag: "Running", ready, startedAt: this.t, cancel: undefined })
      const arrived = this.log[ready.index]
      this.emitState(arrived.call, "executing", arrived.tool?.version)
      this.started.push({ call: arrived, input: ready.input, startedAt: this.t })
    }
  }

  *queued(): Generator<Ready | { readonly ready: false }> {
    for (let i = this.firstQueued; i < this.arrived; i++) {
      const candidate = this.candidateAt(i)
      if (candidate !== undefined) yield candidate
    }
  }

  /** Yields the completed calls in request order, up to the first one still pending. */
  private release(): void {
    if (this.results.length !== this.yielded) this.results = this.results.slice(0, this.yielded)
    while (this.yielded < this.arrived) {
      const progress = this.progress.get(this.yielded)
      if (progress?._tag !== "Completed") break
      const arrived = this.log[this.yielded]
      this.emit(resultEvent(arrived.call.id, progress.outcome, this.t))
      this.emitState(arrived.call, "yielded")
      this.results.push(progress.outcome)
      this.writableProgress().delete(this.yielded)
      this.yielded++
    }
  }

  private snapshot(): State {
    return {
      settings: this.settings,
      log: this.log,
      arrived: this.arrived,
      ids: this.ids,
      results: this.results,
      yielded: this.yielded,
      progress: this.progress,
      running: this.running,
      firstQueued: this.firstQueued,
      unready: this.unready,
      pendingModifiers: this.pendingModifiers,
      siblingError: this.siblingError,
      interrupted: this.interrupted,
      inputEnded: this.inputEnded,
      discarded: false
    }
  }

  finish(): readonly [State, Commands] {
    const state = this.snapshot()
    const finished = isFinished(state)
    if (
      this.modifiers === undefined &&
      this.events === undefined &&
      this.started === undefined &&
      this.ended === undefined &&
      this.toInterrupt === undefined &&
      !finished
    ) {
      return [state, noCommands]
    }
    return [
      state,
      {
        modifiers: this.modifiers ?? noCommands.modifiers,
        events: this.events ?? noCommands.events,
        start: this.started ?? noCommands.start,
        ended: this.ended ?? noCommands.ended,
        interrupt: this.toInterrupt ?? noCommands.interrupt,
        finished,
        discarded: false
      }
    ]
  }
}

const notReady = { ready: false } as const

const plan = (draft: Draft): ReadonlyArray<Ready> =>
  admissionPlan({
    queued: draft.queued(),
    running: draft.running,
    cap: draft.settings.cap,
    scheduling: draft.settings.scheduling
  }) as ReadonlyArray<Ready>

/** Decodes a call's input and evaluates its safety and resources; the error result when decoding fails. */
const decodeInput = (
  index: number,
  tool: Tool.Any,
  raw: unknown,
  undiscovered: boolean
): Either.Either<Ready, Outcome> =>
  Either.map(decode(tool, raw, undiscovered), (input) => ({
    ready: true,
    index,
    input,
    safe: Tool.safely(tool.isConcurrencySafe, input),
    resources: resourcesOf(tool, input)
  }))

const summaryOf = (tool: Tool.Any, input: unknown): string => {
  try {
    return tool.summarize(input)
  } catch {
    return ""
  }
}

/** The result event of a completed call. */
const resultEvent = (id: string, outcome: Outcome, t_ms: number): ResultEvent => {
  const event = {
    type: "tool_result",
    tool_use_id: id,
    content: outcome.content,
    is_error: outcome.isError,
    t_ms
  } as const
  if (outcome.continue && outcome.stopReason === undefined) return event
  return {
    ...event,
    ...(outcome.continue ? {} : { continue: false }),
    ...(outcome.stopReason !== undefined ? { stopReason: outcome.stopReason } : {})
  }
}
