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
 * Where each alternative of a Glob pattern walks (braces expanded first: `{/etc,src}/*` walks /etc and src). A `..`
 * after a wildcard (`*\/../../x`) may climb anywhere: the walk counts as starting at `/`.
 */
export const globRoots = (pattern: string): ReadonlyArray<string> => {
  const roots = new Set<string>()
  for (const alternative of expandBraces(pattern, 64)) {
    const segments = alternative.split("/")
    const wild = segments.findIndex((s) => /[*?[\]{}()!+@]/.test(s) || s.includes("\\"))
    if (wild !== -1 && segments.slice(wild).includes("..")) {
      roots.add("/")
      continue
    }
    const root = globRoot(alternative)
    if (root !== undefined) roots.add(root)
  }
  return [...roots]
}

/** Bash-like brace expansion of a Glob pattern, at most `limit` alternatives (past it, the pattern as written). */
const expandBraces = (pattern: string, limit: number): ReadonlyArray<string> => {
  const open = pattern.indexOf("{")
  if (open === -1) return [pattern]
  let depth = 0
  const commas: Array<number> = []
  let close = -1
  for (let i = open; i < pattern.length; i++) {
    const c = pattern[i]
    if (c === "\\") {
      i++
      continue
    }
    if (c === "{") depth++
    else if (c === "}" && --depth === 0) {
      close = i
      break
    } else if (c === "," && depth === 1) commas.push(i)
  }
  if (close === -1 || commas.length === 0) return [pattern]
  const head = pattern.slice(0, open)
  const tail = pattern.slice(close + 1)
  const parts = [open, ...commas].map((at, k) => pattern.slice(at + 1, k < commas.length ? commas[k] : close))
  const out: Array<string> = []
  for (const part of parts) {
    for (const expanded of expandBraces(`${head}${part}${tail}`, limit)) {
      out.push(expanded)
      if (out.length > limit) return ["/"]
    }
  }
  return out
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
      const roots = globRoots(stringField(input, "pattern") ?? "")
      return {
        _tag: "Paths",
        paths: [dir, ...roots.map((root) => (Path.isAbsolute(root) || dir === "." ? root : Path.join(dir, root)))]
      }
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
