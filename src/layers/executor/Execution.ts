/**
 * One execution: the fibers around the state's single owner. For a stream, the input fiber checks and looks up each
 * call and sends it to the owner; a batch arrives at once. The owner fiber takes messages from its inbox (arrivals,
 * a call's exit with its tool's result, interrupt, abort, discard, input end), applies the transitions of
 * `ExecutionState`, and carries out the commands they leave: context modifiers, emitting events to the sink,
 * starting calls, interrupting calls. Calls run in a
 * scoped FiberSet, each holding permits of one Semaphore (a safe call one, an unsafe call all of them under
 * partition scheduling): the semaphore holds the cap and the partition, the planner decides the order in which
 * permits are asked for. See docs/executor.md.
 */
import { type Cause, Deferred, Effect, Exit, FiberSet, Mailbox, Option, Ref, Runtime, type Scope, Stream } from "effect"
import type { Scheduling } from "../../domain/Admission.js"
import { makeStreamCheck } from "../../domain/CallGraph.js"
import { discoveredToolsKey } from "../../domain/DeferredTools.js"
import type { DependencyCycleError, InvalidInputError } from "../../domain/Errors.js"
import type { ExecutorEvent, ToolCall } from "../../domain/ExecutorEvent.js"
import { cancelledOutcome, type Outcome } from "../../domain/Outcome.js"
import * as Texts from "../../domain/Texts.js"
import type * as Tool from "../../domain/Tool.js"
import { currentContext, type Session } from "../../services/Session.js"
import type { CancellationPolicy, Control } from "../../services/ToolExecutor.js"
import type { ToolRegistry } from "../../services/ToolRegistry.js"
import { Starter } from "../observability/CallSpans.js"
import * as Metrics from "../observability/Metrics.js"
import * as Spans from "../observability/Spans.js"
import type * as CallPipeline from "./CallPipeline.js"
import * as ExecutionState from "./ExecutionState.js"

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
  /** Takes events in order; called by the owner only (progress events come from call fibers). */
  readonly emit: (events: ReadonlyArray<ExecutorEvent>) => void
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
  emit: (events) => {
    mailbox.unsafeOfferAll(events)
  },
  end: (failure) => Option.match(failure, { onNone: () => mailbox.end, onSome: (cause) => mailbox.failCause(cause) }),
  discard: Effect.zipRight(Effect.ignore(mailbox.clear), mailbox.end)
})

type Message<E> =
  | {
      readonly _tag: "Arrive"
      readonly call: ToolCall
      readonly tool: Tool.Any | undefined
      readonly discovered: ReadonlySet<string>
    }
  | {
      readonly _tag: "Exited"
      readonly entry: ExecutionState.Entry
      readonly exit: Exit.Exit<Outcome>
      /** The tool's result when it had returned before the fiber ended (a late cancellation must not replace it). */
      readonly ran: Outcome | undefined
    }
  | { readonly _tag: "Interrupt"; readonly all: boolean }
  | { readonly _tag: "InputEnded"; readonly failure: Option.Option<Cause.Cause<E>> }
  | { readonly _tag: "Discard" }

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
  constructor(
    id: string,
    emit: Sink<unknown>["emit"] | undefined,
    now: () => number,
    readonly interrupted: Effect.Effect<void>
  ) {
    this.progress =
      emit === undefined
        ? noProgress
        : (data) =>
            Effect.sync(() => {
              emit([{ type: "progress", tool_use_id: id, data, t_ms: now() }])
            })
  }
  ran(outcome: Outcome): void {
    this.outcome = outcome
  }
}

const noProgress = (_: unknown): Effect.Effect<void> => Effect.void

/**
 * Starts an execution in the current scope; its events go to `sink`, which is told when it ends. With `inline`, a
 * batch's owner runs in the calling fiber, which returns once the sink was told the end (a caller that only waits
 * for the results saves a fiber and a wake per batch); a stream's owner always has its own fiber.
 */
