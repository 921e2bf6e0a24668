/**
 * How the Agent tool runs a sub-agent: the same agent loop, nested — its own message history (the Agent call's
 * prompt is its first message), its definition's system prompt and tools, the parent's permission policy, settings,
 * hooks (SubagentStop instead of Stop) and approver. Its events go to the parent's stream with `parent_tool_use_id`,
 * its transcript is a side chain of the parent's (`<session>/agents/<Agent call id>.jsonl` next to it), and its
 * usage and cost are added to the parent's. See docs/agents.md.
 */
import * as Crypto from "node:crypto"
import * as Path from "node:path"
import { FileSystem } from "@effect/platform"
import { Clock, type Context, Deferred, Effect, Fiber, Option, Queue, Ref } from "effect"
import * as AgentDefinition from "../../domain/AgentDefinition.js"
import * as BackgroundAgents from "../../domain/BackgroundAgents.js"
import { CallJournal } from "../../services/CallJournal.js"
import { addUsage } from "../../services/LanguageModel.js"
import { contextOverride, currentContext } from "../../services/Session.js"
import { Transcript } from "../../services/Transcript.js"
import * as Agent from "../tools/Agent.js"
import type { RunError, RunOptions, RunResult } from "./AgentEvent.js"
import type { RunContext } from "./RunContext.js"
import * as TranscriptLive from "./TranscriptLive.js"
import * as Worktree from "./Worktree.js"

/** The side chain of a sub-agent: next to the parent's transcript, in a folder named after the session. */
const sideChainPath = (parentTranscript: string, sessionId: string, toolUseId: string): string =>
  Path.join(Path.dirname(parentTranscript), sessionId, "agents", `${toolUseId}.jsonl`)

/** The loop a sub-agent runs (the agent loop itself, passed in to keep the modules acyclic). */
export type Loop<R> = (options: RunOptions) => Effect.Effect<RunResult, RunError, R | Transcript>

/** The side-chain transcript of one sub-agent (none when the parent keeps none, or there is no file system). */
const sideChain = (parent: RunContext, toolUseId: string) =>
  Effect.gen(function* () {
    const fs = yield* Effect.serviceOption(FileSystem.FileSystem)
    if (parent.transcript.path === "" || Option.isNone(fs)) return Option.none()
    const path = sideChainPath(parent.transcript.path, parent.session.id, toolUseId)
    return Option.some(
      yield* TranscriptLive.openAt(path, parent.session.id, { parent_tool_use_id: toolUseId, isSidechain: true }).pipe(
        Effect.provideService(FileSystem.FileSystem, fs.value)
      )
    )
  })

/** The model a call runs its sub-agent on: the call's `model`, else the definition's, else the parent's. */
const childModel = (definition: AgentDefinition.AgentDefinition, input: Agent.Input, parentModel: string) =>
  input.model !== undefined
    ? (AgentDefinition.modelAliases[input.model] ?? input.model)
    : AgentDefinition.modelOf(definition, parentModel)

/** The options of a sub-agent's run, from its parent's. */
const childOptions = (
  parent: RunContext,
  definition: AgentDefinition.AgentDefinition,
  input: Agent.Input,
  toolUseId: string
): RunOptions => ({
  prompt: input.prompt,
  model: childModel(definition, input, parent.modelName),
  maxTurns: parent.options.agents?.maxTurns ?? parent.maxTurns,
  maxTokens: parent.maxTokens,
  execution: parent.execution,
  retry: parent.options.retry,
  assistantEvents: parent.options.assistantEvents,
  agents: parent.options.agents,
  compaction: parent.options.compaction,
  // WebSearch, when offered to the parent and the sub-agent's tools include it
  serverTools: AgentDefinition.allowsTool(definition, "WebSearch", false) ? parent.options.serverTools : undefined,
  // the child's own start and result lines stay in its side chain; the result is the Agent call's
  onEvent: (event) =>
    event.type === "result" || (event.type === "system" && event.subtype === "init")
      ? Effect.void
      : parent.onEvent({ ...event, parent_tool_use_id: event.parent_tool_use_id ?? toolUseId }),
  onExecutorEvent: parent.onExecutorEvent,
  subagent: { definition, parentToolUseId: toolUseId, depth: (parent.options.subagent?.depth ?? 0) + 1 }
})

