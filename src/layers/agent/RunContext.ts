/**
 * What every part of one agent run shares: the services, the options with their defaults, the user's interrupt and
 * abort signals, the running totals, and the three actions every part uses — record a line, run a hook, finish
 * with the result line.
 */
import { Clock, type Context, Deferred, Effect, Option, Queue, Ref, type Scope, Stream } from "effect"
import * as AgentDefinition from "../../domain/AgentDefinition.js"
import type { ExecutorEvent } from "../../domain/ExecutorEvent.js"
import type { HookEvent, HookOutcome } from "../../domain/Hook.js"
import * as HookInputs from "../../domain/HookInputs.js"
import type * as Tool from "../../domain/Tool.js"
import { Hooks } from "../../services/Hooks.js"
import {
  addUsage,
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
import { currentContext, Session } from "../../services/Session.js"
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
  /** The usage and cost of the run's sub-agents, added as each one ends (from the Agent calls' fibers). */
  readonly nested: Ref.Ref<{ readonly usage: Usage; readonly costUsd: number }>
  /** The run's scope: background agents run in it, so they end with the run at the latest. */
  readonly scope: Scope.Scope
  /** The notification blocks of background agents that ended, waiting for the next request. */
  readonly notifications: Queue.Queue<string>
  /** How many of this run's background agents are still running. */
  readonly backgroundRunning: Ref.Ref<number>
  /** The tools offered to the model: the registry's pool, narrowed to a sub-agent's own, plus Agent when offered. */
  readonly pool: Effect.Effect<ReadonlyArray<Tool.Any>>
  /** Finds a call's tool among those offered (for the executor): a tool not offered is unknown. */
  readonly lookup: (name: string) => Effect.Effect<Option.Option<Tool.Any>>
  /** The hook event that ends a turn: Stop, or SubagentStop in a sub-agent. */
  readonly stopEvent: "Stop" | "SubagentStop"
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

/**
 * Builds the context of a run; the user's interrupts are watched for the run's scope. `agentTool` makes the Agent
 * tool of this run (it needs the context to launch sub-agents).
 */
export const make = Effect.fn("AgentLoop.makeContext")(function* (
  options: RunOptions,
  agentTool?: (
    run: RunContext,
    definitions: ReadonlyArray<AgentDefinition.AgentDefinition>
  ) => Effect.Effect<Tool.Any | undefined>
) {
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
    Effect.map(Effect.flatMap(currentContext(session), Ref.get), (context) =>
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
  const nested = yield* Ref.make({ usage: emptyUsage, costUsd: 0 })
  const notifications = yield* Queue.unbounded<string>()
  const backgroundRunning = yield* Ref.make(0)
  const scope = yield* Effect.scope
  const finish = (subtype: ResultSubtype, result: string, stopReason: StopReason | null) =>
    Effect.gen(function* () {
      const totals = yield* Ref.get(nested)
      const line: RunResult = {
        type: "result",
        subtype,
        is_error: subtype !== "success" && subtype !== "stopped_by_hook",
        session_id: session.id,
        num_turns: tally.turns,
        result,
        stop_reason: stopReason,
        duration_ms: (yield* Clock.currentTimeMillis) - startedAt,
        usage: addUsage(tally.usage, totals.usage),
        total_cost_usd: costOf(modelName, tally.usage) + totals.costUsd
      }
      yield* record(line)
      yield* transcript.sync
      return line
    })

  // which tools this run offers: a sub-agent only its declared ones (Agent only below the nesting limit)
  const subagent = options.subagent
  const nesting = subagent !== undefined && subagent.depth < (options.agents?.maxDepth ?? 1)
  const allows = (name: string) =>
    subagent === undefined || AgentDefinition.allowsTool(subagent.definition, name, nesting)
  let agent: Tool.Any | undefined
  // the definitions the Agent tool was made over: with live definitions it is made again at the turn after a change
  let agentDefinitions: ReadonlyArray<AgentDefinition.AgentDefinition> | undefined
  const offeredAgent = () =>
    agent !== undefined && allows(agent.name) && !policy.isToolDenied(agent) ? agent : undefined
  const refreshAgent = Effect.suspend(() => {
    const live = options.agents?.current
    if (agentTool === undefined || live === undefined) return Effect.void
    return Effect.flatMap(live, (definitions) =>
      definitions === agentDefinitions
        ? Effect.void
        : Effect.map(agentTool(context, definitions), (tool) => {
            agentDefinitions = definitions
            agent = tool
          })
    )
  })
  // read at the start of each turn: the tools array of the request, and the tools its calls are looked up in
  const pool = Effect.zipRight(
    refreshAgent,
    Effect.map(registry.pool({ isDenied: policy.isToolDenied }), (tools) => {
      const own = tools.filter((tool) => tool.name !== "Agent" && allows(tool.name))
      const extra = offeredAgent()
      return extra === undefined ? own : [extra, ...own]
    })
  )
  const lookup = (name: string) => {
    const extra = offeredAgent()
    if (extra !== undefined && name === extra.name) return Effect.succeed(Option.some(extra))
    return Effect.map(
      registry.lookup(name),
      Option.filter((tool) => tool.name !== "Agent" && allows(tool.name))
    )
  }

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
    nested,
    scope,
    notifications,
    backgroundRunning,
    pool,
    lookup,
    stopEvent: options.subagent === undefined ? "Stop" : "SubagentStop",
    record,
    runHook,
    finish
  }
  if (agentTool !== undefined) {
    agentDefinitions =
      options.agents?.current === undefined ? options.agents?.definitions : yield* options.agents.current
    agent = yield* agentTool(context, agentDefinitions ?? [])
  }
  return context
})
