/**
 * The in-memory ToolRegistry: tools by name and alias, and the pool (built-ins before MCP tools, tools denied
 * outright left out).
 */
import { Effect, Layer, Option, PubSub, Ref, Stream } from "effect"
import { DuplicateToolError } from "../../domain/Errors.js"
import type * as Tool from "../../domain/Tool.js"
import { type PoolOptions, type RegistryChange, ToolRegistry } from "../../services/ToolRegistry.js"

const simpleToolSet = new Set(["Bash", "Read", "Edit"])

const byName = (a: Tool.Any, b: Tool.Any): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

/** Sorts tools into pool order: built-ins by name, then MCP tools by name, built-ins winning clashes. */
export const poolOrder = (tools: ReadonlyArray<Tool.Any>): ReadonlyArray<Tool.Any> => {
  const builtins = tools.filter((t) => t.source === "builtin").sort(byName)
  const taken = new Set(builtins.map((t) => t.name))
  const mcp = tools.filter((t) => t.source === "mcp" && !taken.has(t.name)).sort(byName)
  return [...builtins, ...mcp]
}

/** Builds the registry. */
export const make = Effect.gen(function* () {
  const tools = yield* Ref.make<ReadonlyArray<Tool.Any>>([])
  const hub = yield* PubSub.unbounded<RegistryChange>()

  const register = (tool: Tool.Any) =>
    Ref.modify(tools, (current): readonly [Option.Option<DuplicateToolError>, ReadonlyArray<Tool.Any>] => {
      const names = [tool.name, ...tool.aliases]
      const clash = current.find(
        (t) => t.source === tool.source && names.some((n) => n === t.name || t.aliases.includes(n))
      )
      if (clash !== undefined) {
        const name = names.find((n) => n === clash.name || clash.aliases.includes(n)) ?? tool.name
        return [Option.some(new DuplicateToolError({ name, existing: clash.name })), current]
      }
      return [Option.none(), [...current, tool]]
    }).pipe(
      Effect.flatMap(Option.match({ onNone: () => Effect.void, onSome: Effect.fail })),
      Effect.zipRight(PubSub.publish(hub, { _tag: "Registered", name: tool.name } as RegistryChange)),
      Effect.asVoid
    )

  const unregister = (name: string) =>
    Ref.modify(tools, (current) => {
      const next = current.filter((t) => t.name !== name)
      return [next.length !== current.length, next] as const
    }).pipe(
      Effect.tap((removed) =>
        removed ? PubSub.publish(hub, { _tag: "Unregistered", name } as RegistryChange) : Effect.void
      )
    )

  const lookup = (name: string) =>
    Effect.map(Ref.get(tools), (current) => {
      const ordered = poolOrder(current)
      return Option.orElse(Option.fromNullable(ordered.find((t) => t.name === name)), () =>
        Option.fromNullable(ordered.find((t) => t.aliases.includes(name)))
      )
    })

  const pool = (options: PoolOptions = {}) =>
    Effect.map(Ref.get(tools), (current) =>
      poolOrder(
        current
          .filter((t) => options.toolSet !== "simple" || simpleToolSet.has(t.name))
          .filter((t) => options.isDenied === undefined || !options.isDenied(t))
          .filter((t) => t.isEnabled())
      )
    )

  return ToolRegistry.of({
    register,
    registerScoped: (tool) => Effect.acquireRelease(register(tool), () => unregister(tool.name)).pipe(Effect.asVoid),
    unregister,
    lookup,
    all: Effect.map(Ref.get(tools), poolOrder),
    pool,
    changes: Stream.fromPubSub(hub)
  })
})

/** The registry as a layer. */
export const layer = Layer.effect(ToolRegistry, make)

/**
 * Registers a tool for the life of the layer: an application adds a tool by composing this layer over the
 * registry. The tool's own requirements are resolved when the layer is built.
 */
export const register = <E, R>(tool: Effect.Effect<Tool.Any, E, R>) =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const registry = yield* ToolRegistry
      const made = yield* tool
      yield* registry.registerScoped(made)
    })
  )