export const run = <E>(
  env: Env,
  input: Input<E>,
  options: Options,
  sink: Sink<Failure<E>>,
  inline = false
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function* () {
    const clock = yield* Effect.clock
    const opener = env.spans ? yield* Spans.opener : undefined
    const startedAt = clock.unsafeCurrentTimeMillis()
    const now = () => clock.unsafeCurrentTimeMillis() - startedAt
    const inbox = yield* Mailbox.make<Message<Failure<E>>>()
    const fibers = yield* FiberSet.make<unknown, unknown>()
    const semaphore = yield* Effect.makeSemaphore(options.cap)
    const state = ExecutionState.make({ ...options, now, detailed: sink.detailed })
    const send = (message: Message<Failure<E>>) => inbox.offer(message)
    const interrupted = options.control === undefined ? Effect.never : Deferred.await(options.control.interrupted)
    const permitsOf = (entry: ExecutionState.Entry) =>
      entry.safe || options.scheduling === "resources" ? 1 : options.cap

    /**
     * Starts a call: its `execute_tool` span, then its pipeline in a fiber of its own, started with the owner's
     * runtime at once rather than at the scheduler's next turn (a call that finishes without waiting has posted its
     * exit before the owner reads its inbox again, which saves the owner a wake per call). Traced, the fiber starts
     * with a context of its own whose parent span is the call's span (CallSpans), so what the pipeline opens nests
     * under it with no change of context. The fiber only talks to the owner through the inbox: starting it here
     * touches no state.
     */
    const startCall = (runtime: Runtime.Runtime<never>, starter: Starter | undefined, entry: ExecutionState.Entry) => {
      const startedAt = now()
      entry.startedAt = startedAt
      Metrics.callStarted(entry.call.name, startedAt - entry.queuedAt)
      const link = new Link(entry.call.id, sink.detailed ? sink.emit : undefined, now, interrupted)
      let fiberRuntime = runtime
      if (starter !== undefined) {
        const tracing = starter.start(entry.tool, entry.call.name, entry.call.id, startedAt - entry.queuedAt)
        entry.span = tracing.span
        link.tracing = tracing
        fiberRuntime = tracing.runtime
      }
      const started = { call: entry.call, tool: entry.tool!, input: entry.input }
      const fiber = Runtime.runFork(fiberRuntime, Effect.interruptible(env.pipeline.run(started, link)))
      // told at once if the call already ended; the inbox is unbounded, so the offer always succeeds
      fiber.addObserver((exit) => {
        link.tracing?.ended(exit)
        inbox.unsafeOffer({ _tag: "Exited", entry, exit, ran: link.outcome })
      })
      // a call that already ended (it never waited) needs no place in the set, nor in its entry
      if (fiber.unsafePoll() !== null) return
      FiberSet.unsafeAdd(fibers, fiber)
      if (entry.status === "executing") entry.fiber = fiber
    }

    /** Ends a completed call's `execute_tool` span (a call that never started gets an instant one) and metrics. */
    const ended = (entry: ExecutionState.Entry) => {
      const outcome = entry.outcome!
      Metrics.callEnded(entry.call.name, outcome, entry.startedAt === undefined ? undefined : now() - entry.startedAt)
      if (opener === undefined) return
      const span = entry.span ?? Spans.openTool(opener, entry.tool, entry.call.name, entry.call.id, undefined)
      Spans.endTool(span, outcome, opener.now())
      // the span is let go once ended, like the call's fiber
      entry.span = undefined
    }

    /**
     * Ends the metrics and spans of calls that started and were cut short before their end was applied: by a discard,
     * or by the owner itself being interrupted (the stream's consumer went away). Once only.
     */
    let cutShortEnded = false
    const endDiscarded = Effect.sync(() => {
      if (cutShortEnded) return
      cutShortEnded = true
      for (const entry of state.entries) {
        if (entry.startedAt !== undefined && entry.outcome === undefined) {
          const outcome = cancelledOutcome(Texts.rejected, "discard")
          Metrics.callEnded(entry.call.name, outcome, now() - entry.startedAt)
          if (entry.span !== undefined && opener !== undefined) Spans.endTool(entry.span, outcome, opener.now())
        }
      }
    })

    /** Applies one message; false when the execution was discarded. */
    const apply = (
      message: Message<Failure<E>>,
      failure: { cause: Option.Option<Cause.Cause<Failure<E>>>; released: number }
    ) => {
      switch (message._tag) {
        case "Arrive":
          ExecutionState.arrive(state, message.call, message.tool, message.discovered)
          return true
        case "Exited":
          failure.released += permitsOf(message.entry)
          ExecutionState.exited(state, message.entry, message.exit, message.ran)
          return true
        case "Interrupt":
          ExecutionState.interrupt(state, message.all)
          return true
        case "InputEnded":
          failure.cause = message.failure
          ExecutionState.inputEnded(state)
          return true
        case "Discard":
          return false
      }
    }

    /**
     * The owner: the only fiber that reads or writes the state, and the loop that hands out the semaphore's permits.
     * After each round of messages it carries out the transitions' commands in order: modifiers, events, the
     * permits of the calls the planner started (it never starts more than are free, so taking them never waits),
     * starts, ended calls, interrupts.
     */
    const owner = (initial: Array<Message<Failure<E>>>) =>
      Effect.gen(function* () {
        const runtime = yield* Effect.runtime<never>()
        const self = yield* Effect.fiberId
        const starter = opener === undefined ? undefined : new Starter(opener, runtime)
        const failure = { cause: Option.none<Cause.Cause<Failure<E>>>(), released: 0 }
        // the first messages are taken out of `initial` so that a long batch's arrivals are not held to the end
        let messages: Iterable<Message<Failure<E>>> = initial.splice(0)
        while (true) {
          for (const message of messages) {
            if (!apply(message, failure)) {
              // nothing more is yielded: running calls are interrupted, queued ones never start
              yield* FiberSet.clear(fibers)
              yield* endDiscarded
              return yield* sink.discard
            }
          }
          ExecutionState.settle(state)
          const commands = ExecutionState.takeCommands(state)
          const { modifiers } = commands
          if (modifiers.length > 0) {
            const context = yield* currentContext(env.session)
            yield* Ref.update(context, (c) => modifiers.reduce((a, m) => m(a), c))
          }
          if (commands.events.length > 0) sink.emit(commands.events)
          if (failure.released > 0) yield* semaphore.release(failure.released)
          failure.released = 0
          if (commands.start.length > 0) {
            let permits = 0
            for (const entry of commands.start) permits += permitsOf(entry)
            yield* semaphore.take(permits)
            for (const entry of commands.start) startCall(runtime, starter, entry)
          }
          for (const entry of commands.completed) ended(entry)
          for (const fiber of commands.interrupt) fiber.unsafeInterruptAsFork(self)
          if (ExecutionState.isFinished(state)) return yield* sink.end(failure.cause)
          messages = (yield* inbox.takeAll)[0]
        }
      }).pipe(Effect.onInterrupt(() => endDiscarded))

    const discovered =
      options.discovered !== undefined ? Effect.succeed(options.discovered) : env.session.state.get(discoveredToolsKey)

    const lookup = options.lookup ?? env.registry.lookup
    const control = options.control
    if (control !== undefined) {
      yield* Effect.forkScoped(
        Deferred.await(control.interrupted).pipe(
          Effect.zipRight(send({ _tag: "Interrupt", all: false })),
          Effect.zipRight(Deferred.await(control.aborted)),
          Effect.zipRight(send({ _tag: "Interrupt", all: true }))
        )
      )
      yield* Effect.forkScoped(Effect.zipRight(Deferred.await(control.discarded), send({ _tag: "Discard" })))
    }
    if (input._tag === "Batch") {
      // A whole batch arrives at once (it was checked as a whole before): no input fiber, one lookup per name.
      const known = yield* discovered
      const tools = new Map<string, Tool.Any | undefined>()
      const arrivals: Array<Message<Failure<E>>> = []
      for (const call of input.calls) {
        if (!tools.has(call.name)) tools.set(call.name, Option.getOrUndefined(yield* lookup(call.name)))
        arrivals.push({ _tag: "Arrive", call, tool: tools.get(call.name), discovered: known })
      }
      arrivals.push({ _tag: "InputEnded", failure: Option.none() })
      if (inline) return yield* owner(arrivals)
      yield* Effect.forkScoped(owner(arrivals))
    } else {
      const check = makeStreamCheck()
      const feed = Stream.runForEach(input.calls, (call) => {
        const invalid = check(call)
        if (invalid !== undefined) return Effect.fail(invalid)
        return Effect.flatMap(Effect.zip(lookup(call.name), discovered), ([tool, known]) =>
          send({ _tag: "Arrive", call, tool: Option.getOrUndefined(tool), discovered: known })
        )
      }).pipe(
        Effect.exit,
        Effect.flatMap((exit) =>
          send({ _tag: "InputEnded", failure: Exit.isFailure(exit) ? Option.some(exit.cause) : Option.none() })
        )
      )
      yield* Effect.forkScoped(owner([]))
      yield* Effect.forkScoped(feed)
    }
  })
