/**
 * `armature tools list|schema|search`: what the model would see.
 */
import { Args, Command, Options } from "@effect/cli"
import { NodeContext } from "@effect/platform-node"
import { Console, Effect, Layer, Option } from "effect"
import * as Tool from "../domain/Tool.js"
import * as ToolSearchQuery from "../domain/ToolSearchQuery.js"
import * as Skills from "../layers/agent/Skills.js"
import * as SettingsLoader from "../layers/settings/SettingsLoader.js"
import * as SkillTool from "../layers/tools/Skill.js"
import { Settings } from "../services/Settings.js"
import { ToolRegistry } from "../services/ToolRegistry.js"
import { mcpReady, toolsLayer } from "./Runtime.js"

const cwd = Options.directory("cwd").pipe(
  Options.withDescription("Working directory of the session (default: the current directory)"),
  Options.withDefault(process.cwd())
)

const settings = Options.file("settings").pipe(
  Options.withDescription("A settings file in Claude Code's shape, applied over the standard ones (repeatable)"),
  Options.repeated
)

const mcpConfig = Options.file("mcp-config").pipe(
  Options.withDescription("An .mcp.json file of MCP servers whose tools join the pool (besides the project's)"),
  Options.optional
)

/** What the pool is built from: the session directory, settings files and MCP configs. */
interface PoolOptions {
  readonly cwd: string
  readonly settings: ReadonlyArray<string>
  readonly mcpConfig: Option.Option<string>
}

/**
 * The built-in tools plus the MCP servers of the project's approved `.mcp.json` and of `--mcp-config`; running an
 * effect on it waits until every server has made its first connection attempt, so their tools are listed.
 */
const withPool =
  (options: PoolOptions) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.zipRight(mcpReady, effect).pipe(
      Effect.provide(
        // The MCP SDK is loaded by the `tools` commands only, not by every start of the CLI.
        Layer.unwrapEffect(
          Effect.promise(() => import("../layers/mcp/McpClientsLive.js")).pipe(
            Effect.map((McpClientsLive) =>
              McpClientsLive.layerFromSources({
                projectDir: options.cwd,
                mcpConfigFiles: Option.toArray(options.mcpConfig)
              })
            )
          )
        ).pipe(
          // the skills of the project and the user, with the settings' home
          Layer.provideMerge(SkillTool.layer.pipe(Layer.provideMerge(toolsLayer(options.cwd)))),
          Layer.provideMerge(
            SettingsLoader.layer({ projectDir: options.cwd, cwd: options.cwd, settingsFiles: options.settings })
          ),
          Layer.provide(NodeContext.layer)
        )
      )
    )

/** The `tools` array for the Messages API, in pool order, deferred tools marked with `defer_loading`. */
const apiTools = Effect.gen(function* () {
  const registry = yield* ToolRegistry
  const pool = yield* registry.pool()
  return pool.map((tool) =>
    Tool.isDeferred(tool) ? { ...Tool.toApiDefinition(tool), defer_loading: true } : Tool.toApiDefinition(tool)
  )
})

const flags = (tool: Tool.Any): string =>
  [
    Tool.safely(tool.isReadOnly, {}) ? "read-only" : undefined,
    Tool.safely(tool.isConcurrencySafe, {}) ? "concurrency-safe" : undefined,
    tool.cancelsSiblingsOnError ? "cancels-siblings" : undefined,
    Tool.isDeferred(tool) ? "deferred" : undefined
  ]
    .filter((s) => s !== undefined)
    .join(", ")