const runFailed =
  (definition: AgentDefinition.AgentDefinition) =>
  (error: { readonly message: string }): Agent.AgentRunFailed =>
    new Agent.AgentRunFailed({ agentType: definition.name, message: error.message })

/** Runs one sub-agent to its result line (in its worktree, when isolated); its usage is added to the parent's. */
const runChild = <R>(
  parent: RunContext,
  loop: Loop<R>,
  services: Context.Context<R>,
  definition: AgentDefinition.AgentDefinition,
  input: Agent.Input,
  toolUseId: string
): Effect.Effect<RunResult, Agent.AgentRunFailed> =>
  Effect.gen(function* () {
    const transcript = yield* sideChain(parent, toolUseId)
    const result = yield* loop(childOptions(parent, definition, input, toolUseId)).pipe(
      Effect.provideService(
        Transcript,
        Option.getOrElse(transcript, () => noTranscript)
      ),
      Effect.provide(services)
    )
    yield* Ref.update(parent.nested, (totals) => ({
      usage: addUsage(totals.usage, result.usage),
      costUsd: totals.costUsd + result.total_cost_usd
    }))
    return result
  }).pipe(Effect.scoped, Effect.mapError(runFailed(definition)))

/** The answer of a finished sub-agent: its final text, or a failure with the reason it did not finish. */
const answerOf = (definition: AgentDefinition.AgentDefinition, result: RunResult) =>
  result.subtype === "success"
    ? Effect.succeed(result.result)
    : Effect.fail(
        new Agent.AgentDidNotFinish({
          agentType: definition.name,
          subtype: result.subtype,
          message: `The ${definition.name} agent did not finish (${result.subtype}): ${result.result}`
        })
      )

/** Runs `body` in a git worktree of its own when the call asks for one, and says where the worktree was kept. */
const isolated = <A, E>(
  input: Agent.Input,
  parent: RunContext,
  id: string,
  body: Effect.Effect<A, E>
): Effect.Effect<
  { readonly value: A; readonly note: string },
  E | Worktree.GitFailed | Worktree.WorktreeUnavailable
> =>
  input.isolation !== "worktree"
    ? Effect.map(body, (value) => ({ value, note: "" }))
    : Effect.gen(function* () {
        const context = yield* currentContext(parent.session)
        const current = yield* Ref.get(context)
        const tree = yield* Worktree.acquire(current.cwd, id)
        const own = yield* Ref.make({ ...current, cwd: tree.cwd })
        const value = yield* Effect.locally(body, contextOverride, Option.some(own))
        const kept = yield* tree.kept
        return {
          value,
          note: Option.match(kept, {
            onNone: () => "",
            onSome: (path) =>
              `\n\n[The agent ran in the git worktree ${path} (branch ${tree.branch}), kept because it changed files there.]`
          })
        }
      }).pipe(Effect.scoped)

