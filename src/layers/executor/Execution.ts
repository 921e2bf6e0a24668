/**
 * One execution: the fibers around the state's single owner. For a stream, the input fiber checks and looks up each
 * call and sends it to the owner; a batch arrives at once. The owner fiber takes messages from its inbox (arrivals,
 * a call's exit with its tool's result, interrupt, abort, discard, input end), folds them through the pure
 * `ExecutionStep.step` (domain/ExecutionStep.ts), and carries out the commands each step returns: context
 * modifiers, events to the sink, starting calls, ending their spans and metrics, interrupting calls. Calls run in a
 * scoped FiberSet; the cap is the step's (the planner never starts more calls than it allows). See docs/executor.md.
 */
import {
  type Cause,
  Deferred,
  Effect,
  Exit,
  Fiber,
  FiberRef,
  FiberSet,
  Mailbox,
  Option,
  Ref,
  type Scope,
  Stream,
  type Tracer
} from "effect"
import type { Scheduling } from "../../domain/Admission.js"
import { makeStreamCheck } from "../../domain/CallGraph.js"
import { discoveredToolsKey } from "../../domain/DeferredTools.js"
import type { DependencyCycleError, InvalidInputError } from "../../domain/Errors.js"
import * as ExecutionStep from "../../domain/ExecutionStep.js"
import type { ExecutorEvent, PolicyNote, ToolCall } from "../../domain/ExecutorEvent.js"
import { cancelledOutcome, type Outcome } from "../../domain/Outcome.js"
import * as Texts from "../../domain/Texts.js"
import type * as Tool from "../../domain/Tool.js"
import { contextOverride, contextUnder, currentContext, type Session } from "../../services/Session.js"
import type { CancellationPolicy, Control } from "../../services/ToolExecutor.js"
import type { ToolRegistry } from "../../services/ToolRegistry.js"
import { Starter } from "../observability/CallSpans.js"
import * as Metrics from "../observability/Metrics.js"
import * as Spans from "../observability/Spans.js"
import type * as CallPipeline from "./CallPipeline.js"

/** What an execution needs from the executor. */
export interface Env {
  readonly registry: ToolRegistry["Type"]
  readonly session: Session["Type"]
  readonly pipeline: ReturnType<typeof CallPipeline.make>
  /** Whether calls get their spans (Spans.ExecutorSpans, read when the executor was built). */
  readonly spans: boolean
}

/** The settings of one execution, resolved from the executor's defaults and the call's options. */
export interface Options {
  readonly cap: number
  readonly scheduling: Scheduling
  readonly cancellation: CancellationPolicy
  /** Present when the caller holds a control handle; absent, nobody can interrupt this execution. */
  readonly control: Control | undefined
  readonly discovered: ReadonlySet<string> | undefined
  /** Finds a call's tool instead of the registry (see `ExecuteOptions.lookup`). */
  readonly lookup?: ((name: string) => Effect.Effect<Option.Option<Tool.Any>>) | undefined
}

/**
 * Where an execution's events go. A stream of every event (`execute`) or a collector of results only
 * (`runBatchCollect`): when nobody reads state and progress events, they are not built at all.
 */
export interface Sink<E> {
  /** False when only result events are wanted. */
  readonly detailed: boolean
  /** Takes events in order: the owner's, and the progress events of call fibers. */
  readonly emit: (events: ReadonlyArray<ExecutorEvent>) => Effect.Effect<void>
  /** Called once, when every result has been yielded or the input failed. */
  readonly end: (failure: Option.Option<Cause.Cause<E>>) => Effect.Effect<void>
  /** Called once on a discard: nothing more is emitted. */
  readonly discard: Effect.Effect<void>
}

/** The calls of an execution: a stream (checked as it goes), or a whole batch already checked by `checkBatch`. */
export type Input<E> =
  | { readonly _tag: "Stream"; readonly calls: Stream.Stream<ToolCall, E> }
  | { readonly _tag: "Batch"; readonly calls: ReadonlyArray<ToolCall> }

/** A sink that is a Mailbox: the execution's events as a stream. */
export const mailboxSink = <E>(mailbox: Mailbox.Mailbox<ExecutorEvent, E>): Sink<E> => ({
  detailed: true,
  emit: (events) => Effect.asVoid(mailbox.offerAll(events)),
  end: (failure) => Option.match(failure, { onNone: () => mailbox.end, onSome: (cause) => mailbox.failCause(cause) }),
  discard: Effect.zipRight(Effect.ignore(mailbox.clear), mailbox.end)
})

