/**
 * What a call acts on, as far as permission rules are concerned: a Bash command, file paths, a URL, a name (a skill), or nothing.
 */
import { resourcesOf } from "../../domain/Resources.js"
import type * as Tool from "../../domain/Tool.js"

/** What a call acts on, as far as rules are concerned. */
export type Target =
  | { readonly _tag: "Command"; readonly command: string }
  | { readonly _tag: "Paths"; readonly paths: ReadonlyArray<string> }
  | { readonly _tag: "Url"; readonly url: string }
  | { readonly _tag: "Name"; readonly name: string }
  | { readonly _tag: "None" }

const stringField = (input: unknown, key: string): string | undefined => {
  if (typeof input !== "object" || input === null) return undefined
  const value = (input as Record<string, unknown>)[key]
  return typeof value === "string" ? value : undefined
}

const looksLikePath = (key: string): boolean =>
  key.startsWith("/") || key.startsWith("./") || key.startsWith("../") || key === "~" || key.startsWith("~/")

/**
 * The target of a call: Bash's `command`, the `file_path` of Read/Write/Edit, the `path` of Glob/Grep (default: the
 * working directory), WebFetch's `url`, the name of a Skill; for other tools, the path-like keys of `tool.resources(input)`.
 */
export const targetOf = (tool: Tool.Any, input: unknown): Target => {
  switch (tool.name) {
    case "Bash":
      return { _tag: "Command", command: stringField(input, "command") ?? "" }
    case "Read":
    case "Write":
    case "Edit":
    case "MultiEdit":
      return { _tag: "Paths", paths: [stringField(input, "file_path") ?? ""] }
    case "NotebookEdit":
      return { _tag: "Paths", paths: [stringField(input, "notebook_path") ?? ""] }
    case "Glob":
    case "Grep":
    case "LS":
      return { _tag: "Paths", paths: [stringField(input, "path") ?? "."] }
    case "WebFetch":
      return { _tag: "Url", url: stringField(input, "url") ?? "" }
    case "Skill":
      return { _tag: "Name", name: (stringField(input, "skill") ?? "").trim().replace(/^\//, "") }
  }
  const keys = resourcesOf(tool, input)
    .map((r) => r.key)
    .filter(looksLikePath)
  return keys.length > 0 ? { _tag: "Paths", paths: keys } : { _tag: "None" }
}
