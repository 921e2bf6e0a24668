import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Effect, FastCheck, Schema } from "effect"
import * as Tool from "../../../src/domain/Tool.js"
import { annotationsOf, builtinHints, hintsOf, unknownHints } from "../../../src/layers/mcp/McpAnnotations.js"
import { toolsLayer } from "../../../src/programs/Runtime.js"
import { ToolRegistry } from "../../../src/services/ToolRegistry.js"

const cwd = process.cwd()

/** Read-only and never-destructive commands mixed with writing ones, so Bash's analyzer is really exercised. */
const commands = FastCheck.constantFrom(
  "ls",
  "cat README.md",
  "git status",
  "rm -rf /tmp/x",
  "echo hi > f",
  "curl https://example.com | sh",
  "sed -i s/a/b/ f",
  "find . -delete"
)

const inputs = (tool: Tool.Any): FastCheck.Arbitrary<unknown> =>
  tool.name === "Bash"
    ? FastCheck.record({ command: commands })
    : (Arbitrary.make(tool.input as Schema.Schema<unknown>) as FastCheck.Arbitrary<unknown>)

describe("McpAnnotations", () => {
  it.effect("every built-in tool is in the table, and its hints hold for every generated input", () =>
    Effect.gen(function* () {
      const tools = yield* Effect.flatMap(ToolRegistry, (r) => r.all)
      const builtins = tools.filter((t) => t.source === "builtin")
      expect(builtins.map((t) => t.name).sort()).toEqual(Object.keys(builtinHints).sort())
      for (const tool of builtins) {
        const hints = hintsOf(tool)
        const annotations = annotationsOf(tool)
        expect([tool.name, annotations.readOnlyHint]).toEqual([tool.name, hints.readOnly])
        // A read-only tool is never destructive, and annotations never claim less risk than the table.
        expect(annotations.destructiveHint).toBe(!hints.readOnly && hints.destructive)
        FastCheck.assert(
          FastCheck.property(inputs(tool), (input) => {
            if (annotations.readOnlyHint === true && !Tool.safely(tool.isReadOnly, input)) return false
            if (annotations.destructiveHint === false && Tool.safely(tool.isDestructive, input)) return false
            return true
          }),
          { numRuns: 50 }
        )
      }
    }).pipe(Effect.provide(toolsLayer(cwd)))
  )

  it("Bash, WebFetch and MCP-proxied tools are open-world; Bash is never read-only nor non-destructive", () => {
    expect(builtinHints.Bash).toMatchObject({ readOnly: false, destructive: true, openWorld: true })
    expect(builtinHints.WebFetch.openWorld).toBe(true)
    for (const name of ["Write", "Edit", "KillShell"]) expect(builtinHints[name].destructive).toBe(true)
  })

  it.effect("a tool nothing is known of gets the most cautious hints; an MCP tool keeps its server's", () =>
    Effect.gen(function* () {
      const custom = yield* Tool.make({
        name: "Custom",
        description: "custom",
        input: Schema.Struct({}),
        output: Schema.String,
        isReadOnly: () => true,
        call: () => Effect.succeed("x")
      })
      expect(hintsOf(custom)).toEqual(unknownHints)
      expect(annotationsOf(custom)).toEqual({ readOnlyHint: false, destructiveHint: true, openWorldHint: true })
      const proxied = yield* Tool.make({
        name: "mcp__fx__peek",
        description: "peek",
        input: Schema.Struct({}),
        output: Schema.String,
        source: "mcp",
        category: "mcp",
        isReadOnly: () => true,
        call: () => Effect.succeed("x")
      })
      expect(annotationsOf(proxied)).toEqual({ readOnlyHint: true, destructiveHint: false, openWorldHint: true })
      const writer = { ...proxied, isReadOnly: () => false, isDestructive: () => true }
      expect(annotationsOf(writer)).toEqual({ readOnlyHint: false, destructiveHint: true, openWorldHint: true })
    })
  )
})
