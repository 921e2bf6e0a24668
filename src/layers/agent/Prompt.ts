/**
 * What the agent loop sends the model besides the messages: the system prompt and the tools array, and the two
 * readings of an assistant message the loop needs (its text, its tool calls).
 */
import type { ToolUse } from "../../domain/Blocks.js"
import * as DeferredTools from "../../domain/DeferredTools.js"
import * as Tool from "../../domain/Tool.js"
import type { AssistantContent, RequestTool } from "../../services/LanguageModel.js"

/** The fixed part of the system prompt. */
export const baseSystemPrompt = `You are an agent that completes the user's task by calling the tools you are given. Call tools when they \
help; independent read-only calls may be made together in one message and run in parallel. When the task is done, \
answer with a short summary of what you did. If a tool result tells you to stop and wait for the user, stop.`

/** The system prompt: the fixed text, the environment, the deferred-tool listing and any hook context. */
export const systemPrompt = (options: {
  readonly cwd: string
  readonly pool: ReadonlyArray<Tool.Any>
  readonly discovered: ReadonlySet<string>
  readonly context: ReadonlyArray<string>
  readonly append?: string | undefined
  /** Replaces the fixed text (a sub-agent's system prompt). */
  readonly base?: string | undefined
}): string => {
  const listing = DeferredTools.deferredListing(options.pool, options.discovered)
  return [
    options.base ?? baseSystemPrompt,
    `<env>\nWorking directory: ${options.cwd}\nPlatform: ${process.platform}\n</env>`,
    listing === ""
      ? ""
      : `Some tools are deferred: only their names are listed below. Call ToolSearch with query "select:Name" to \
load one before calling it.\n${listing}`,
    ...options.context,
    options.append ?? ""
  ]
    .filter((s) => s.trim() !== "")
    .join("\n\n")
}

/** The tools array of a request: loaded tools in pool order, the last one a prompt-cache breakpoint. */
export const requestTools = (pool: ReadonlyArray<Tool.Any>, discovered: ReadonlySet<string>): Array<RequestTool> => {
  const tools: Array<RequestTool> = pool
    .filter((tool) => DeferredTools.isLoaded(tool, discovered))
    .map(Tool.toApiDefinition)
  if (tools.length > 0) tools[tools.length - 1] = { ...tools[tools.length - 1], cache_control: { type: "ephemeral" } }
  return tools
}

/** The text of an assistant message. */
export const textOf = (content: ReadonlyArray<AssistantContent>): string =>
  content.flatMap((b) => (b.type === "text" && "text" in b ? [String(b.text)] : [])).join("")

/** The tool calls of an assistant message, in message order. */
export const toolUsesOf = (content: ReadonlyArray<AssistantContent>): ReadonlyArray<ToolUse> =>
  content.flatMap((b) => (b.type === "tool_use" ? [b as ToolUse] : []))
