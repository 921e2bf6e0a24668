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
import {
  type Cause,
  Deferred,
  Effect,
  Exit,
  Fiber,
  FiberSet,
  type Mailbox,
  Option,
  Queue,
  Ref,
  Runtime,
  type Scope,
  Stream,
  type Tracer
} from "effect"
import type { Scheduling } from "../../domain/Admission.js"
import { makeStreamCheck } from "../../domain/CallGraph.js"
import { discoveredToolsKey } from "../../domain/DeferredTools.js"
import type { DependencyCycleError, InvalidInputError } from "../../domain/Errors.js"
import type { ExecutorEvent, ToolCall } from "../../domain/ExecutorEvent.js"
import { cancelledOutcome, type Outcome } from "../../domain/Outcome.js"
import * as Texts from "../../domain/Texts.js"
import type * as Tool from "../../domain/Tool.js"
import type { Session } from "../../services/Session.js"
import type { CancellationPolicy, Control } from "../../services/ToolExecutor.js"
import type { ToolRegistry } from "../../services/ToolRegistry.js"
import * as Metrics from "../observability/Metrics.js"
import * as Spans from "../observability/Spans.js"
import type * as CallPipeline from "./CallPipeline.js"
import * as ExecutionState from "./ExecutionState.js"

/** What an execution needs from the executor. */
export interface Env {
  readonly registry: ToolRegistry["Type"]
  readonly session: Session["Type"]
  readonly pipeline: ReturnType<typeof CallPipeline.make>
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
    const spans = yield* Spans.ExecutorSpans
    const startedAt = clock.unsafeCurrentTimeMillis()
    const now = () => clock.unsafeCurrentTimeMillis() - startedAt
    const inbox = yield* Queue.unbounded<Message<Failure<E>>>()
    const fibers = yield* FiberSet.make<unknown, unknown>()
    const semaphore = yield* Effect.makeSemaphore(options.cap)
    const state = ExecutionState.make({ ...options, now, detailed: sink.detailed })
    const send = (message: Message<Failure<E>>) => Queue.offer(inbox, message)
    const interrupted = options.control === undefined ? Effect.never : Deferred.await(options.control.interrupted)
    const noProgress = (_: unknown) => Effect.void

    /**
     * A started call: its pipeline under its permits. `slot.ran` keeps its tool's result once the tool returned;
     * the owner's observer of the fiber reports the exit with it.
     */
    const callFiber = (entry: ExecutionState.Entry, slot: { ran: Outcome | undefined }) => {
      const permits = entry.safe || options.scheduling === "resources" ? 1 : options.cap
      const links: CallPipeline.Links = {
        progress: sink.detailed
          ? (data) =>
              Effect.sync(() => {
                sink.emit([{ type: "progress", tool_use_id: entry.call.id, data, t_ms: now() }])
              })
          : noProgress,
        interrupted,
        ran: (outcome) =>
          Effect.sync(() => {
            slot.ran = outcome
          })
      }
      const pipeline = env.pipeline.run({ call: entry.call, tool: entry.tool!, input: entry.input }, links)
      const traced = entry.span === undefined ? pipeline : Effect.withParentSpan(pipeline, entry.span)
      // The planner starts a call only when its permits are free, so they are taken at once (`withPermits` would
      // always pass through the scheduler first); waiting for them stays as the fallback should they not be.
      return semaphore
        .withPermitsIfAvailable(permits)(traced)
        .pipe(
          Effect.flatMap((outcome) =>
            Option.isSome(outcome) ? Effect.succeed(outcome.value) : semaphore.withPermits(permits)(traced)
          ),
          Effect.interruptible
        )
    }

