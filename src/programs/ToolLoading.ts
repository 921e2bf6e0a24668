/**
 * `run --tool-loading`: which deferred tools (WebFetch, MCP tools, …) the model gets in full from the first request,
 * using the loading strategies of `domain/DeferredTools` (see docs/cli.md). The choice is made once, before the
 * agent loop starts, by marking the chosen tools as discovered in the session; ToolSearch still loads the others.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Options } from "@effect/cli"
import { Effect } from "effect"
import * as DeferredTools from "../domain/DeferredTools.js"
import * as Tool from "../domain/Tool.js"
import { PermissionPolicy } from "../services/PermissionPolicy.js"
import { Session } from "../services/Session.js"
import { ToolRegistry } from "../services/ToolRegistry.js"
import { mcpReady } from "./Runtime.js"

/** The strategies `--tool-loading` offers. */
const toolLoadings = ["all", "deferred", "keyword", "recent"] as const

/** One of `toolLoadings`. */
export type ToolLoading = (typeof toolLoadings)[number]

/** The `--tool-loading` option. */
export const option = Options.choice("tool-loading", toolLoadings).pipe(
  Options.withDescription(
    "Deferred tools sent in full from the first request: all, none (deferred: ToolSearch loads them; the " +
      "default), those the prompt is about (keyword), or those used in recent sessions here (recent)"
  ),
  Options.withDefault("deferred" as const)
)

/** Transcripts read for `recent`, newest first; older sessions than these are not looked at. */
const recentSessions = 20

/** Turns of tool use kept for `recent` (the usage log's length). */
const usageTurns = 100

/** The tool names of one transcript line, when it is an assistant message (one turn). */
const toolUsesOfLine = (line: string): ReadonlyArray<string> | undefined => {
  try {
    const entry = JSON.parse(line) as { type?: unknown; message?: { content?: unknown } }
    if (entry.type !== "assistant" || !Array.isArray(entry.message?.content)) return undefined
    return (entry.message.content as ReadonlyArray<{ type?: unknown; name?: unknown }>).flatMap((block) =>
      block.type === "tool_use" && typeof block.name === "string" ? [block.name] : []
    )
  } catch {
    return undefined
  }
}

/**
 * The tool use of the latest sessions under `stateDir` (their transcripts), one entry per assistant message, oldest
 * first. Unreadable files and lines are skipped: this is a hint, never a reason to fail.
 */
export const usageOfTranscripts = (stateDir: string): DeferredTools.UsageLog => {
  const dir = Path.join(stateDir, "transcripts")
  let files: Array<{ readonly path: string; readonly mtime: number }>
  try {
    files = Fs.readdirSync(dir)
      .filter((name) => name.endsWith(".jsonl"))
      .map((name) => {
        const path = Path.join(dir, name)
        return { path, mtime: Fs.statSync(path).mtimeMs }
      })
  } catch {
    return []
  }
  const latest = files.sort((a, b) => b.mtime - a.mtime).slice(0, recentSessions)
  let usage: DeferredTools.UsageLog = []
  for (const file of latest.reverse()) {
    let text = ""
    try {
      text = Fs.readFileSync(file.path, "utf8")
    } catch {
      continue
    }
    for (const line of text.split("\n")) {
      const used = line.trim() === "" ? undefined : toolUsesOfLine(line)
      if (used !== undefined) usage = DeferredTools.recordUse(usage, used, usageTurns)
    }
  }
  return usage
}

/** The deferred tools of `pool` a strategy loads up front. */
export const chosen = (
  pool: ReadonlyArray<Tool.Any>,
  loading: ToolLoading,
  context: DeferredTools.LoadingContext
): ReadonlySet<string> => {
  switch (loading) {
    case "deferred":
      return new Set()
    case "all":
      return new Set(pool.filter(Tool.isDeferred).map((tool) => tool.name))
    case "keyword":
      return DeferredTools.initialLoad(pool, { _tag: "KeywordRelevance" }, context)
    case "recent":
      return DeferredTools.initialLoad(pool, { _tag: "Recency" }, context)
  }
}

/**
 * Marks the tools the strategy chooses as discovered in the session, so the agent loop sends them in full from its
 * first request. Waits for the MCP servers' first connection attempt so their tools can be chosen too.
 */
export const preload = (loading: ToolLoading, prompt: string) =>
  Effect.gen(function* () {
    if (loading === "deferred") return
    const session = yield* Session
    const registry = yield* ToolRegistry
    const policy = yield* PermissionPolicy
    yield* mcpReady
    const pool = yield* registry.pool({ isDenied: policy.isToolDenied })
    const usage = loading === "recent" ? usageOfTranscripts(session.stateDir) : []
    const names = chosen(pool, loading, { message: prompt, usage })
    if (names.size === 0) return
    yield* session.state.modify(DeferredTools.discoveredToolsKey, (old) => [undefined, new Set([...old, ...names])])
  })
