/**
 * The opt-in result cache (issue 5 item 6): results of read-only calls of allow-listed tools, keyed by tool name
 * and the stable JSON of the input, dropped when a later call writes a resource they read.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { ToolResultContent } from "../domain/Blocks.js"
import type * as Tool from "../domain/Tool.js"

/** The port. The executor looks a call up before running it, stores its result, and invalidates on writes. */
export class ResultCache extends Context.Tag("armature/ResultCache")<
  ResultCache,
  {
    /** The cached content of an earlier identical read-only call of a cached tool, if any. */
    readonly lookup: (tool: Tool.Any, input: unknown) => Effect.Effect<Option.Option<ToolResultContent>>
    /** Remembers a successful result; ignored unless the tool is cached and the call read-only. */
    readonly store: (
      tool: Tool.Any,
      input: unknown,
      content: ToolResultContent,
      resources: ReadonlyArray<Tool.Resource>
    ) => Effect.Effect<void>
    /**
     * Drops entries whose read resources overlap the write resources given (same key, or one a path prefix of
     * the other). Call it for every call that is not read-only, with that call's resources; an empty list of
     * write resources means "unknown side effects" and clears the whole cache.
     */
    readonly invalidate: (resources: ReadonlyArray<Tool.Resource>) => Effect.Effect<void>
  }
>() {}

/** No caching at all: the service the executor uses when no cache is provided. */
export const none: ResultCache["Type"] = ResultCache.of({
  lookup: () => Effect.succeed(Option.none()),
  store: () => Effect.void,
  invalidate: () => Effect.void
})

/** No caching at all, as a layer: the default. */
export const disabled = Layer.succeed(ResultCache, none)
