import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Schema } from "effect"
import * as DeferredTools from "../../../src/domain/DeferredTools.js"
import * as Tool from "../../../src/domain/Tool.js"
import * as ToolRegistryLive from "../../../src/layers/registry/ToolRegistryLive.js"
import * as ToolSearch from "../../../src/layers/tools/ToolSearch.js"
import { ToolRegistry } from "../../../src/services/ToolRegistry.js"
import { context, fakeTool, outputOf } from "../../fixtures/SearchFixtures.js"

const tools = [
  {
    name: "NotebookEdit",
    description: "Edits a Jupyter notebook cell.",
    shouldDefer: true,
    searchHint: "jupyter ipynb"
  },
  { name: "Read", description: "Reads a file." },
  { name: "mcp__github__create_issue", description: "Create a new issue in a GitHub repository" },
  { name: "mcp__slack__send_message", description: "Send a message to a Slack channel" },
  { name: "mcp__slack__status", description: "Slack status", alwaysLoad: true }
]

const registryWith = <E>(searchLayer: Layer.Layer<never, E, ToolRegistry>) =>
  Layer.mergeAll(searchLayer, ...tools.map((t) => ToolRegistryLive.register(fakeTool(t)))).pipe(
    Layer.provideMerge(ToolRegistryLive.layer)
  )

/** Runs ToolSearch from the registry with a given session state; returns the result content. */
const run = (input: { query: string; max_results?: number }, state: Tool.SessionState) =>
  Effect.gen(function* () {
    const registry = yield* ToolRegistry
    const tool = Option.getOrThrow(yield* registry.lookup("ToolSearch"))
    const decoded = yield* Effect.orDie(Schema.decodeUnknown(tool.input)(input))
    const output = outputOf(yield* tool.call(decoded, yield* context(state)))
    return tool.toResult(output)
  })

describe("ToolSearch", () => {
  it.scoped("returns tool_reference blocks and records discovered tools", () =>
    Effect.gen(function* () {
      const state = yield* Tool.makeSessionState
      expect(yield* run({ query: "+slack message" }, state)).toEqual([
        { type: "tool_reference", tool_name: "mcp__slack__send_message" }
      ])
      expect(yield* run({ query: "select:notebookedit,mcp__github__create_issue" }, state)).toEqual([
        { type: "tool_reference", tool_name: "NotebookEdit" },
        { type: "tool_reference", tool_name: "mcp__github__create_issue" }
      ])
      expect([...(yield* state.get(DeferredTools.discoveredToolsKey))]).toEqual([
        "mcp__slack__send_message",
        "NotebookEdit",
        "mcp__github__create_issue"
      ])
      expect(ToolSearch.discoveredToolsKey.key).toBe("armature/discovered-tools")
    }).pipe(Effect.provide(registryWith(ToolSearch.layer)))
  )

  it.scoped("searches deferred tools only; alwaysLoad and built-in tools are not hits", () =>
    Effect.gen(function* () {
      const state = yield* Tool.makeSessionState
      expect(yield* run({ query: "slack" }, state)).toEqual([
        { type: "tool_reference", tool_name: "mcp__slack__send_message" }
      ])
      expect(yield* run({ query: "file" }, state)).toEqual([{ type: "text", text: "No matching deferred tools found" }])
      expect(yield* run({ query: "mcp__github" }, state)).toEqual([
        { type: "tool_reference", tool_name: "mcp__github__create_issue" }
      ])
      expect(yield* run({ query: "jupyter", max_results: 1 }, state)).toEqual([
        { type: "tool_reference", tool_name: "NotebookEdit" }
      ])
      expect(yield* state.get(DeferredTools.discoveredToolsKey)).toEqual(
        new Set(["mcp__slack__send_message", "mcp__github__create_issue", "NotebookEdit"])
      )
    }).pipe(Effect.provide(registryWith(ToolSearch.layer)))
  )

  it.scoped("tells the model which MCP servers are still connecting", () =>
    Effect.gen(function* () {
      const state = yield* Tool.makeSessionState
      yield* state.set(DeferredTools.pendingMcpServersKey, ["jira", "linear"])
      const line =
        "MCP servers still connecting: jira, linear. Their tools are not searchable yet; search again shortly."
      expect(yield* run({ query: "ticket" }, state)).toEqual([
        { type: "text", text: `No matching deferred tools found\n\n${line}` }
      ])
      expect(yield* run({ query: "slack" }, state)).toEqual([
        { type: "tool_reference", tool_name: "mcp__slack__send_message" },
        { type: "text", text: line }
      ])
    }).pipe(Effect.provide(registryWith(ToolSearch.layer)))
  )

  it.scoped("lists full definitions as text for models without tool_reference", () =>
    Effect.gen(function* () {
      const state = yield* Tool.makeSessionState
      const schema = {
        type: "object",
        required: ["path"],
        properties: { path: { type: "string", description: "A path." } },
        additionalProperties: false
      }
      expect(yield* run({ query: "select:NotebookEdit" }, state)).toEqual([
        {
          type: "text",
          text:
            "Loaded 1 deferred tool; it can be called now:\n<functions>\n" +
            `<function>${JSON.stringify({ name: "NotebookEdit", description: "Edits a Jupyter notebook cell.", input_schema: schema })}</function>\n` +
            "</functions>"
        }
      ])
    }).pipe(Effect.provide(registryWith(ToolSearch.layerWith({ resultFormat: "definitions" }))))
  )

  it.scoped("is read-only, concurrency-safe, always loaded and allowed", () =>
    Effect.gen(function* () {
      const registry = yield* ToolRegistry
      const tool = Option.getOrThrow(yield* registry.lookup("ToolSearch"))
      expect(tool.isReadOnly({ query: "x" })).toBe(true)
      expect(tool.isConcurrencySafe({ query: "x" })).toBe(true)
      expect(tool.alwaysLoad).toBe(true)
      expect(Tool.isDeferred(tool)).toBe(false)
      expect((yield* tool.checkPermissions({ query: "x" }, yield* context())).behavior).toBe("allow")
      expect(tool.inputJsonSchema.required).toEqual(["query"])
    }).pipe(Effect.provide(registryWith(ToolSearch.layer)))
  )
})
