/**
 * What a call acts on, as far as permission rules are concerned: a Bash command, file paths, a URL, a name (a skill), or nothing.
 */
import * as Path from "node:path"
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

/**
 * The directory a glob pattern starts from when it is not the searched directory itself: its literal leading
 * segments (`/etc/*` → `/etc`, `../*` → `..`, `src/**` → `src`); undefined when the pattern starts with a wildcard. A
 * `~` is not expanded by Glob, so it is a directory named `~` like any other.
 */
export const globRoot = (pattern: string): string | undefined => {
  const segments = pattern.split("/")
  const literal: Array<string> = []
  for (const segment of segments.slice(0, -1)) {
    if (/[*?[\]{}()!+@]/.test(segment) || segment.includes("\\")) break
    literal.push(segment)
  }
  if (literal.length === 0) return undefined
  const root = literal.join("/")
  return root === "" ? "/" : root
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
    case "Glob": {
      // The pattern's literal leading directories are where Glob walks: `/etc/*` lists /etc, `../*` the parent.
      const dir = stringField(input, "path") ?? "."
      const root = globRoot(stringField(input, "pattern") ?? "")
      if (root === undefined) return { _tag: "Paths", paths: [dir] }
      return { _tag: "Paths", paths: [dir, Path.isAbsolute(root) || dir === "." ? root : Path.join(dir, root)] }
    }
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
