/**
 * ToolSearch: finds deferred tools by name or keyword and loads their schemas (docs/tools.md).
 */
import { Effect, Schema } from "effect"
import type { ResultContentBlock } from "../../domain/Blocks.js"
import * as DeferredTools from "../../domain/DeferredTools.js"
import * as Tool from "../../domain/Tool.js"
import * as ToolSearchQuery from "../../domain/ToolSearchQuery.js"
import { ToolRegistry } from "../../services/ToolRegistry.js"
import * as ToolRegistryLive from "../registry/ToolRegistryLive.js"

/** The session-state key of discovered tool names (re-exported from DeferredTools for convenience). */
export const discoveredToolsKey = DeferredTools.discoveredToolsKey

/** The result when nothing matches. */
const noMatchText = "No matching deferred tools found"

const Input = Schema.Struct({
  query: Schema.String.annotations({
    description:
      'What to look for: "select:Name1,Name2" to load tools by exact name, or keywords ("slack message", ' +
      '"+github issue"; a leading + makes a keyword required).'
  }),
  max_results: Schema.optional(
    Schema.Number.pipe(Schema.int(), Schema.between(1, 50)).annotations({
      description: `The most tools a keyword query returns (1 to 50, default ${ToolSearchQuery.defaultMaxResults}).`
    })
  )
})

/** The tools found, and the MCP servers whose tools are not known yet. */
const Output = Schema.Struct({
  matches: Schema.Array(Schema.String),
  pending_mcp_servers: Schema.Array(Schema.String),
  definitions: Schema.Array(
    Schema.Struct({ name: Schema.String, description: Schema.String, input_schema: Schema.Unknown })
  )
})
type Output = typeof Output.Type

/** Options of the tool. */
export interface Options {
  /**
   * `"reference"` (default): the result is `tool_reference` blocks and the API expands them. `"definitions"`:
   * for models without that block type, the result lists each tool's name, description and input schema as text.
   */
  readonly resultFormat?: "reference" | "definitions" | undefined
}

const description = `Finds deferred tools by name or keyword and loads their definitions so you can call them.

Deferred tools are listed by name only in <available-deferred-tools>; their parameters are unknown to you until
this tool loads them, and calling one before that fails with an input validation error.

When to use it: you need a capability that none of your loaded tools offers, or a tool you want appears only in
<available-deferred-tools>. Load it first, then call it. When not to use it: for tools already loaded (their
schemas are in your tool list), or to look for files or code (use the file and search tools).

Parameters:
- query: either "select:Name1,Name2" to load tools by exact name (case-insensitive, all of them, no limit), or
  keywords matched against tool names, search hints and descriptions. Prefix a keyword with + to require it:
  "+slack send message" only returns tools matching "slack". An exact tool name, or an MCP server prefix such as
  "mcp__github", returns those tools directly.
- max_results: the most tools a keyword search returns (default ${ToolSearchQuery.defaultMaxResults}).

Result: references to the matching tools, whose full definitions become available to call right away, or
"${noMatchText}". When MCP servers are still connecting, the result says which; their tools may appear later.

Misuse: searching again for a tool you already loaded, or calling a deferred tool with guessed parameters
instead of loading it.`

const pendingLine = (servers: ReadonlyArray<string>): string =>
  `MCP servers still connecting: ${servers.join(", ")}. Their tools are not searchable yet; search again shortly.`

/** The result content of a search, in the chosen format. */
export const render = (output: Output, format: "reference" | "definitions"): ReadonlyArray<ResultContentBlock> => {
  const pending = output.pending_mcp_servers.length > 0 ? [pendingLine(output.pending_mcp_servers)] : []
  if (output.matches.length === 0) return [{ type: "text", text: [noMatchText, ...pending].join("\n\n") }]
  if (format === "reference") {
    return [
      ...output.matches.map((name): ResultContentBlock => ({ type: "tool_reference", tool_name: name })),
      ...pending.map((text): ResultContentBlock => ({ type: "text", text }))
    ]
  }
  const listing = output.definitions
    .map(
      (d) =>
        `<function>${JSON.stringify({ name: d.name, description: d.description, input_schema: d.input_schema })}</function>`
    )
    .join("\n")
  const count = output.definitions.length
  const header = `Loaded ${count} deferred ${count === 1 ? "tool" : "tools"}; ${count === 1 ? "it" : "they"} can be called now:`
  return [{ type: "text", text: [`${header}\n<functions>\n${listing}\n</functions>`, ...pending].join("\n\n") }]
}

/** Makes the ToolSearch tool over the registry's pool. */
export const make = (options: Options = {}) =>
  Effect.gen(function* () {
    const registry = yield* ToolRegistry
    const format = options.resultFormat ?? "reference"
    return yield* Tool.make({
      name: "ToolSearch",
      description,
      input: Input,
      output: Output,
      category: "search",
      alwaysLoad: true,
      searchHint: "find discover load deferred tools",
      isReadOnly: () => true,
      isConcurrencySafe: () => true,
      checkPermissions: () =>
        Effect.succeed({ behavior: "allow", reason: "ToolSearch only reads the tool registry" } as const),
      summarize: (input) => input.query,
      call: (input, ctx) =>
        Effect.gen(function* () {
          const pool = yield* registry.pool()
          const hits = ToolSearchQuery.searchPool(pool, input.query, { maxResults: input.max_results })
          const names = hits.map((hit) => hit.name)
          if (names.length > 0) {
            yield* ctx.state.modify(DeferredTools.discoveredToolsKey, (old) => [undefined, new Set([...old, ...names])])
          }
          const pending = yield* ctx.state.get(DeferredTools.pendingMcpServersKey)
          const byName = new Map(pool.map((tool) => [tool.name, tool]))
          return {
            matches: names,
            pending_mcp_servers: pending,
            definitions: names.flatMap((name) => {
              const tool = byName.get(name)
              return tool === undefined ? [] : [Tool.toApiDefinition(tool)]
            })
          }
        }),
      toResult: (output) => render(output, format)
    })
  })

/** Registers ToolSearch, answering with `tool_reference` blocks. Needs only the ToolRegistry. */
export const layer = ToolRegistryLive.register(make())

/** Registers ToolSearch with options, e.g. `{ resultFormat: "definitions" }` for models without tool_reference. */
export const layerWith = (options: Options) => ToolRegistryLive.register(make(options))
