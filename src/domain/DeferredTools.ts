/**
 * Deferred discovery around ToolSearch (docs/tools.md): the session-state keys the tool, the registry and the
 * agent loop share, the `<available-deferred-tools>` listing for the system prompt, and the three strategies that
 * choose which deferred tools are loaded up front.
 */
import * as Tool from "./Tool.js"
import * as ToolSearchQuery from "./ToolSearchQuery.js"

/** Names of the deferred tools the model has discovered; their full schemas are sent from the next turn on. */
export const discoveredToolsKey = Tool.stateKey<ReadonlySet<string>>("armature/discovered-tools", new Set())

/** MCP servers still connecting; while non-empty, ToolSearch tells the model their tools may appear later. */
export const pendingMcpServersKey = Tool.stateKey<ReadonlyArray<string>>("armature/pending-mcp-servers", [])

/** True when the tool's full schema should be sent: it is not deferred, or it has been discovered. */
export const isLoaded = (tool: Tool.Any, discovered: ReadonlySet<string>): boolean =>
  !Tool.isDeferred(tool) || discovered.has(tool.name)

/**
 * The system-prompt block naming the deferred tools not yet discovered, one per line, in pool order; the empty
 * string when there are none.
 */
export const deferredListing = (
  tools: ReadonlyArray<Tool.Any>,
  discovered: ReadonlySet<string> = new Set()
): string => {
  const names = tools.filter((t) => Tool.isDeferred(t) && !discovered.has(t.name)).map((t) => t.name)
  return names.length === 0 ? "" : `<available-deferred-tools>\n${names.join("\n")}\n</available-deferred-tools>`
}

/** Strategy A: a core group always loaded, plus the most recently used tools of an extended group. */
export interface StaticGroups {
  readonly _tag: "StaticGroups"
  readonly core: ReadonlyArray<string>
  readonly extended: ReadonlyArray<string>
  /** How many recently used extended tools to add (default 5). */
  readonly recentExtended?: number | undefined
}

/** Strategy B: the deferred tools most relevant to the user's message, scored like ToolSearch keywords. */
export interface KeywordRelevance {
  readonly _tag: "KeywordRelevance"
  /** The most tools to load (default 5). */
  readonly maxTools?: number | undefined
  /** Extra tools to load when the message mentions a keyword, e.g. `{ deploy: ["mcp__docker__run"] }`. */
  readonly groups?: Readonly<Record<string, ReadonlyArray<string>>> | undefined
}

/** Strategy C: tools used often are resident; tools unused for `window` turns wait for ToolSearch (LRU). */
export interface Recency {
  readonly _tag: "Recency"
  /** Turns a tool stays loaded after its last use (default 10). */
  readonly window?: number | undefined
  /** Uses within the usage log that make a tool resident regardless of recency (default 5). */
  readonly frequentUses?: number | undefined
}

/** A selectable initial-pool loading strategy. */
export type LoadingStrategy = StaticGroups | KeywordRelevance | Recency

/** The tool names used in each past turn, oldest first. */
export type UsageLog = ReadonlyArray<ReadonlyArray<string>>

/** What the strategies look at besides the pool. */
export interface LoadingContext {
  /** The user's message of this turn (for keyword relevance). */
  readonly message?: string | undefined
  /** Past tool use (for static groups and recency). */
  readonly usage?: UsageLog | undefined
}

/** Appends one turn's tool use to the log, keeping the last `limit` turns (default 100). */
export const recordUse = (log: UsageLog, used: ReadonlyArray<string>, limit = 100): UsageLog =>
  [...log, [...new Set(used)]].slice(-Math.max(1, limit))

/** Tool names by recency of last use, most recent first. */
const byRecency = (usage: UsageLog): ReadonlyArray<string> => {
  const seen = new Set<string>()
  for (let turn = usage.length - 1; turn >= 0; turn--) for (const name of usage[turn]) seen.add(name)
  return [...seen]
}

const stopWords = new Set(
  "the and for this that with you your please can could would should are was were its from into then them have has not but all any out our use using what when where which who how why will just some".split(
    " "
  )
)

const words = (message: string): ReadonlyArray<string> =>
  [...new Set(message.toLowerCase().match(/[a-z0-9][a-z0-9_-]*/g) ?? [])].filter(
    (w) => w.length >= 3 && !stopWords.has(w)
  )

/**
 * Chooses which deferred tools of the pool to load in full before any ToolSearch call, in pool order. Tools
 * that are not deferred are always sent and never part of the answer.
 */
export const initialLoad = (
  pool: ReadonlyArray<Tool.Any>,
  strategy: LoadingStrategy,
  context: LoadingContext = {}
): ReadonlySet<string> => {
  const deferred = pool.filter(Tool.isDeferred)
  const names = new Set(deferred.map((t) => t.name))
  const chosen = new Set<string>()
  const usage = context.usage ?? []
  switch (strategy._tag) {
    case "StaticGroups": {
      for (const name of strategy.core) chosen.add(name)
      const extended = new Set(strategy.extended)
      const recent = byRecency(usage).filter((name) => extended.has(name))
      for (const name of recent.slice(0, strategy.recentExtended ?? 5)) chosen.add(name)
      break
    }
    case "KeywordRelevance": {
      const terms = words(context.message ?? "")
      const hits = ToolSearchQuery.search(
        deferred.map(ToolSearchQuery.searchable),
        {
          _tag: "Keywords",
          text: "",
          required: [],
          optional: terms
        },
        { maxResults: strategy.maxTools ?? 5 }
      )
      for (const hit of hits) chosen.add(hit.name)
      for (const [keyword, group] of Object.entries(strategy.groups ?? {})) {
        if (terms.includes(keyword.toLowerCase())) for (const name of group) chosen.add(name)
      }
      break
    }
    case "Recency": {
      const window = strategy.window ?? 10
      for (const turn of usage.slice(-window)) for (const name of turn) chosen.add(name)
      const counts = new Map<string, number>()
      for (const turn of usage) for (const name of turn) counts.set(name, (counts.get(name) ?? 0) + 1)
      for (const [name, count] of counts) if (count >= (strategy.frequentUses ?? 5)) chosen.add(name)
      break
    }
  }
  return new Set(deferred.map((t) => t.name).filter((name) => names.has(name) && chosen.has(name)))
}