/** What the owner's inbox takes: the state's messages; the input's end carries how the input ended. */
type Inbound<E> =
  | Exclude<ExecutionStep.Message, { readonly _tag: "InputEnded" }>
  | { readonly _tag: "InputEnded"; readonly t: number; readonly failure: Option.Option<Cause.Cause<E>> }

type Failure<E> = E | InvalidInputError | DependencyCycleError

/**
 * What the execution lends one running call (`CallPipeline.Links`): its progress events, the execution's interrupt
 * signal, its span, and a slot for the tool's result once the tool returned, which the call's exit carries to the
 * owner. A class, so that starting a call allocates one object rather than a closure per link.
 */
class Link implements CallPipeline.Links {
  outcome: Outcome | undefined = undefined
  tracing: CallPipeline.Tracing | undefined = undefined
  readonly progress: (data: unknown) => Effect.Effect<void>
  readonly policy: ((note: PolicyNote) => Effect.Effect<void>) | undefined
  constructor(
    id: string,
    emit: Sink<unknown>["emit"] | undefined,
    now: () => number,
    readonly interrupted: Effect.Effect<void>,
    readonly context: Ref.Ref<Tool.SessionContext>
  ) {
    this.progress =
      emit === undefined
        ? noProgress
        : (data) => Effect.suspend(() => emit([{ type: "progress", tool_use_id: id, data, t_ms: now() }]))
    this.policy =
      emit === undefined
        ? undefined
        : (note) => Effect.suspend(() => emit([{ ...note, type: "policy", tool_use_id: id, t_ms: now() }]))
  }
  ran(outcome: Outcome): void {
    this.outcome = outcome
  }
}

const noProgress = (_: unknown): Effect.Effect<void> => Effect.void

/** A started call the owner has not seen end yet: its fiber (to interrupt it) and its span. */
interface Live {
  readonly fiber: Fiber.RuntimeFiber<unknown, unknown>
  readonly startedAt: number
  readonly span: Tracer.Span | undefined
}

/** What the owner acts through: the execution's parts, and the state it holds (read by `endCutShort` too). */
interface Owning<E> {
  readonly env: Env
  readonly sink: Sink<Failure<E>>
  readonly inbox: Mailbox.Mailbox<Inbound<Failure<E>>>
  readonly fibers: FiberSet.FiberSet<unknown, unknown>
  readonly opener: Spans.Opener | undefined
  readonly live: Map<number, Live>
  readonly startCall: (starter: Starter | undefined, start: ExecutionStep.Start) => void
  readonly endCall: (ended: ExecutionStep.Ended, started: Live | undefined) => void
  readonly endCutShort: (state: ExecutionStep.State) => Effect.Effect<void>
  state: ExecutionStep.State
}

/**
 * The messages taken at once, with each run of `Exited` messages as one `ExitedAll` (one step for calls that ended
 * together). Only when nobody reads state events: their order within such a step is grouped by kind.
 */
const groupExits = <E>(taken: Iterable<Inbound<E>>): Array<Inbound<E>> => {
  const grouped: Array<Inbound<E>> = []
  let exits: Array<Extract<Inbound<E>, { readonly _tag: "Exited" }>> = []
  const flush = () => {
    if (exits.length === 1) grouped.push(exits[0])
    else if (exits.length > 1) grouped.push({ _tag: "ExitedAll", exits, t: exits[exits.length - 1].t })
    exits = []
  }
  for (const message of taken) {
    if (message._tag === "Exited") {
      exits.push(message)
    } else {
      flush()
      grouped.push(message)
    }
  }
  flush()
  return grouped
}

/**
 * The owner: the only fiber that holds the state. It folds its inbox through `ExecutionStep.step` and carries
 * out each step's commands in order: modifiers, events, starts, ended calls, interrupts. One generator function for
 * every execution (`Effect.fnUntraced` at module level): an `Effect.gen` made per execution cost about 2 µs of CPU.
 */
