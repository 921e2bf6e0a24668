import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Schema } from "effect"
import * as Tool from "../../../src/domain/Tool.js"
import * as ToolRegistryLive from "../../../src/layers/registry/ToolRegistryLive.js"
import { ToolRegistry } from "../../../src/services/ToolRegistry.js"

const make = (
  name: string,
  extra: Partial<Pick<Tool.Definition<object, string>, "aliases" | "isEnabled" | "source" | "description">> = {}
) =>
  Tool.make({
    name,
    description: `${name} tool`,
    input: Schema.Struct({}),
    output: Schema.String,
    call: () => Effect.succeed(name),
    ...extra
  }).pipe(Effect.orDie)

describe("ToolRegistryLive", () => {
  it.effect("looks tools up by name, then alias", () =>
    Effect.gen(function* () {
      const registry = yield* ToolRegistry
      yield* registry.register(yield* make("Edit", { aliases: ["Replace"] }))
      expect(Option.map(yield* registry.lookup("Edit"), (t) => t.name)).toEqual(Option.some("Edit"))
      expect(Option.map(yield* registry.lookup("Replace"), (t) => t.name)).toEqual(Option.some("Edit"))
      expect(yield* registry.lookup("Nope")).toEqual(Option.none())
    }).pipe(Effect.provide(ToolRegistryLive.layer))
  )

  it.effect("rejects a duplicate name or alias with a typed error", () =>
    Effect.gen(function* () {
      const registry = yield* ToolRegistry
      yield* registry.register(yield* make("Edit", { aliases: ["Replace"] }))
      const dup = yield* Effect.flip(registry.register(yield* make("Edit")))
      expect(dup._tag).toBe("DuplicateToolError")
      expect(dup.message).toBe('Tool name "Edit" is already registered (by tool "Edit")')
      const alias = yield* Effect.flip(registry.register(yield* make("Replace")))
      expect(alias.message).toBe('Tool name "Replace" is already registered (by tool "Edit")')
    }).pipe(Effect.provide(ToolRegistryLive.layer))
  )

  it.effect("registers and unregisters at run time", () =>
    Effect.gen(function* () {
      const registry = yield* ToolRegistry
      yield* registry.register(yield* make("A"))
      expect(yield* registry.unregister("A")).toBe(true)
      expect(yield* registry.unregister("A")).toBe(false)
      expect(yield* registry.all).toEqual([])
    }).pipe(Effect.provide(ToolRegistryLive.layer))
  )

  it.effect("assembles the pool: built-ins sorted, then MCP sorted, built-ins winning clashes", () =>
    Effect.gen(function* () {
      const registry = yield* ToolRegistry
      for (const name of ["mcp__z__b", "Write", "mcp__a__x", "Bash", "Read"])
        yield* registry.register(yield* make(name))
      yield* registry.register(yield* make("Read", { source: "mcp", description: "an MCP tool named Read" }))
      const pool = yield* registry.pool()
      expect(pool.map((t) => `${t.source}:${t.name}`)).toEqual([
        "builtin:Bash",
        "builtin:Read",
        "builtin:Write",
        "mcp:mcp__a__x",
        "mcp:mcp__z__b"
      ])
      expect(Option.map(yield* registry.lookup("Read"), (t) => t.source)).toEqual(Option.some("builtin"))
    }).pipe(Effect.provide(ToolRegistryLive.layer))
  )

  it.effect("filters by tool set, whole-tool deny and isEnabled, in that order", () =>
    Effect.gen(function* () {
      const registry = yield* ToolRegistry
      for (const name of ["Bash", "Read", "Edit", "Glob"]) yield* registry.register(yield* make(name))
      yield* registry.register(yield* make("Hidden", { isEnabled: () => false }))
      expect((yield* registry.pool({ toolSet: "simple" })).map((t) => t.name)).toEqual(["Bash", "Edit", "Read"])
      expect((yield* registry.pool({ isDenied: (t) => t.name === "Bash" })).map((t) => t.name)).toEqual([
        "Edit",
        "Glob",
        "Read"
      ])
    }).pipe(Effect.provide(ToolRegistryLive.layer))
  )

  it.effect("a tool layer registers for the life of its scope", () =>
    Effect.gen(function* () {
      const registry = yield* ToolRegistry
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* registry.registerScoped(yield* make("Temp"))
          expect((yield* registry.all).map((t) => t.name)).toEqual(["Temp"])
        })
      )
      expect(yield* registry.all).toEqual([])
    }).pipe(Effect.provide(ToolRegistryLive.layer))
  )
})
