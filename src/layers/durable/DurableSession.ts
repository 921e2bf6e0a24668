/**
 * A session as a durable workflow (`@effect/workflow`): the agent loop runs as the workflow's body; each model turn
 * and each tool call is a step (DurableStep) whose value the engine persists. A tool call's steps are keyed by its
 * tool_use_id: `begin/<id>` records that the call was started (and by which execution), `tool/<id>` its outcome.
 *
 * On replay the stored turns and outcomes come back without calling the model or the tool. A call that was started
 * by an earlier execution and has no stored outcome was in flight when that execution died: a read-only call is run
 * again; any other gets an error result saying it was interrupted by a crash and may have partly run, and the model
 * decides. See docs/durable.md.
 */
import * as Crypto from "node:crypto"
import * as Workflow from "@effect/workflow/Workflow"
import { Deferred, Effect, FiberRef, Mailbox, Schema, Stream } from "effect"
import type { Outcome } from "../../domain/Outcome.js"
import * as Texts from "../../domain/Texts.js"
import { CallJournal, type JournalCall } from "../../services/CallJournal.js"
import { LanguageModel, ModelError, type ModelEvent } from "../../services/LanguageModel.js"
import * as DurableStep from "./DurableStep.js"

/** The workflow of a session: its id is the idempotency key, its result the run's result line. */
export const SessionWorkflow = Workflow.make({
  name: "ArmatureSession",
  payload: { sessionId: Schema.String },
  success: Schema.Unknown,
  idempotencyKey: ({ sessionId }) => sessionId
})

/** The error result of a non-read-only call that was running when the process running its session died. */
export const crashedText = (toolName: string): string =>
  `<tool_use_error>The ${toolName} call was interrupted by a crash of the process running this session and may have ` +
  "partly run; its effects are unknown. Check its effects before calling it again.</tool_use_error>"

/** A stored outcome: everything but the context modifier (a function, which is not kept). */
const StoredOutcome = Schema.Struct({
  content: Schema.Unknown,
  isError: Schema.Boolean,
  continue: Schema.Boolean,
  stopReason: Schema.optional(Schema.String),
  executionFailed: Schema.Boolean,
  denied: Schema.optional(Schema.Literal("policy", "pre_tool_use_hook", "permission_request_hook", "approver")),
  cancelled: Schema.optional(Schema.Literal("sibling_error", "user_interrupt", "abort", "discard"))
})

const toOutcome = (stored: typeof StoredOutcome.Type): Outcome => ({
  ...stored,
  content: stored.content as Outcome["content"],
  stopReason: stored.stopReason,
  modifier: undefined
})

const fromOutcome = (outcome: Outcome): typeof StoredOutcome.Type => ({
  content: outcome.content,
  isError: outcome.isError,
  continue: outcome.continue,
  stopReason: outcome.stopReason,
  executionFailed: outcome.executionFailed,
  denied: outcome.denied,
  cancelled: outcome.cancelled
})

const errorOutcome = (content: string, cancelled?: "discard"): typeof StoredOutcome.Type => ({
  content,
  isError: true,
  continue: true,
  executionFailed: false,
  cancelled
})

/** A model turn as stored: the events it streamed, and the error it ended with, if any. */
const StoredTurn = Schema.Struct({
  events: Schema.Array(Schema.Unknown),
  error: Schema.optional(ModelError),
  /** The execution that asked the model for it (absent in turns stored before attempts were recorded). */
  attempt: Schema.optional(Schema.String)
})

/** The model turn of the session's own conversation that lines printed now belong to, and which asking of it. */
export interface TurnPosition {
  /** 0 before the first model turn, then the number of the turn (from 1). */
  readonly turn: number
  /** The execution that asked the model for that turn ("" before the first). */
  readonly attempt: string
}

/**
 * The conversation a model request belongs to: the session's own (`main`), or the sub-agent run by the tool call
 * with this id. Model turns are numbered per conversation, so that a replayed sub-agent call (whose nested turns
 * are not asked for again) does not shift the numbers of the turns after it.
 */
const conversation = FiberRef.unsafeMake("main")

/**
 * The tools whose effects are only the processes they start, each started behind the gate of SpawnRecord, which
 * marks the call as started before its command can run: such a call without a mark provably did nothing.
 */
export const processTools: ReadonlySet<string> = new Set(["Bash"])

/** How an execution is made. */
export interface MakeOptions {
  /** Names this execution: a call begun under another name was begun by an earlier execution. */
  readonly execution?: string
  /**
   * Whether a process of the call with this id got past its gate (CallProcesses.callStarted). Without it, a call
   * begun by an earlier execution is taken as one that may have run.
   */
  readonly started?: (toolUseId: string) => Effect.Effect<boolean>
}

/**
 * The journal and model of one execution of a session's workflow.
 *
 * A call that is not read-only and was begun by an earlier execution (which died before its outcome was stored)
 * is run now only when it provably never started: a tool of `processTools` whose call has no start mark (the
 * execution died between the begin record and the spawn, in the call's hooks or its permission decision). Any
 * other gets the crash result: it may have run, and is not run twice.
 */