const own: <E>(o: Owning<E>, initial: Array<Inbound<Failure<E>>>) => Effect.Effect<void> = Effect.fnUntraced(function* <
  E
>(o: Owning<E>, initial: Array<Inbound<Failure<E>>>) {
  const { sink, live } = o
  const self = yield* Effect.fiberId
  const starter = o.opener === undefined ? undefined : new Starter(o.opener, yield* Effect.context<never>())
  let failure = Option.none<Cause.Cause<Failure<E>>>()
  // the first messages are taken out of `initial` so that a long batch's arrivals are not held to the end
  let messages: Iterable<Inbound<Failure<E>>> = initial.splice(0)
  while (true) {
    for (const message of messages) {
      if (message._tag === "InputEnded") failure = message.failure
      const [next, commands] = ExecutionStep.step(o.state, message)
      o.state = next
      if (commands === ExecutionStep.noCommands) continue
      if (commands.discarded) {
        // nothing more is yielded: running calls are interrupted, queued ones never start
        yield* FiberSet.clear(o.fibers)
        yield* o.endCutShort(o.state)
        return yield* sink.discard
      }
      const { modifiers } = commands
      if (modifiers.length > 0) {
        const context = yield* currentContext(o.env.session)
        yield* Ref.update(context, (c) => modifiers.reduce((a, m) => m(a), c))
      }
      if (commands.events.length > 0) yield* sink.emit(commands.events)
      for (const start of commands.start) o.startCall(starter, start)
      for (const ended of commands.ended) {
        const index = ended.call.index
        o.endCall(ended, live.get(index))
        live.delete(index)
      }
      for (const index of commands.interrupt) {
        const call = live.get(index)
        if (call !== undefined) yield* Fiber.interruptAsFork(call.fiber, self)
      }
      if (commands.finished) return yield* sink.end(failure)
    }
    const [taken] = yield* o.inbox.takeAll
    messages = sink.detailed ? taken : groupExits(taken)
  }
})

/**
 * Starts an execution in the current scope; its events go to `sink`, which is told when it ends. With `inline`, a
 * batch's owner runs in the calling fiber, which returns once the sink was told the end (a caller that only waits
 * for the results saves a fiber and a wake per batch); a stream's owner always has its own fiber.
 */
