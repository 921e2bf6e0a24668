/**
 * How the Agent tool runs a sub-agent: the same agent loop, nested — its own message history (the Agent call's
 * prompt is its first message), its definition's system prompt and tools, the parent's permission policy, settings,
 * hooks (SubagentStop instead of Stop) and approver. Its events go to the parent's stream with `parent_tool_use_id`,
 * its transcript is a side chain of the parent's (`<session>/agents/<Agent call id>.jsonl` next to it), and its
 * usage and cost are added to the parent's. See docs/agents.md.
 */
import * as Path from "node:path"
import { FileSystem } from "@effect/platform"
import { type Context, Effect, Option, Ref } from "effect"
import * as AgentDefinition from "../../domain/AgentDefinition.js"
import { ToolFailure } from "../../domain/Errors.js"
import { addUsage } from "../../services/LanguageModel.js"
import { Transcript } from "../../services/Transcript.js"
import * as Agent from "../tools/Agent.js"
import type { RunError, RunOptions, RunResult } from "./AgentEvent.js"
import type { RunContext } from "./RunContext.js"
import * as TranscriptLive from "./TranscriptLive.js"

/** The side chain of a sub-agent: next to the parent's transcript, in a folder named after the session. */
export const sideChainPath = (parentTranscript: string, sessionId: string, toolUseId: string): string =>
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

/** The options of a sub-agent's run, from its parent's. */
const childOptions = (
  parent: RunContext,
  definition: AgentDefinition.AgentDefinition,
  input: Agent.Input,
  toolUseId: string
): RunOptions => ({
  prompt: input.prompt,
  model: AgentDefinition.modelOf(definition, parent.modelName),
  maxTurns: parent.options.agents?.maxTurns ?? parent.maxTurns,
  maxTokens: parent.maxTokens,
  execution: parent.execution,
  retry: parent.options.retry,
  assistantEvents: parent.options.assistantEvents,
  agents: parent.options.agents,
  compaction: parent.options.compaction,
  // the child's own start and result lines stay in its side chain; the result is the Agent call's
  onEvent: (event) =>
    event.type === "result" || (event.type === "system" && event.subtype === "init")
      ? Effect.void
      : parent.onEvent({ ...event, parent_tool_use_id: event.parent_tool_use_id ?? toolUseId }),
  onExecutorEvent: parent.onExecutorEvent,
  subagent: { definition, parentToolUseId: toolUseId, depth: (parent.options.subagent?.depth ?? 0) + 1 }
})

/**
 * The Agent tool's `spawn` for a run: the sub-agent's run, with the services the parent runs on. Its final text is
 * the result; a sub-agent that ends otherwise (turn limit, API error, …) fails the call with the reason.
 */
export const spawner =
  <R>(parent: RunContext, loop: Loop<R>, services: Context.Context<R>): Agent.Spawn =>
  (definition, input, ctx) =>
    Effect.gen(function* () {
      const transcript = yield* sideChain(parent, ctx.toolUseId)
      const result = yield* loop(childOptions(parent, definition, input, ctx.toolUseId)).pipe(
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
      if (result.subtype === "success") return result.result
      return yield* new ToolFailure({
        message: `The ${definition.name} agent did not finish (${result.subtype}): ${result.result}`
      })
    }).pipe(
      Effect.scoped,
      Effect.catchAll((error) =>
        error._tag === "ToolFailure" ? Effect.fail(error) : Effect.fail(new ToolFailure({ message: error.message }))
      )
    )

const noTranscript = Transcript.of({ path: "", previous: [], append: () => Effect.void, sync: Effect.void })

/** The Agent tool of a run, when the run offers sub-agents. */
export const agentTool =
  <R>(loop: Loop<R>, services: Context.Context<R>) =>
  (run: RunContext) =>
    run.options.agents === undefined || run.options.agents.definitions.length === 0
      ? Effect.succeed(undefined)
      : Effect.orDie(Agent.make(run.options.agents.definitions, spawner(run, loop, services)))
