/**
 * One execution: the fibers around the state's single owner. The input fiber checks and looks up each call and
 * sends it to the owner; the owner fiber takes messages from its inbox (arrivals, a call's return and exit,
 * interrupt, abort, discard, input end), applies the transitions of `ExecutionState`, and carries out the
 * commands they leave: context modifiers, starting calls, interrupting calls, emitting events. Calls run in a
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
  Mailbox,
  Option,
  Queue,
  Ref,
  type Scope,
  Stream
} from "effect"
import type { Scheduling } from "../../domain/Admission.js"
import { makeStreamCheck } from "../../domain/CallGraph.js"
import { discoveredToolsKey } from "../../domain/DeferredTools.js"
import type { DependencyCycleError, InvalidInputError } from "../../domain/Errors.js"
import type { ExecutorEvent, ToolCall } from "../../domain/ExecutorEvent.js"
import type { Outcome } from "../../domain/Outcome.js"
import type * as Tool from "../../domain/Tool.js"
import type { Session } from "../../services/Session.js"
import type { CancellationPolicy, Control } from "../../services/ToolExecutor.js"
import type { ToolRegistry } from "../../services/ToolRegistry.js"
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
}

type Message<E> =
  | {
      readonly _tag: "Arrive"
      readonly call: ToolCall
      readonly tool: Tool.Any | undefined
      readonly discovered: ReadonlySet<string>
    }
  | { readonly _tag: "Ran"; readonly entry: ExecutionState.Entry; readonly outcome: Outcome }
  | { readonly _tag: "Exited"; readonly entry: ExecutionState.Entry; readonly exit: Exit.Exit<Outcome> }
  | { readonly _tag: "Interrupt"; readonly all: boolean }
  | { readonly _tag: "InputEnded"; readonly failure: Option.Option<Cause.Cause<E>> }
  | { readonly _tag: "Discard" }

type Failure<E> = E | InvalidInputError | DependencyCycleError

/** Starts an execution in the current scope and returns its events. */
export const run = <E>(
  env: Env,
  calls: Stream.Stream<ToolCall, E>,
  options: Options
): Effect.Effect<Stream.Stream<ExecutorEvent, Failure<E>>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const clock = yield* Effect.clock
    const startedAt = clock.unsafeCurrentTimeMillis()
    const now = () => clock.unsafeCurrentTimeMillis() - startedAt
    const mailbox = yield* Mailbox.make<ExecutorEvent, Failure<E>>()
    const inbox = yield* Queue.unbounded<Message<Failure<E>>>()
    const fibers = yield* FiberSet.make<unknown, unknown>()
    const semaphore = yield* Effect.makeSemaphore(options.cap)
    const state = ExecutionState.make({ ...options, now })
    const send = (message: Message<Failure<E>>) => Queue.offer(inbox, message)
    const interrupted = options.control === undefined ? Effect.never : Deferred.await(options.control.interrupted)

    /** A started call: its pipeline under its permits, reporting its return and its exit to the owner. */
    const callFiber = (entry: ExecutionState.Entry) => {
      const permits = entry.safe || options.scheduling === "resources" ? 1 : options.cap
      const links: CallPipeline.Links = {
        progress: (data) =>
          Effect.sync(() => {
            mailbox.unsafeOffer({ type: "progress", tool_use_id: entry.call.id, data, t_ms: now() })
          }),
        interrupted,
        ran: (outcome) => send({ _tag: "Ran", entry, outcome })
      }
      return semaphore
        .withPermits(permits)(env.pipeline.run({ call: entry.call, tool: entry.tool!, input: entry.input }, links))
        .pipe(
          Effect.interruptible,
          Effect.onExit((exit) => send({ _tag: "Exited", entry, exit }))
        )
    }

    const carryOut = (commands: ExecutionState.Commands) =>
      Effect.gen(function* () {
        const { modifiers } = commands
        if (modifiers.length > 0) yield* Ref.update(env.session.context, (c) => modifiers.reduce((a, m) => m(a), c))
        mailbox.unsafeOfferAll(commands.events)
        for (const entry of commands.start) entry.fiber = yield* FiberSet.run(fibers, callFiber(entry))
        for (const fiber of commands.interrupt) yield* Fiber.interruptFork(fiber)
      })

    /** The owner: the only fiber that reads or writes the state. */
    const owner = Effect.gen(function* () {
      let failure = Option.none<Cause.Cause<Failure<E>>>()
      while (true) {
        const messages = yield* Queue.takeBetween(inbox, 1, Number.POSITIVE_INFINITY)
        for (const message of messages) {
          switch (message._tag) {
            case "Arrive":
              ExecutionState.arrive(state, message.call, message.tool, message.discovered)
              break
            case "Ran":
              ExecutionState.ran(message.entry, message.outcome)
              break
            case "Exited":
              ExecutionState.exited(state, message.entry, message.exit)
              break
            case "Interrupt":
              ExecutionState.interrupt(state, message.all)
              break
            case "InputEnded":
              failure = message.failure
              ExecutionState.inputEnded(state)
              break
            case "Discard":
              // nothing more is yielded: running calls are interrupted, queued ones never start
              yield* FiberSet.clear(fibers)
              yield* Effect.ignore(mailbox.clear)
              yield* mailbox.end
              return
          }
        }
        ExecutionState.settle(state)
        yield* carryOut(ExecutionState.takeCommands(state))
        if (ExecutionState.isFinished(state)) {
          yield* Option.match(failure, { onNone: () => mailbox.end, onSome: (cause) => mailbox.failCause(cause) })
          return
        }
      }
    })

    const check = makeStreamCheck()
    const discovered =
      options.discovered !== undefined ? Effect.succeed(options.discovered) : env.session.state.get(discoveredToolsKey)
    const input = Stream.runForEach(calls, (call) => {
      const invalid = check(call)
      if (invalid !== undefined) return Effect.fail(invalid)
      return Effect.flatMap(Effect.zip(env.registry.lookup(call.name), discovered), ([tool, known]) =>
        send({ _tag: "Arrive", call, tool: Option.getOrUndefined(tool), discovered: known })
      )
    }).pipe(
      Effect.exit,
      Effect.flatMap((exit) =>
        send({ _tag: "InputEnded", failure: Exit.isFailure(exit) ? Option.some(exit.cause) : Option.none() })
      )
    )

    yield* Effect.forkScoped(owner)
    yield* Effect.forkScoped(input)
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
    return Mailbox.toStream(mailbox)
  })