    /**
     * Carries out a transition's commands, in order: modifiers, events, starts, interrupts. Calls start with the
     * owner's runtime, at once rather than at the scheduler's next turn: a call that finishes without waiting on
     * anything has sent its exit before the owner looks at its inbox again, which saves the owner a wake per call.
     * A started call only ever talks to the owner through the inbox, so starting it here touches no state.
     */
    const carryOut = (runtime: Runtime.Runtime<never>, commands: ExecutionState.Commands): Effect.Effect<void> => {
      const rest = () => {
        if (commands.events.length > 0) sink.emit(commands.events)
        const steps: Array<Effect.Effect<void>> = []
        for (const entry of commands.start) steps.push(startCall(runtime, entry))
        for (const entry of commands.completed) steps.push(endSpan(entry))
        if (commands.interrupt.length > 0) {
          steps.push(Effect.forEach(commands.interrupt, Fiber.interruptFork, { discard: true }))
        }
        return steps.length === 0 ? Effect.void : Effect.all(steps, { discard: true })
      }
      const { modifiers } = commands
      return modifiers.length === 0
        ? rest()
        : Effect.zipRight(
            Ref.update(env.session.context, (c) => modifiers.reduce((a, m) => m(a), c)),
            Effect.suspend(rest)
          )
    }

    /** Opens a call's `execute_tool` span and starts its fiber with the owner's runtime; its exit goes to the inbox. */
    const startCall = (runtime: Runtime.Runtime<never>, entry: ExecutionState.Entry) => {
      const startedAt = now()
      entry.startedAt = startedAt
      Metrics.callStarted(entry.call.name, startedAt - entry.queuedAt)
      const fork = (span: Tracer.Span | undefined) => {
        entry.span = span
        const slot: { ran: Outcome | undefined } = { ran: undefined }
        const fiber = Runtime.runFork(runtime, callFiber(entry, slot))
        // told at once if the call already ended; the inbox is unbounded, so the offer always succeeds
        fiber.addObserver((exit) => {
          inbox.unsafeOffer({ _tag: "Exited", entry, exit, ran: slot.ran })
        })
        FiberSet.unsafeAdd(fibers, fiber)
        if (entry.status === "executing") entry.fiber = fiber
      }
      if (!spans) return Effect.sync(() => fork(undefined))
      return Effect.map(Spans.startTool(entry.tool, entry.call.name, entry.call.id, startedAt - entry.queuedAt), fork)
    }

    /** Ends a completed call's `execute_tool` span; a call that never started gets an instant one. */
    const endSpan = (entry: ExecutionState.Entry) =>
      Effect.suspend(() => {
        const outcome = entry.outcome!
        Metrics.callEnded(entry.call.name, outcome, entry.startedAt === undefined ? undefined : now() - entry.startedAt)
        // the span is let go once ended, like the call's fiber
        if (entry.span !== undefined) {
          Spans.endTool(entry.span, outcome, clock.unsafeCurrentTimeNanos())
          entry.span = undefined
          return Effect.void
        }
        if (!spans) return Effect.void
        return Effect.map(Spans.startTool(entry.tool, entry.call.name, entry.call.id, undefined), (span) =>
          Spans.endTool(span, outcome, clock.unsafeCurrentTimeNanos())
        )
      })

    /** Ends the spans of calls a discard cut short. */
    const endDiscarded = Effect.sync(() => {
      for (const entry of state.entries) {
        if (entry.startedAt !== undefined && entry.outcome === undefined) {
          const outcome = cancelledOutcome(Texts.rejected, "discard")
          Metrics.callEnded(entry.call.name, outcome, now() - entry.startedAt)
          if (entry.span !== undefined) Spans.endTool(entry.span, outcome, clock.unsafeCurrentTimeNanos())
        }
      }
    })

    /** Applies one message; false when the execution was discarded. */
    const apply = (message: Message<Failure<E>>, failure: { cause: Option.Option<Cause.Cause<Failure<E>>> }) => {
      switch (message._tag) {
        case "Arrive":
          ExecutionState.arrive(state, message.call, message.tool, message.discovered)
          return true
        case "Exited":
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

    /** The owner: the only fiber that reads or writes the state. */
    const owner = (initial: Array<Message<Failure<E>>>) =>
      Effect.gen(function* () {
        const runtime = yield* Effect.runtime<never>()
        const failure = { cause: Option.none<Cause.Cause<Failure<E>>>() }
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
          yield* carryOut(runtime, ExecutionState.takeCommands(state))
          if (ExecutionState.isFinished(state)) return yield* sink.end(failure.cause)
          messages = yield* Queue.takeBetween(inbox, 1, Number.POSITIVE_INFINITY)
        }
      })

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
