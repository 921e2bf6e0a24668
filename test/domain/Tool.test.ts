import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as Tool from "../../src/domain/Tool.js"

const bare = Tool.make({
  name: "Bare",
  description: "A tool with no flags",
  input: Schema.Struct({
    path: Schema.String.annotations({ description: "Where" }),
    n: Schema.optional(Schema.Number)
  }),
  output: Schema.String,
  call: () => Effect.succeed("ok")
})

describe("Tool.make", () => {
  it.effect("fills every omitted flag with the fail-closed default", () =>
    Effect.gen(function* () {
      const tool = yield* bare
      expect(tool.isReadOnly({ path: "x" })).toBe(false)
      expect(tool.isConcurrencySafe({ path: "x" })).toBe(false)
      expect(tool.isDestructive({ path: "x" })).toBe(false)
      expect(tool.isEnabled()).toBe(true)
      expect(tool.cancelsSiblingsOnError).toBe(false)
      expect(tool.interruptBehavior).toBe("block")
      expect(tool.maxResultSizeChars).toBe(100_000)
      expect(tool.shouldDefer).toBe(false)
      expect(tool.alwaysLoad).toBe(false)
      expect(tool.category).toBe("custom")
      expect(tool.aliases).toEqual([])
      expect(tool.source).toBe("builtin")
      expect(yield* tool.checkPermissions({ path: "x" }, undefined as never)).toEqual({ behavior: "passthrough" })
    })
  )

  it.effect("derives the API's input_schema: descriptions, required, additionalProperties false", () =>
    Effect.gen(function* () {
      const tool = yield* bare
      expect(tool.inputJsonSchema).toEqual({
        type: "object",
        required: ["path"],
        properties: { path: { type: "string", description: "Where" }, n: { type: "number" } },
        additionalProperties: false
      })
    })
  )

  it.effect("produces identical JSON Schema across runs", () =>
    Effect.gen(function* () {
      const a = yield* bare
      const b = yield* bare
      expect(JSON.stringify(a.inputJsonSchema)).toBe(JSON.stringify(b.inputJsonSchema))
    })
  )

  it.effect("fails with the tool's name when the Schema has no JSON Schema form", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Tool.make({
          name: "Broken",
          description: "x",
          input: Schema.Struct({ when: Schema.DateFromSelf }),
          output: Schema.String,
          call: () => Effect.succeed("")
        })
      )
      expect(error._tag).toBe("ToolSchemaError")
      expect(error.message).toContain('Tool "Broken"')
    })
  )

  it.effect("refuses an input Schema that is not an object", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Tool.make({
          name: "Str",
          description: "x",
          input: Schema.String,
          output: Schema.String,
          call: () => Effect.succeed("")
        })
      )
      expect(error.message).toBe(
        'Tool "Str" has an input Schema that cannot produce JSON Schema: the input Schema is not an object (Schema.Struct)'
      )
    })
  )

  it("safely treats a throwing predicate as false", () => {
    expect(
      Tool.safely(() => {
        throw new Error("boom")
      }, {})
    ).toBe(false)
  })

  it("infers MCP source and deferral from the name", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const mcp = yield* Tool.make({
          name: "mcp__srv__x",
          description: "x",
          input: Schema.Struct({}),
          output: Schema.String,
          call: () => Effect.succeed("")
        })
        expect(mcp.source).toBe("mcp")
        expect(Tool.isDeferred(mcp)).toBe(true)
        expect(Tool.isDeferred(yield* bare)).toBe(false)
      })
    ))
})
