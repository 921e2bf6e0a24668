/**
 * The in-memory ResultCache: an allow-list of tools, entries keyed by tool name and stable JSON of the input,
 * bounded in size (least recently used first out) and optionally in age, invalidated by overlapping writes. An
 * entry whose call declared no read resources is dropped by any write (it might have read anything).
 */
import { Clock, Duration, Effect, Layer, Option, Ref } from "effect"
import type { ToolResultContent } from "../../domain/Blocks.js"
import * as Resources from "../../domain/Resources.js"
import * as Tool from "../../domain/Tool.js"
import { ResultCache } from "../../services/ResultCache.js"

/** Options of the cache. */
export interface Options {
  /** The tools whose results may be cached, e.g. `["Read", "Glob", "Grep"]`. No others are. */
  readonly tools: ReadonlyArray<string>
  /** The most entries kept (default 256); the least recently used goes first. */
  readonly maxEntries?: number | undefined
  /** How long an entry stays valid (default: until invalidated or evicted). */
  readonly ttl?: Duration.DurationInput | undefined
}

interface Entry {
  readonly content: ToolResultContent
  readonly reads: ReadonlyArray<string>
  readonly storedAt: number
}

/** JSON with object keys sorted at every level, so equal inputs give equal keys whatever their key order. */
export const stableJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : stableJson(v))).join(",")}]`
  if (typeof value === "object" && value !== null) {
    const fields = Object.keys(value)
      .sort()
      .flatMap((key) => {
        const v = (value as Record<string, unknown>)[key]
        return v === undefined ? [] : [`${JSON.stringify(key)}:${stableJson(v)}`]
      })
    return `{${fields.join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

/** The cache key of a call. */
export const cacheKey = (toolName: string, input: unknown): string => `${toolName}\u0000${stableJson(input)}`

/** True when two resource keys overlap (the shared definition in `domain/Resources`). */
export const overlaps = Resources.overlaps

/** Builds the cache. */
export const make = (options: Options) =>
  Effect.gen(function* () {
    const allowed = new Set(options.tools)
    const maxEntries = Math.max(1, options.maxEntries ?? 256)
    const ttlMs = options.ttl === undefined ? undefined : Duration.toMillis(Duration.decode(options.ttl))
    const entries = yield* Ref.make<ReadonlyMap<string, Entry>>(new Map())

    const cacheable = (tool: Tool.Any, input: unknown): boolean =>
      allowed.has(tool.name) && Tool.safely(tool.isReadOnly, input)

    const lookup = (tool: Tool.Any, input: unknown) =>
      Effect.gen(function* () {
        if (!cacheable(tool, input)) return Option.none<ToolResultContent>()
        const now = yield* Clock.currentTimeMillis
        const key = cacheKey(tool.name, input)
        return yield* Ref.modify(
          entries,
          (current): readonly [Option.Option<ToolResultContent>, ReadonlyMap<string, Entry>] => {
            const entry = current.get(key)
            if (entry === undefined) return [Option.none(), current]
            const next = new Map(current)
            next.delete(key)
            if (ttlMs !== undefined && now - entry.storedAt >= ttlMs) return [Option.none(), next]
            next.set(key, entry)
            return [Option.some(entry.content), next]
          }
        )
      })

    const store = (
      tool: Tool.Any,
      input: unknown,
      content: ToolResultContent,
      resources: ReadonlyArray<Tool.Resource>
    ) =>
      Effect.gen(function* () {
        if (!cacheable(tool, input)) return
        const now = yield* Clock.currentTimeMillis
        const key = cacheKey(tool.name, input)
        const reads = resources.filter((r) => r.access === "read").map((r) => r.key)
        yield* Ref.update(entries, (current) => {
          const next = new Map(current)
          next.delete(key)
          next.set(key, { content, reads, storedAt: now })
          while (next.size > maxEntries) next.delete(next.keys().next().value as string)
          return next
        })
      })

    const invalidate = (resources: ReadonlyArray<Tool.Resource>) => {
      const writes = resources.filter((r) => r.access === "write").map((r) => r.key)
      return Ref.update(entries, (current) =>
        writes.length === 0
          ? new Map()
          : new Map(
              [...current].filter(
                ([, entry]) =>
                  entry.reads.length > 0 && !entry.reads.some((read) => writes.some((w) => overlaps(read, w)))
              )
            )
      )
    }

    return ResultCache.of({ lookup, store, invalidate })
  })

/** The cache as a layer, for the tools named in `options.tools`. */
export const layer = (options: Options) => Layer.effect(ResultCache, make(options))
