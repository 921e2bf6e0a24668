import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Effect, FastCheck as fc, Schema } from "effect"
import { toolsLayer } from "../../../src/programs/Runtime.js"
import { ToolRegistry } from "../../../src/services/ToolRegistry.js"

describe("built-in tool Schemas", () => {
  it.effect("inputs generated from every built-in tool's Schema decode (seed 002, trap 7)", () =>
    Effect.gen(function* () {
      const registry = yield* ToolRegistry
      const tools = yield* registry.all
      expect(tools.length).toBeGreaterThanOrEqual(8)
      for (const tool of tools) {
        const arbitrary = Arbitrary.make(tool.input)
        const decode = Schema.decodeUnknownEither(tool.input, { errors: "all", onExcessProperty: "error" })
        const encode = Schema.encodeUnknownSync(tool.input)
        fc.assert(
          fc.property(arbitrary, (value) => {
            const decoded = decode(encode(value))
            if (decoded._tag === "Left") throw new Error(`${tool.name}: ${decoded.left.message}`)
          }),
          { numRuns: 100 }
        )
      }
    }).pipe(Effect.provide(toolsLayer(process.cwd())))
  )

  it.effect("every input_schema is an object schema with a description on every property", () =>
    Effect.gen(function* () {
      const registry = yield* ToolRegistry
      for (const tool of yield* registry.all) {
        const schema = tool.inputJsonSchema
        expect(schema.type, tool.name).toBe("object")
        expect(schema.additionalProperties, tool.name).toBe(false)
        for (const [key, property] of Object.entries(schema.properties)) {
          expect(typeof (property as { description?: unknown }).description, `${tool.name}.${key}`).toBe("string")
        }
        expect(tool.description.length, tool.name).toBeGreaterThan(200)
      }
    }).pipe(Effect.provide(toolsLayer(process.cwd())))
  )

  it.effect("built-in names are sorted in the pool and unique", () =>
    Effect.gen(function* () {
      const registry = yield* ToolRegistry
      const names = (yield* registry.pool()).filter((t) => t.source === "builtin").map((t) => t.name)
      expect(names).toEqual([...names].sort())
      expect(new Set(names).size).toBe(names.length)
    }).pipe(Effect.provide(toolsLayer(process.cwd())))
  )
})
