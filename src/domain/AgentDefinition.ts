/**
 * Sub-agent definitions (docs/agents.md): a Markdown file whose YAML front matter names the agent (`name`,
 * `description`, optional `tools` and `model`) and whose body is the sub-agent's system prompt, as Claude Code reads
 * them from `.claude/agents/*.md` and `~/.claude/agents/*.md`. Parsing is pure; reading the files is the loader's.
 */
import * as FrontMatter from "./FrontMatter.js"

/** Where a definition comes from; a project definition overrides a user one of the same name. */
export type AgentSource = "builtin" | "user" | "project" | "options"

/** One sub-agent type. */
export interface AgentDefinition {
  readonly name: string
  readonly description: string
  /** The tool names the sub-agent gets; `undefined` means every tool but Agent. */
  readonly tools: ReadonlyArray<string> | undefined
  /** The model (`inherit` or absent: the parent's; `sonnet`, `opus`, `haiku`, or a full model name). */
  readonly model: string | undefined
  /** The sub-agent's system prompt. */
  readonly prompt: string
  readonly source: AgentSource
  /** The file it was read from, when it was. */
  readonly file?: string | undefined
}

/** A definition file that cannot be used, naming the file and the field (or line). */
export type DefinitionProblem = FrontMatter.Problem

/** The built-in agent every run offers, as Claude Code does. */
export const generalPurpose: AgentDefinition = {
  name: "general-purpose",
  description:
    "A general-purpose agent for researching complex questions, searching for code and carrying out multi-step " +
    "tasks. Use it when a search or a task would take several rounds of tool calls.",
  tools: undefined,
  model: undefined,
  prompt:
    "You are a sub-agent: you were given one task by another agent. Complete it with the tools you have, then " +
    "answer with a concise report of what you found or did; that report is all the other agent will see.",
  source: "builtin"
}

const namePattern = /^[a-zA-Z0-9][a-zA-Z0-9_-]*$/

/** `tools`: a comma-separated string or a list; `*` or absent means every tool but Agent. */
const toolsOf = (
  file: string,
  value: FrontMatter.Value | undefined
): ReadonlyArray<string> | undefined | DefinitionProblem => {
  if (value === undefined) return undefined
  const names = (typeof value === "string" ? value.split(",") : value).map((s) => s.trim()).filter((s) => s !== "")
  if (names.includes("*")) return undefined
  const bad = names.find((n) => !/^[A-Za-z_][\w-]*(\(.*\))?$/.test(n))
  if (bad !== undefined) return { file, field: "tools", message: `${JSON.stringify(bad)} is not a tool name` }
  return names
}

/**
 * Parses one definition file's text. The front matter must open the file (`---` lines around it) and give `name`
 * (letters, digits, `-`, `_`) and `description`; `tools` and `model` are optional; the body must not be empty.
 */
export const parse = (file: string, text: string, source: AgentSource): AgentDefinition | DefinitionProblem => {
  const split = FrontMatter.split(file, text)
  if (FrontMatter.isProblem(split)) return split
  const { fields, body } = split
  const name = FrontMatter.scalar(file, fields, "name")
  if (FrontMatter.isProblem(name)) return name
  if (name === undefined || name === "") return { file, field: "name", message: "missing" }
  if (!namePattern.test(name)) {
    return { file, field: "name", message: `${JSON.stringify(name)}: use letters, digits, "-" and "_"` }
  }
  const description = FrontMatter.scalar(file, fields, "description")
  if (FrontMatter.isProblem(description)) return description
  if (description === undefined || description.trim() === "") return { file, field: "description", message: "missing" }
  const tools = toolsOf(file, fields.get("tools"))
  if (FrontMatter.isProblem(tools)) return tools
  const model = FrontMatter.scalar(file, fields, "model")
  if (FrontMatter.isProblem(model)) return model
  const prompt = body.trim()
  if (prompt === "") return { file, field: "body", message: "empty: the body is the sub-agent's system prompt" }
  return {
    name,
    description: description.trim(),
    tools,
    model: model === undefined || model === "" || model === "inherit" ? undefined : model,
    prompt,
    source,
    file
  }
}

/** Whether a parse produced a problem. */
export const isDefinitionProblem = (u: AgentDefinition | DefinitionProblem): u is DefinitionProblem =>
  FrontMatter.isProblem(u)

/** The text of a problem: `file: field: message`. */
export const problemText = (p: DefinitionProblem): string => `${p.file}: ${p.field}: ${p.message}`

/**
 * Merges definitions by name, later lists overriding earlier ones (built-in, then user, then project, then the
 * library's own), sorted by name.
 */
export const merge = (...lists: ReadonlyArray<ReadonlyArray<AgentDefinition>>): ReadonlyArray<AgentDefinition> => {
  const byName = new Map<string, AgentDefinition>()
  for (const list of lists) for (const d of list) byName.set(d.name, d)
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name))
}

/** Claude Code's model aliases, as full model names. */
export const modelAliases: Readonly<Record<string, string>> = {
  sonnet: "claude-sonnet-4-5",
  opus: "claude-opus-4-5",
  haiku: "claude-haiku-4-5"
}

/** The model a sub-agent runs with: its own (an alias resolved), else the parent's. */
export const modelOf = (definition: AgentDefinition, parentModel: string): string =>
  definition.model === undefined ? parentModel : (modelAliases[definition.model] ?? definition.model)

/**
 * Whether a sub-agent of this definition may use a tool: its declared tools (a `Name(...)` entry allows the tool
 * named), else every tool; `Agent` only when nesting is allowed at this depth.
 */
export const allowsTool = (definition: AgentDefinition, tool: string, nestingAllowed: boolean): boolean => {
  if (tool === "Agent") return nestingAllowed && (definition.tools?.some((t) => t.split("(")[0] === "Agent") ?? true)
  return definition.tools === undefined || definition.tools.some((t) => t.split("(")[0] === tool)
}
