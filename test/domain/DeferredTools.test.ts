import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as DeferredTools from "../../src/domain/DeferredTools.js"
import { fakeTool } from "../fixtures/SearchFixtures.js"

const pool = Effect.all([
  fakeTool({ name: "Bash" }),
  fakeTool({ name: "NotebookEdit", shouldDefer: true, description: "Edits a Jupyter notebook cell." }),
  fakeTool({
    name: "WebFetch",
    shouldDefer: true,
    description: "Fetches a web page.",
    searchHint: "http url download"
  }),
  fakeTool({ name: "mcp__docker__run", description: "Runs a container." }),
  fakeTool({ name: "mcp__git__log", description: "Shows the commit log." }),
  fakeTool({ name: "mcp__grafana__query", description: "Queries dashboards.", alwaysLoad: true })
])

describe("DeferredTools", () => {
  it.effect("lists deferred tools not yet discovered", () =>
    Effect.gen(function* () {
      const tools = yield* pool
      expect(DeferredTools.deferredListing(tools)).toBe(
        "<available-deferred-tools>\nNotebookEdit\nWebFetch\nmcp__docker__run\nmcp__git__log\n</available-deferred-tools>"
      )
      expect(DeferredTools.deferredListing(tools, new Set(["WebFetch", "mcp__git__log"]))).toBe(
        "<available-deferred-tools>\nNotebookEdit\nmcp__docker__run\n</available-deferred-tools>"
      )
      expect(DeferredTools.deferredListing(tools.slice(0, 1))).toBe("")
      expect(tools.filter((t) => DeferredTools.isLoaded(t, new Set(["WebFetch"]))).map((t) => t.name)).toEqual([
        "Bash",
        "WebFetch",
        "mcp__grafana__query"
      ])
    })
  )

  it.effect("static groups: the core group plus recently used extended tools", () =>
    Effect.gen(function* () {
      const tools = yield* pool
      const usage = [["mcp__docker__run"], ["Bash", "mcp__git__log"], ["WebFetch"]]
      const chosen = DeferredTools.initialLoad(
        tools,
        {
          _tag: "StaticGroups",
          core: ["NotebookEdit", "Bash"],
          extended: ["mcp__docker__run", "mcp__git__log", "WebFetch"],
          recentExtended: 2
        },
        { usage }
      )
      expect([...chosen]).toEqual(["NotebookEdit", "WebFetch", "mcp__git__log"])
    })
  )

  it.effect("keyword relevance: deferred tools scored against the user's message, plus keyword groups", () =>
    Effect.gen(function* () {
      const tools = yield* pool
      const strategy: DeferredTools.LoadingStrategy = {
        _tag: "KeywordRelevance",
        maxTools: 2,
        groups: { deploy: ["mcp__docker__run", "mcp__git__log"] }
      }
      expect([
        ...DeferredTools.initialLoad(tools, strategy, { message: "Download this URL and fix the notebook" })
      ]).toEqual(["NotebookEdit", "WebFetch"])
      expect([...DeferredTools.initialLoad(tools, strategy, { message: "Please deploy it" })]).toEqual([
        "mcp__docker__run",
        "mcp__git__log"
      ])
      expect([...DeferredTools.initialLoad(tools, strategy, { message: "Show me the log" })]).toEqual(["mcp__git__log"])
      expect([...DeferredTools.initialLoad(tools, strategy, { message: "What is the plan for this?" })]).toEqual([])
    })
  )

  it.effect("recency: tools used in the last window of turns, or often, stay loaded", () =>
    Effect.gen(function* () {
      const tools = yield* pool
      let usage: DeferredTools.UsageLog = []
      for (let turn = 0; turn < 6; turn++) usage = DeferredTools.recordUse(usage, ["NotebookEdit"])
      usage = DeferredTools.recordUse(usage, ["mcp__docker__run", "mcp__docker__run"])
      for (let turn = 0; turn < 10; turn++) usage = DeferredTools.recordUse(usage, ["WebFetch"])
      expect(usage).toHaveLength(17)
      expect(usage[6]).toEqual(["mcp__docker__run"])
      expect([...DeferredTools.initialLoad(tools, { _tag: "Recency" }, { usage })]).toEqual([
        "NotebookEdit",
        "WebFetch"
      ])
      expect([...DeferredTools.initialLoad(tools, { _tag: "Recency", window: 11 }, { usage })]).toEqual([
        "NotebookEdit",
        "WebFetch",
        "mcp__docker__run"
      ])
      expect(DeferredTools.recordUse(usage, ["x"], 3)).toEqual([["WebFetch"], ["WebFetch"], ["x"]])
    })
  )

  it("exports the shared session-state keys", () => {
    expect(DeferredTools.discoveredToolsKey.key).toBe("armature/discovered-tools")
    expect(DeferredTools.pendingMcpServersKey).toEqual({ key: "armature/pending-mcp-servers", initial: [] })
  })
})