export const run: <E>(
  env: Env,
  input: Input<E>,
  options: Options,
  sink: Sink<Failure<E>>,
  inline?: boolean
) => Effect.Effect<void, never, Scope.Scope> = Effect.fnUntraced(function* <E>(
  env: Env,
  input: Input<E>,
  options: Options,
  sink: Sink<Failure<E>>,
  inline = false
) {
  const clock = yield* Effect.clock
  const opener = env.spans ? yield* Spans.opener : undefined
  const startedAt = clock.unsafeCurrentTimeMillis()
  /** Milliseconds since the execution started: the time every message carries. */
  const now = () => clock.unsafeCurrentTimeMillis() - startedAt
  const inbox = yield* Mailbox.make<Inbound<Failure<E>>>()
  const fibers = yield* FiberSet.make<unknown, unknown>()
  // Calls start at once, in the owner's turn, rather than at the scheduler's next one: a call that finishes
  // without waiting has posted its exit before the owner reads its inbox again, which saves the owner a wake per call.
  // The runtime is taken interruptible, so that every call's fiber starts interruptible (even when the execution was
  // started under a mask) without an `Effect.interruptible` of its own.
  const fork = yield* Effect.interruptible(FiberSet.runtime(fibers)<never>())
  const send = (message: Inbound<Failure<E>>) => inbox.offer(message)
  const interrupted = options.control === undefined ? Effect.never : Deferred.await(options.control.interrupted)
  const live = new Map<number, Live>()
  const emitProgress = sink.detailed ? sink.emit : undefined
  // the calls' fibers get this fiber's FiberRefs (the runtime above), so their session context is this one
  const context = contextUnder(env.session, yield* FiberRef.get(contextOverride))

  /**
   * Starts a call: its `execute_tool` span, then its pipeline in a fiber of its own, which tells the owner its exit.
   * Traced, the fiber starts with a context of its own whose parent span is the call's span (CallSpans), so what
   * the pipeline opens nests under it with no change of context.
   */
  const startCall = (starter: Starter | undefined, start: ExecutionStep.Start) => {
    const { call, index, queuedAt } = start.call
    Metrics.callStarted(call.name, start.startedAt - queuedAt)
    const link = new Link(call.id, emitProgress, now, interrupted, context)
    const tracing = starter?.start(start.call.tool, call.name, call.id, start.startedAt - queuedAt)
    link.tracing = tracing
    const started = { call, tool: start.call.tool!, input: start.input }
    const running = Effect.onExit(env.pipeline.run(started, link), (exit) => {
      tracing?.ended(exit)
      return send({ _tag: "Exited", index, exit, ran: link.outcome, t: now() })
    })
    const fiber = fork(running, tracing === undefined ? undefined : { updateRefs: tracing.withContext })
    live.set(index, { fiber, startedAt: start.startedAt, span: tracing?.span })
  }

  /** Ends a completed call's `execute_tool` span (a call that never started gets an instant one) and metrics. */
  const endCall = ({ call, outcome }: ExecutionStep.Ended, started: Live | undefined) => {
    Metrics.callEnded(call.call.name, outcome, started === undefined ? undefined : now() - started.startedAt)
    if (opener === undefined) return
    Spans.endTool(
      started?.span ?? Spans.openTool(opener, call.tool, call.call.name, call.call.id, undefined),
      outcome,
      opener.now()
    )
  }

  /**
   * Ends the metrics and spans of calls that started and were cut short before their end was applied: by a discard,
   * or by the owner itself being interrupted (the stream's consumer went away). Once only.
   */
  let cutShortEnded = false
  const endCutShort = (state: ExecutionStep.State) =>
    Effect.sync(() => {
      if (cutShortEnded) return
      cutShortEnded = true
      const outcome = cancelledOutcome(Texts.rejected, "discard")
      for (const [index, started] of live) endCall({ call: ExecutionStep.arrivedAt(state, index), outcome }, started)
      live.clear()
    })

  /** The owner, over this execution's parts; it keeps the state in `owning` (see `own`). */
  const owner = (initial: Array<Inbound<Failure<E>>>) => {
    const owning: Owning<E> = {
      env,
      sink,
      inbox,
      fibers,
      opener,
      live,
      startCall,
      endCall,
      endCutShort,
      state: ExecutionStep.make({
        cap: options.cap,
        scheduling: options.scheduling,
        cancellation: options.cancellation,
        detailed: sink.detailed
      })
    }
    return Effect.onInterrupt(own(owning, initial), () => endCutShort(owning.state))
  }

  const discovered =
    options.discovered !== undefined ? Effect.succeed(options.discovered) : env.session.state.get(discoveredToolsKey)

  const lookup = options.lookup ?? env.registry.lookup
  const control = options.control
  if (control !== undefined) {
    yield* Effect.forkScoped(
      Deferred.await(control.interrupted).pipe(
        Effect.zipRight(Effect.suspend(() => send({ _tag: "Interrupt", all: false, t: now() }))),
        Effect.zipRight(Deferred.await(control.aborted)),
        Effect.zipRight(Effect.suspend(() => send({ _tag: "Interrupt", all: true, t: now() })))
      )
    )
    yield* Effect.forkScoped(
      Effect.zipRight(
        Deferred.await(control.discarded),
        Effect.suspend(() => send({ _tag: "Discard", t: now() }))
      )
    )
  }
  if (input._tag === "Batch") {
    // A whole batch arrives at once (it was checked as a whole before): no input fiber, one lookup per name.
    const known = yield* discovered
    const tools = new Map<string, Tool.Any | undefined>()
    const arrivals: Array<{ readonly call: ToolCall; readonly tool: Tool.Any | undefined }> = []
    for (const call of input.calls) {
      if (!tools.has(call.name)) tools.set(call.name, Option.getOrUndefined(yield* lookup(call.name)))
      arrivals.push({ call, tool: tools.get(call.name) })
    }
    // When nobody reads state events, the batch arrives in one step (the state comes to rest once, not after each
    // call: 10 steps fewer per batch of 10, about 2 kB of garbage less per call). With every event read, each call
    // arrives in a step of its own, so that its queued and executing events keep their order.
    const messages: Array<Inbound<Failure<E>>> = sink.detailed
      ? [
          ...arrivals.map(
            ({ call, tool }): Inbound<Failure<E>> => ({ _tag: "Arrive", call, tool, discovered: known, t: now() })
          ),
          { _tag: "InputEnded", t: now(), failure: Option.none() }
        ]
      : [{ _tag: "Batch", calls: arrivals, discovered: known, t: now() }]
    if (inline) return yield* owner(messages)
    yield* Effect.forkScoped(owner(messages))
  } else {
    const check = makeStreamCheck()
    const feed = Stream.runForEach(input.calls, (call) => {
      const invalid = check(call)
      if (invalid !== undefined) return Effect.fail(invalid)
      return Effect.flatMap(Effect.zip(lookup(call.name), discovered), ([tool, known]) =>
        send({ _tag: "Arrive", call, tool: Option.getOrUndefined(tool), discovered: known, t: now() })
      )
    }).pipe(
      Effect.exit,
      Effect.flatMap((exit) =>
        send({
          _tag: "InputEnded",
          t: now(),
          failure: Exit.isFailure(exit) ? Option.some(exit.cause) : Option.none()
        })
      )
    )
    yield* Effect.forkScoped(owner([]))
    yield* Effect.forkScoped(feed)
  }
})
