/**
 * ToolSearch's query language and scoring (docs/tools.md), as pure functions over the tools' names, hints and
 * descriptions: `select:A,B` picks exact names, anything else is keywords where `+term` is required.
 */
import * as Tool from "./Tool.js"

/** What the scorer reads of a tool. */
export interface Searchable {
  readonly name: string
  readonly description: string
  readonly searchHint?: string | undefined
  readonly isMcp: boolean
}

/** A parsed query: a list of exact names, or keyword terms. */
export type Query =
  | { readonly _tag: "Select"; readonly names: ReadonlyArray<string> }
  | {
      readonly _tag: "Keywords"
      /** The whole query, lowercased and trimmed, for the exact-name and `mcp__server` shortcuts. */
      readonly text: string
      readonly required: ReadonlyArray<string>
      readonly optional: ReadonlyArray<string>
    }

/** One tool found by a query; `score` is null for direct hits (select, exact name, server prefix). */
export interface Hit {
  readonly name: string
  readonly score: number | null
}

/** Points per term: where a term is found (name part, hint, description) decides its weight. */
export const weights = {
  exactPart: 10,
  exactPartMcp: 12,
  partSubstring: 5,
  partSubstringMcp: 6,
  nameContains: 3,
  searchHintWord: 4,
  descriptionWord: 2
} as const

/** The number of results a keyword query returns when `max_results` is not given. */
export const defaultMaxResults = 5

/** Parses a query: `select:A,B` (case-insensitive prefix) or whitespace-separated keywords. */
export const parse = (query: string): Query => {
  const trimmed = query.trim()
  const select = /^select:(.*)$/is.exec(trimmed)
  if (select !== null) {
    const names = select[1]
      .split(",")
      .map((name) => name.trim())
      .filter((name) => name.length > 0)
    return { _tag: "Select", names }
  }
  const required: Array<string> = []
  const optional: Array<string> = []
  for (const word of trimmed.toLowerCase().split(/\s+/)) {
    if (word.startsWith("+")) {
      if (word.length > 1) required.push(word.slice(1))
    } else if (word.length > 0) {
      optional.push(word)
    }
  }
  return { _tag: "Keywords", text: trimmed.toLowerCase(), required, optional }
}

/**
 * The lowercased parts of a tool name: split on `__` and `_` (and `-`), then on CamelCase boundaries; an MCP
 * tool's `mcp` prefix is dropped. `mcp__github__createIssue` → `github`, `create`, `issue`.
 */
export const nameParts = (name: string): ReadonlyArray<string> => {
  const body = name.toLowerCase().startsWith("mcp__") ? name.slice(5) : name
  return body
    .split(/__|_|-/)
    .flatMap((chunk) => chunk.split(/(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])/))
    .map((part) => part.toLowerCase())
    .filter((part) => part.length > 0)
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const hasWord = (text: string, term: string): boolean =>
  new RegExp(`(^|[^a-z0-9])${escapeRegExp(term)}($|[^a-z0-9])`).test(text.toLowerCase())

/** The points one (lowercased) term earns against a tool. */
export const scoreTerm = (tool: Searchable, term: string): number => {
  const parts = nameParts(tool.name)
  let score = 0
  if (parts.includes(term)) score += tool.isMcp ? weights.exactPartMcp : weights.exactPart
  else if (parts.some((part) => part.includes(term)))
    score += tool.isMcp ? weights.partSubstringMcp : weights.partSubstring
  else if (tool.name.toLowerCase().includes(term)) score += weights.nameContains
  if (tool.searchHint !== undefined && hasWord(tool.searchHint, term)) score += weights.searchHintWord
  if (hasWord(tool.description, term)) score += weights.descriptionWord
  return score
}

/** A tool's score for a list of terms; 0 when it misses a required term. */
export const score = (tool: Searchable, required: ReadonlyArray<string>, optional: ReadonlyArray<string>): number => {
  let total = 0
  for (const term of required) {
    const points = scoreTerm(tool, term)
    if (points === 0) return 0
    total += points
  }
  for (const term of optional) total += scoreTerm(tool, term)
  return total
}

/** Options of a search. */
export interface SearchOptions {
  /** The most results of a keyword query (default 5); `select:` is never limited. */
  readonly maxResults?: number | undefined
}

/**
 * Runs a query over candidate tools. `select:` returns every named tool found (in the order named, duplicates
 * dropped); an exact tool name or an `mcp__server` prefix returns those tools directly; otherwise tools are
 * ranked by score (ties by name) and the best `maxResults` with a positive score are returned.
 */
export const search = <T extends Searchable>(
  tools: ReadonlyArray<T>,
  query: Query | string,
  options: SearchOptions = {}
): ReadonlyArray<Hit> => {
  const parsed = typeof query === "string" ? parse(query) : query
  if (parsed._tag === "Select") {
    const seen = new Set<string>()
    const hits: Array<Hit> = []
    for (const wanted of parsed.names) {
      const tool = tools.find((t) => t.name.toLowerCase() === wanted.toLowerCase())
      if (tool !== undefined && !seen.has(tool.name)) {
        seen.add(tool.name)
        hits.push({ name: tool.name, score: null })
      }
    }
    return hits
  }
  const max = Math.max(0, Math.floor(options.maxResults ?? defaultMaxResults))
  const exact = tools.find((t) => t.name.toLowerCase() === parsed.text)
  if (exact !== undefined) return [{ name: exact.name, score: null }]
  if (/^mcp__[^\s_][^\s]*$/.test(parsed.text)) {
    const serverOnly = parsed.text.split("__").length === 2
    const prefix = serverOnly ? `${parsed.text}__` : parsed.text
    const direct = tools.filter((t) => t.name.toLowerCase().startsWith(prefix))
    if (direct.length > 0) return direct.slice(0, max).map((t) => ({ name: t.name, score: null }))
  }
  if (parsed.required.length === 0 && parsed.optional.length === 0) return []
  return tools
    .map((tool) => ({ name: tool.name, score: score(tool, parsed.required, parsed.optional) }))
    .filter((hit) => hit.score > 0)
    .sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .slice(0, max)
}

/** What the scorer reads of a registered tool. */
export const searchable = (tool: Tool.Any): Searchable => ({
  name: tool.name,
  description: tool.description,
  searchHint: tool.searchHint,
  isMcp: tool.source === "mcp"
})

/**
 * The engine ToolSearch and `armature tools search` share: keyword queries search the deferred tools of the
 * pool; `select:` may name any tool of the pool (selecting an already-loaded tool is harmless).
 */
export const searchPool = (
  pool: ReadonlyArray<Tool.Any>,
  query: string,
  options: SearchOptions = {}
): ReadonlyArray<Hit> => {
  const parsed = parse(query)
  const candidates = parsed._tag === "Select" ? pool : pool.filter(Tool.isDeferred)
  return search(candidates.map(searchable), parsed, options)
}