export const make = (options: MakeOptions = {}) =>
  Effect.gen(function* () {
    const execution = options.execution ?? Crypto.randomUUID()
    const context = yield* Effect.context<DurableStep.StepContext>()
    const inStep = <A>(effect: Effect.Effect<A, never, DurableStep.StepContext>) => Effect.provide(effect, context)

    // Per conversation: completed once the message of its current model turn is stored (no turn yet: none).
    const turnStored = new Map<string, Deferred.Deferred<void>>()
    const turns = new Map<string, number>()
    let position: TurnPosition = { turn: 0, attempt: "" }

    const record = (call: JournalCall, run: Effect.Effect<Outcome>): Effect.Effect<Outcome> =>
      inStep(
        Effect.gen(function* () {
          // A call that may change something waits until the message that asked for it is stored: were the process
          // to die before, the turn would be asked for again and the model might make the call anew.
          const asked = turnStored.get(yield* FiberRef.get(conversation))
          if (!call.readOnly && asked !== undefined) yield* Deferred.await(asked)
          const begunBy = yield* DurableStep.once(`begin/${call.toolUseId}`, Schema.String, Effect.succeed(execution))
          const neverStarted =
            begunBy !== execution &&
            !call.readOnly &&
            processTools.has(call.toolName) &&
            options.started !== undefined &&
            !(yield* options.started(call.toolUseId))
          const crashed = begunBy !== execution && !call.readOnly && !neverStarted
          let ran: Outcome | undefined
          const body = crashed
            ? Effect.succeed(errorOutcome(crashedText(call.toolName)))
            : Effect.map(Effect.locally(run, conversation, call.toolUseId), (outcome) => {
                ran = outcome
                return fromOutcome(outcome)
              })
          const stored = yield* DurableStep.run(`tool/${call.toolUseId}`, StoredOutcome, body, () =>
            errorOutcome(Texts.rejected, "discard")
          )
          // a call that ran now keeps its context modifier; a stored outcome has none
          return ran ?? toOutcome(stored)
        })
      )

    const model = (inner: LanguageModel["Type"]): LanguageModel["Type"] => ({
      stream: (request) =>
        Stream.unwrapScoped(
          Effect.gen(function* () {
            const talk = yield* FiberRef.get(conversation)
            const n = turns.get(talk) ?? 0
            turns.set(talk, n + 1)
            const name = talk === "main" ? `model/${n}` : `model/${talk}/${n}`
            const stored = yield* Deferred.make<void>()
            turnStored.set(talk, stored)
            const mailbox = yield* Mailbox.make<ModelEvent, ModelError>()
            const events: Array<ModelEvent> = []
            let live = false
            const body = Effect.suspend(() => {
              live = true
              if (talk === "main") position = { turn: n + 1, attempt: execution }
              return inner.stream(request).pipe(
                Stream.runForEach((event) =>
                  Effect.zipRight(
                    Effect.sync(() => events.push(event)),
                    mailbox.offer(event)
                  )
                ),
                Effect.match({
                  onSuccess: (): typeof StoredTurn.Type => ({ events, attempt: execution }),
                  onFailure: (error): typeof StoredTurn.Type => ({ events, error, attempt: execution })
                })
              )
            })
            const interrupted = (): typeof StoredTurn.Type => ({
              events,
              error: new ModelError({ message: "The model turn was interrupted", retryable: false, phase: "stream" }),
              attempt: execution
            })
            yield* DurableStep.run(name, StoredTurn, body, interrupted).pipe(
              inStep,
              Effect.flatMap((turn) =>
                Effect.zipRight(
                  // a replayed turn's lines belong to the attempt that streamed it
                  Effect.sync(() => {
                    if (talk === "main" && !live) position = { turn: n + 1, attempt: turn.attempt ?? "" }
                  }),
                  Effect.zipRight(
                    live ? Effect.void : mailbox.offerAll(turn.events as ReadonlyArray<ModelEvent>),
                    turn.error === undefined ? mailbox.end : mailbox.fail(turn.error)
                  )
                )
              ),
              Effect.ensuring(Deferred.succeed(stored, undefined)),
              Effect.forkScoped
            )
            return Mailbox.toStream(mailbox)
          })
        )
    })
    return { journal: CallJournal.of({ record }), model, position: (): TurnPosition => position }
  })

/**
 * Runs `body` (the agent loop, its engine provided) as an execution of a session's workflow: tool calls go through
 * the journal and the model's turns through its durable stand-in. Apply it inside the engine's layer, so that the
 * stand-in wraps the model that layer provides.
 */
export const durably =
  (options: MakeOptions = {}) =>
  <A, E, R>(body: Effect.Effect<A, E, R>) =>
    Effect.gen(function* () {
      const { journal, model } = yield* make(options)
      return yield* body.pipe(Effect.updateService(LanguageModel, model), Effect.provideService(CallJournal, journal))
    })

/** The session workflow registered with the engine; `run` is its body for a session id (see `durably`). */
export const layer = <E, R>(run: (sessionId: string) => Effect.Effect<unknown, E, R>) =>
  SessionWorkflow.toLayer(({ sessionId }) => Effect.orDie(run(sessionId)))