/** Launches a sub-agent in the background, as a fiber of the run: the call returns its id at once. */
const launch = (
  parent: RunContext,
  definition: AgentDefinition.AgentDefinition,
  input: Agent.Input,
  ctx: ToolContextLike,
  run: (id: string) => Effect.Effect<{ readonly result: RunResult; readonly note: string }, Agent.SpawnFailure>
) =>
  Effect.gen(function* () {
    const id = `agent_${Crypto.randomBytes(4).toString("hex")}`
    const state = ctx.state
    const startedAt = yield* Clock.currentTimeMillis
    const registered = yield* Deferred.make<void>()
    const finish = (status: "completed" | "failed", result: string, totalTokens: number) =>
      Effect.gen(function* () {
        const stopped = yield* state.modify(BackgroundAgents.backgroundAgentsKey, (table) => {
          if (table.get(id)?.status === "killed") return [true, table] as const
          return [false, BackgroundAgents.update(table, id, (a) => ({ ...a, status, result }))] as const
        })
        if (stopped) return
        const durationMs = (yield* Clock.currentTimeMillis) - startedAt
        yield* Queue.offer(
          parent.notifications,
          BackgroundAgents.notificationText({
            id,
            toolUseId: ctx.toolUseId,
            description: input.description,
            status,
            result,
            totalTokens,
            durationMs
          })
        )
      })
    yield* Ref.update(parent.backgroundRunning, (n) => n + 1)
    const fiber = yield* Deferred.await(registered).pipe(
      Effect.zipRight(run(id)),
      Effect.matchEffect({
        onSuccess: ({ result, note }) =>
          finish(
            result.subtype === "success" ? "completed" : "failed",
            result.subtype === "success"
              ? `${result.result}${note}`
              : `The ${definition.name} agent did not finish (${result.subtype}): ${result.result}${note}`,
            result.usage.input_tokens + result.usage.output_tokens
          ),
        onFailure: (error) => finish("failed", error.message, 0)
      }),
      Effect.ensuring(Ref.update(parent.backgroundRunning, (n) => n - 1)),
      Effect.forkIn(parent.scope)
    )
    const agent: BackgroundAgents.BackgroundAgent = {
      id,
      description: input.description,
      agentType: definition.name,
      toolUseId: ctx.toolUseId,
      status: "running",
      result: undefined,
      read: false,
      stop: Effect.zipRight(
        state.modify(BackgroundAgents.backgroundAgentsKey, (table) => [
          undefined,
          BackgroundAgents.update(table, id, (a) => (a.status === "running" ? { ...a, status: "killed" } : a))
        ]),
        Fiber.interrupt(fiber)
      )
    }
    yield* state.modify(BackgroundAgents.backgroundAgentsKey, (table) => [undefined, new Map(table).set(id, agent)])
    yield* Deferred.succeed(registered, undefined)
    return BackgroundAgents.launchedText(id)
  })

type ToolContextLike = Parameters<Agent.Spawn>[2]

/**
 * The Agent tool's `spawn` for a run: the sub-agent's run, with the services the parent runs on. In the foreground
 * its final text is the result, and a sub-agent that ends otherwise (turn limit, API error, …) fails the call with
 * the reason; in the background the call returns the agent's id and the answer comes as a notification. A durable
 * run runs every agent in the foreground, so that its answer is stored as the call's result.
 */
const spawner =
  <R>(parent: RunContext, loop: Loop<R>, services: Context.Context<R>): Agent.Spawn =>
  (definition, input, ctx) =>
    Effect.gen(function* () {
      const child = runChild(parent, loop, services, definition, input, ctx.toolUseId)
      const durable = Option.isSome(yield* Effect.serviceOption(CallJournal))
      if (input.run_in_background === true && !durable) {
        return yield* launch(parent, definition, input, ctx, (id) =>
          Effect.map(isolated(input, parent, id, child), ({ value, note }) => ({ result: value, note }))
        )
      }
      const { value, note } = yield* isolated(
        input,
        parent,
        `agent_${Crypto.randomBytes(4).toString("hex")}`,
        Effect.flatMap(child, (result) => answerOf(definition, result))
      )
      const durableNote =
        input.run_in_background === true
          ? "\n\n[This agent ran in the foreground: in a durable run an agent's answer is stored as its call's result.]"
          : ""
      return `${value}${note}${durableNote}`
    })

const noTranscript = Transcript.of({ path: "", previous: [], append: () => Effect.void, sync: Effect.void })

/** The Agent tool of a run, when the run offers sub-agents. */
export const agentTool =
  <R>(loop: Loop<R>, services: Context.Context<R>) =>
  (run: RunContext, definitions: ReadonlyArray<AgentDefinition.AgentDefinition>) =>
    run.options.agents === undefined || definitions.length === 0
      ? Effect.succeed(undefined)
      : Effect.orDie(Agent.make(definitions, spawner(run, loop, services)))
