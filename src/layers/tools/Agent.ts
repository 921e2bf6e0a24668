/**
 * Agent: hands a task to a sub-agent, a nested agent loop with its own history, system prompt and tool pool, and
 * returns its final text (Claude Code's `Agent` tool, input `{description, prompt, subagent_type, model,
 * run_in_background, isolation}`); in the background, it returns a launch notice and the answer comes later. The tool is made
 * by the agent loop, which knows how to run the sub-agent (`spawn`); the sub-agent types it offers are listed in its
 * description. See docs/agents.md.
 */
import { Effect, Schema } from "effect"
import * as AgentDefinition from "../../domain/AgentDefinition.js"
import { ToolValidationError } from "../../domain/Errors.js"
import * as Tool from "../../domain/Tool.js"
import * as Worktree from "../agent/Worktree.js"

/** The tool's name. */
export const name = "Agent"

/** The model aliases a call may pick. */
const ModelAlias = Schema.Literal("sonnet", "opus", "haiku")

/** The input, Claude Code's. */
export const Input = Schema.Struct({
  description: Schema.String.annotations({ description: "A short (3-5 word) description of the task" }),
  prompt: Schema.String.annotations({ description: "The task for the agent to perform" }),
  subagent_type: Schema.optional(
    Schema.String.annotations({
      description: `The type of specialized agent to use for this task (default: ${AgentDefinition.generalPurpose.name})`
    })
  ),
  model: Schema.optional(
    ModelAlias.annotations({
      description:
        "Optional model for this agent, over the agent type's own; when neither gives one, the agent runs on your model."
    })
  ),
  run_in_background: Schema.optional(
    Schema.Boolean.annotations({
      description:
        "Set to true to run the agent in the background: the call returns at once and you are notified when it completes."
    })
  ),
  isolation: Schema.optional(
    Schema.Literal("worktree").annotations({
      description:
        '"worktree" runs the agent in a temporary git worktree of the repository, an isolated copy it may change freely.'
    })
  )
})

/** The agent type a call asks for (the general-purpose agent when it names none). */
const typeOf = (input: { readonly subagent_type?: string | undefined }): string =>
  input.subagent_type ?? AgentDefinition.generalPurpose.name

/** The decoded input. */
export type Input = typeof Input.Type

/** No sub-agent type of this name is offered. */
export class UnknownAgentType extends Schema.TaggedError<UnknownAgentType>()("UnknownAgentType", {
  message: Schema.String,
  agentType: Schema.String
}) {}

/** The sub-agent ran but ended without an answer (`subtype`: the turn limit, an API error, …). */
export class AgentDidNotFinish extends Schema.TaggedError<AgentDidNotFinish>()("AgentDidNotFinish", {
  message: Schema.String,
  agentType: Schema.String,
  subtype: Schema.String
}) {}

/** The sub-agent's run failed before it could end (its model, its transcript or its input failed). */
export class AgentRunFailed extends Schema.TaggedError<AgentRunFailed>()("AgentRunFailed", {
  message: Schema.String,
  agentType: Schema.String
}) {}

/** What running a sub-agent fails with: its run, its ending, or its worktree. */
export type SpawnFailure = AgentDidNotFinish | AgentRunFailed | Worktree.GitFailed | Worktree.WorktreeUnavailable

/** What Agent fails with. None is transient: a retry policy does not start a sub-agent twice. */
export const Failure = Schema.Union(
  UnknownAgentType,
  AgentDidNotFinish,
  AgentRunFailed,
  Worktree.GitFailed,
  Worktree.WorktreeUnavailable
)

/** Runs one sub-agent to its end and returns its final text (or fails with the reason it could not finish). */
export type Spawn = (
  definition: AgentDefinition.AgentDefinition,
  input: Input,
  ctx: Tool.ToolContext
) => Effect.Effect<string, SpawnFailure>

/** The tool's description: what it does, how to use it, and the agents available. */
export const describe = (definitions: ReadonlyArray<AgentDefinition.AgentDefinition>): string => {
  const listing = definitions
    .map((d) => `- ${d.name}: ${d.description} (Tools: ${d.tools === undefined ? "*" : d.tools.join(", ")})`)
    .join("\n")
  return `Launches a sub-agent to handle a task on its own: it runs with its own conversation and its own tools, \
and its final message comes back to you as this tool's result.

Available agent types and the tools they have:
${listing}

Give subagent_type to choose one (default: ${AgentDefinition.generalPurpose.name}). Usage notes:
- Launch several agents at once when the tasks are independent: put several Agent calls in one message and they \
run concurrently.
- The agent sees only the prompt you give it, not this conversation: say exactly what to do and what to report.
- Its result is not shown to the user: summarize what matters in your own answer.
- Each call starts a fresh agent; it cannot be sent further messages.
- run_in_background: true returns at once with the agent's id; keep working, and its answer comes to you later in a \
<task-notification> block. BashOutput with that id shows whether it is still running; KillShell with it stops it.
- isolation: "worktree" gives the agent its own git worktree (a temporary checkout): its edits do not touch yours. \
The worktree is removed when the agent leaves it unchanged; otherwise its path is in the result.
- model: "sonnet", "opus" or "haiku" runs the agent on that model.`
}

/** Makes the Agent tool over the given definitions. */
export const make = (definitions: ReadonlyArray<AgentDefinition.AgentDefinition>, spawn: Spawn) =>
  Tool.make({
    name,
    description: describe(definitions),
    input: Input,
    output: Schema.String,
    category: "agent",
    searchHint: "sub-agent delegate task parallel research",
    // a sub-agent's own calls go through the permission pipeline; the launch itself changes nothing
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    interruptBehavior: "cancel",
    validate: (input) =>
      definitions.some((d) => d.name === typeOf(input))
        ? Effect.void
        : Effect.fail(
            new ToolValidationError({
              message: `Agent type '${typeOf(input)}' not found. Available agents: ${definitions.map((d) => d.name).join(", ")}`
            })
          ),
    checkPermissions: () =>
      Effect.succeed({
        behavior: "allow",
        reason: "a sub-agent's own tool calls are checked as they are made"
      } as const),
    summarize: (input) => `${typeOf(input)}: ${input.description}`,
    failure: Failure,
    call: (input, ctx): Effect.Effect<string, UnknownAgentType | SpawnFailure> => {
      const definition = definitions.find((d) => d.name === typeOf(input))
      return definition === undefined
        ? Effect.fail(
            new UnknownAgentType({ agentType: typeOf(input), message: `Agent type '${typeOf(input)}' not found` })
          )
        : spawn(definition, input, ctx)
    }
  })