const list = Command.make(
  "list",
  {
    json: Options.boolean("json").pipe(Options.withDescription("Print JSON instead of a table")),
    cwd,
    settings,
    mcpConfig
  },
  ({ json, ...pool }) =>
    Effect.gen(function* () {
      const registry = yield* ToolRegistry
      const pool = yield* registry.pool()
      const settings = yield* Settings
      // every registered version of each listed tool that has versions (oldest first)
      const versions = new Map<string, ReadonlyArray<string>>()
      for (const tool of pool) {
        if (tool.version === undefined) continue
        const all = yield* registry.versions(tool.name)
        versions.set(
          tool.name,
          all.flatMap((t) => (t.source === tool.source && t.version !== undefined ? [t.version] : []))
        )
      }
      const nameOf = (tool: (typeof pool)[number]) =>
        tool.version === undefined ? tool.name : `${tool.name}@${tool.version}`
      const { skills } = yield* Skills.load({ projectDir: settings.projectDir, home: settings.home })
      if (json) {
        const rows = pool.map((tool) => ({
          name: tool.name,
          ...(tool.version === undefined ? {} : { version: tool.version, versions: versions.get(tool.name) ?? [] }),
          aliases: tool.aliases,
          category: tool.category,
          source: tool.source,
          deferred: Tool.isDeferred(tool),
          interruptBehavior: tool.interruptBehavior,
          cancelsSiblingsOnError: tool.cancelsSiblingsOnError,
          maxResultSizeChars: Number.isFinite(tool.maxResultSizeChars) ? tool.maxResultSizeChars : null,
          description: tool.description.split("\n")[0],
          ...(tool.name === SkillTool.name && tool.source === "builtin"
            ? {
                skills: skills.map((s) => ({
                  name: s.name,
                  description: s.description,
                  source: s.source,
                  file: s.file,
                  allowedTools: s.allowedTools
                }))
              }
            : {})
        }))
        yield* Console.log(JSON.stringify(rows, null, 2))
        return
      }
      const width = Math.max(4, ...pool.map((t) => nameOf(t).length))
      yield* Console.log(`${"NAME".padEnd(width)}  ${"CATEGORY".padEnd(8)}  DESCRIPTION`)
      for (const tool of pool) {
        const others = (versions.get(tool.name) ?? []).filter((v) => v !== tool.version)
        const extra = [flags(tool), others.length > 0 ? `other versions: ${others.join(", ")}` : ""]
          .filter((s) => s !== "")
          .join("; ")
        yield* Console.log(
          `${nameOf(tool).padEnd(width)}  ${tool.category.padEnd(8)}  ${tool.description.split("\n")[0]}${extra ? ` [${extra}]` : ""}`
        )
      }
      if (skills.length > 0 && pool.some((tool) => tool.name === SkillTool.name)) {
        const skillWidth = Math.max(5, ...skills.map((s) => s.name.length))
        yield* Console.log(`\n${"SKILL".padEnd(skillWidth)}  ${"SOURCE".padEnd(7)}  DESCRIPTION`)
        for (const s of skills) {
          const grants = s.allowedTools.length > 0 ? ` [allowed-tools: ${s.allowedTools.join(", ")}]` : ""
          yield* Console.log(`${s.name.padEnd(skillWidth)}  ${s.source.padEnd(7)}  ${s.description}${grants}`)
        }
      }
    }).pipe(withPool(pool))
).pipe(Command.withDescription("List the tools in the pool, in the order the model sees them, then the skills"))

const schema = Command.make("schema", { cwd, settings, mcpConfig }, (pool) =>
  Effect.flatMap(apiTools, (tools) => Console.log(JSON.stringify(tools, null, 2))).pipe(withPool(pool))
).pipe(Command.withDescription("Print the `tools` array for the Messages API, in pool order"))

/** The text table of `tools search`: names and scores (`direct` for select, exact-name and server-prefix hits). */
export const searchTable = (hits: ReadonlyArray<ToolSearchQuery.Hit>): string => {
  if (hits.length === 0) return "No matching deferred tools found"
  const width = Math.max(4, ...hits.map((hit) => hit.name.length))
  const rows = hits.map((hit) => `${hit.name.padEnd(width)}  ${hit.score === null ? "direct" : String(hit.score)}`)
  return [`${"NAME".padEnd(width)}  SCORE`, ...rows].join("\n")
}

const search = Command.make(
  "search",
  {
    query: Args.text({ name: "query" }).pipe(
      Args.withDescription("A ToolSearch query: keywords (+term required) or select:A,B")
    ),
    maxResults: Options.integer("max-results").pipe(
      Options.withDescription("The most hits of a keyword query"),
      Options.withDefault(ToolSearchQuery.defaultMaxResults)
    ),
    json: Options.boolean("json").pipe(Options.withDescription("Print JSON: {query, hits: [{name, score}]}")),
    cwd,
    settings,
    mcpConfig
  },
  ({ json, maxResults, query, ...pool }) =>
    Effect.gen(function* () {
      const registry = yield* ToolRegistry
      const pool = yield* registry.pool()
      const hits = ToolSearchQuery.searchPool(pool, query, { maxResults })
      yield* Console.log(json ? JSON.stringify({ query, hits }, null, 2) : searchTable(hits))
    }).pipe(withPool(pool))
).pipe(Command.withDescription("Search the deferred tools with ToolSearch's engine, printing names and scores"))

/** `armature tools`. */
export const command = Command.make("tools").pipe(
  Command.withDescription("Inspect the tool pool"),
  Command.withSubcommands([list, schema, search])
)
