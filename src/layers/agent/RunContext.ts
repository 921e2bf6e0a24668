/**
 * What every part of one agent run shares: the services, the options with their defaults, the user's interrupt and
 * abort signals, the running totals, and the three actions every part uses — record a line, run a hook, finish
 * with the result line.
 */
import { Clock, type Context, Deferred, Effect, Option, Stream } from "effect"
import type { ExecutorEvent } from "../../domain/ExecutorEvent.js"
import type { HookEvent, HookOutcome } from "../../domain/Hook.js"
import * as HookInputs from "../../domain/HookInputs.js"
import { Hooks } from "../../services/Hooks.js"
import {
  costOf,
  defaultMaxTokens,
  defaultModel,
  emptyUsage,
  LanguageModel,
  type ModelEvent,
  type StopReason,
  type Usage
} from "../../services/LanguageModel.js"
import { PermissionPolicy } from "../../services/PermissionPolicy.js"
import { Session } from "../../services/Session.js"
import { ToolExecutor } from "../../services/ToolExecutor.js"
import { ToolRegistry } from "../../services/ToolRegistry.js"
import { Transcript, type TranscriptError } from "../../services/Transcript.js"
import {
  type AgentEvent,
  defaultMaxTurns,
  type ExecutionMode,
  type ResultSubtype,
  type RunOptions,
  type RunResult
} from "./AgentEvent.js"

/** The shared state and actions of one run. */
export interface RunContext {
  readonly session: Context.Tag.Service<typeof Session>
  readonly registry: Context.Tag.Service<typeof ToolRegistry>
  readonly executor: Context.Tag.Service<typeof ToolExecutor>
  readonly model: Context.Tag.Service<typeof LanguageModel>
  readonly policy: Context.Tag.Service<typeof PermissionPolicy>
  readonly transcript: Context.Tag.Service<typeof Transcript>
  readonly options: RunOptions
  readonly modelName: string
  readonly maxTurns: number
  readonly maxTokens: number
  readonly execution: ExecutionMode
  readonly onEvent: (event: AgentEvent) => Effect.Effect<void>
  readonly onExecutorEvent: (event: ExecutorEvent) => Effect.Effect<void>
  readonly onModelEvent: (event: ModelEvent) => Effect.Effect<void>
  /** Completed by the user's first interrupt. */
  readonly interrupted: Deferred.Deferred<void>
  /** Completed by the user's second interrupt. */
  readonly aborted: Deferred.Deferred<void>
  /** The running totals, written only by the run's own fiber. */
  readonly tally: { usage: Usage; turns: number }
  /** Records a line in the transcript and (unless told not to) reports it. */
  readonly record: (event: AgentEvent, report?: boolean) => Effect.Effect<void, TranscriptError>
  /** Runs the hooks of an event; their system messages and errors are reported as `hook` events. */
  readonly runHook: (event: HookEvent, extra: Record<string, unknown>) => Effect.Effect<HookOutcome>
  /** Records and reports the result line, syncs the transcript and returns the line. */
  readonly finish: (
    subtype: ResultSubtype,
    result: string,
    stopReason: StopReason | null
  ) => Effect.Effect<RunResult, TranscriptError>
}

/** The reason a hook outcome blocks what it was asked about (a deny decision or any block), if it does. */
export const blocked = (outcome: HookOutcome): Option.Option<string> =>
  outcome.decision === "deny" || outcome.blocks.length > 0
    ? Option.some(outcome.reason ?? outcome.blocks.map((b) => b.reason).join("\n"))
    : Option.none()

/** Builds the context of a run; the user's interrupts are watched for the run's scope. */
export const make = Effect.fn("AgentLoop.makeContext")(function* (options: RunOptions) {
  const session = yield* Session
  const registry = yield* ToolRegistry
  const executor = yield* ToolExecutor
  const model = yield* LanguageModel
  const hooks = yield* Hooks
  const policy = yield* PermissionPolicy
  const transcript = yield* Transcript
  const onEvent = options.onEvent ?? (() => Effect.void)
  const startedAt = yield* Clock.currentTimeMillis

  const interrupted = yield* Deferred.make<void>()
  const aborted = yield* Deferred.make<void>()
  if (options.interrupts !== undefined) {
    yield* Effect.forkScoped(
      Stream.runForEach(Stream.zipWithIndex(options.interrupts), ([, n]) =>
        n === 0 ? Deferred.succeed(interrupted, undefined) : Deferred.succeed(aborted, undefined)
      )
    )
  }

  const record = (event: AgentEvent, report = true) =>
    Effect.zipRight(transcript.append(event), report ? onEvent(event) : Effect.void)

  const hookInput = (event: HookEvent, extra: Record<string, unknown>) =>
    Effect.map(session.context.get, (context) =>
      HookInputs.hookInput(
        {
          sessionId: session.id,
          transcriptPath: transcript.path === "" ? session.transcriptPath : transcript.path,
          cwd: context.cwd,
          permissionMode: policy.mode
        },
        event,
        extra
      )
    )
  const runHook = (event: HookEvent, extra: Record<string, unknown>) =>
    Effect.flatMap(hookInput(event, extra), (input) => hooks.run(event, input)).pipe(
      Effect.tap((outcome) =>
        Effect.forEach(
          [...outcome.systemMessages, ...outcome.errors],
          (message) => onEvent({ type: "system", subtype: "hook", session_id: session.id, message }),
          { discard: true }
        )
      )
    )

  const modelName = options.model ?? defaultModel
  const tally = { usage: emptyUsage, turns: 0 }
  const finish = (subtype: ResultSubtype, result: string, stopReason: StopReason | null) =>
    Effect.gen(function* () {
      const line: RunResult = {
        type: "result",
        subtype,
        is_error: subtype !== "success" && subtype !== "stopped_by_hook",
        session_id: session.id,
        num_turns: tally.turns,
        result,
        stop_reason: stopReason,
        duration_ms: (yield* Clock.currentTimeMillis) - startedAt,
        usage: tally.usage,
        total_cost_usd: costOf(modelName, tally.usage)
      }
      yield* record(line)
      yield* transcript.sync
      return line
    })

  const context: RunContext = {
    session,
    registry,
    executor,
    model,
    policy,
    transcript,
    options,
    modelName,
    maxTurns: options.maxTurns ?? defaultMaxTurns,
    maxTokens: options.maxTokens ?? defaultMaxTokens,
    execution: options.execution ?? "streaming",
    onEvent,
    onExecutorEvent: options.onExecutorEvent ?? (() => Effect.void),
    onModelEvent: options.onModelEvent ?? (() => Effect.void),
    interrupted,
    aborted,
    tally,
    record,
    runHook,
    finish
  }
  return context
})
