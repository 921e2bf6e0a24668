/**
 * Agent: hands a task to a sub-agent, a nested agent loop with its own history, system prompt and tool pool, and
 * returns its final text (Claude Code's `Agent` tool, input `{description, prompt, subagent_type}`). The tool is made
 * by the agent loop, which knows how to run the sub-agent (`spawn`); the sub-agent types it offers are listed in its
 * description. See docs/agents.md.
 */
import { Effect, Schema } from "effect"
import type { AgentDefinition } from "../../domain/AgentDefinition.js"
import { ToolFailure, ToolValidationError } from "../../domain/Errors.js"
import * as Tool from "../../domain/Tool.js"

/** The tool's name. */
export const name = "Agent"

/** The input, Claude Code's. */
export const Input = Schema.Struct({
  description: Schema.String.annotations({ description: "A short (3-5 word) description of the task" }),
  prompt: Schema.String.annotations({ description: "The task for the agent to perform" }),
  subagent_type: Schema.String.annotations({ description: "The type of specialized agent to use for this task" })
})

/** The decoded input. */
export type Input = typeof Input.Type

/** Runs one sub-agent to its end and returns its final text (or fails with the reason it could not finish). */
export type Spawn = (
  definition: AgentDefinition,
  input: Input,
  ctx: Tool.ToolContext
) => Effect.Effect<string, ToolFailure>

/** The tool's description: what it does, how to use it, and the agents available. */
export const describe = (definitions: ReadonlyArray<AgentDefinition>): string => {
  const listing = definitions
    .map((d) => `- ${d.name}: ${d.description} (Tools: ${d.tools === undefined ? "*" : d.tools.join(", ")})`)
    .join("\n")
  return `Launches a sub-agent to handle a task on its own: it runs with its own conversation and its own tools, \
and its final message comes back to you as this tool's result.

Available agent types and the tools they have:
${listing}

Give subagent_type to choose one. Usage notes:
- Launch several agents at once when the tasks are independent: put several Agent calls in one message and they \
run concurrently.
- The agent sees only the prompt you give it, not this conversation: say exactly what to do and what to report.
- Its result is not shown to the user: summarize what matters in your own answer.
- Each call starts a fresh agent; it cannot be sent further messages.`
}

/** Makes the Agent tool over the given definitions. */
export const make = (definitions: ReadonlyArray<AgentDefinition>, spawn: Spawn) =>
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
      definitions.some((d) => d.name === input.subagent_type)
        ? Effect.void
        : Effect.fail(
            new ToolValidationError({
              message: `Agent type '${input.subagent_type}' not found. Available agents: ${definitions.map((d) => d.name).join(", ")}`
            })
          ),
    checkPermissions: () =>
      Effect.succeed({
        behavior: "allow",
        reason: "a sub-agent's own tool calls are checked as they are made"
      } as const),
    summarize: (input) => `${input.subagent_type}: ${input.description}`,
    call: (input, ctx) => {
      const definition = definitions.find((d) => d.name === input.subagent_type)
      return definition === undefined
        ? Effect.fail(new ToolFailure({ message: `Agent type '${input.subagent_type}' not found` }))
        : spawn(definition, input, ctx)
    }
  })
