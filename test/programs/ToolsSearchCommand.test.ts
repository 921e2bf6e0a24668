import { Command } from "@effect/cli"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { vi } from "vitest"
import * as ToolsCommand from "../../src/programs/ToolsCommand.js"

/** Runs `tools ARGS…` in-process and returns what it printed. */
const tools = (...args: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const lines: Array<string> = []
    const spy = vi.spyOn(console, "log").mockImplementation((...data: ReadonlyArray<unknown>) => {
      lines.push(data.map(String).join(" "))
    })
    yield* Command.run(ToolsCommand.command, { name: "tools", version: "0.0.0" })(["node", "tools", ...args]).pipe(
      Effect.ensuring(Effect.sync(() => spy.mockRestore()))
    )
    return lines.join("\n")
  }).pipe(Effect.provide(NodeContext.layer))

describe("armature tools search", () => {
  it.effect("prints hits with scores over the deferred built-in tools", () =>
    Effect.gen(function* () {
      expect(yield* tools("search", "fetch")).toBe("NAME      SCORE\nWebFetch  16")
      expect(yield* tools("search", "--max-results", "1", "kubernetes")).toBe("No matching deferred tools found")
    })
  )

  it.effect("select: names any tool of the pool; --json prints the hits", () =>
    Effect.gen(function* () {
      const out = yield* tools("search", "--json", "select:sleep,WEBFETCH,Nope")
      expect(JSON.parse(out)).toEqual({
        query: "select:sleep,WEBFETCH,Nope",
        hits: [
          { name: "Sleep", score: null },
          { name: "WebFetch", score: null }
        ]
      })
      expect(yield* tools("search", "select:Sleep")).toBe("NAME   SCORE\nSleep  direct")
    })
  )

  it("renders the table", () => {
    expect(
      ToolsCommand.searchTable([
        { name: "mcp__a__b", score: 12 },
        { name: "X", score: null }
      ])
    ).toBe("NAME       SCORE\nmcp__a__b  12\nX          direct")
  })
})
