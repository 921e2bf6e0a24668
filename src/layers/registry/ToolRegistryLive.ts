/**
 * The in-memory ToolRegistry: tools by name and alias, and the pool (built-ins before MCP tools, tools denied
 * outright left out). Several versions of a name may be registered (`name@version`); one is active: the newest, or
 * the one the settings' `toolVersions` pin (docs/tools.md, "Tool versions"). A call holds the tool it looked up, so a
 * version registered while it runs serves the calls that start after.
 */
import { Context, Effect, Layer, Option, PubSub, Ref, Scope, Stream } from "effect"
import { DuplicateToolError } from "../../domain/Errors.js"
import * as Tool from "../../domain/Tool.js"
import * as ToolVersion from "../../domain/ToolVersion.js"
import { reader } from "../../services/LiveSettings.js"
import { Settings } from "../../services/Settings.js"
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

/**
 * The active version of each name (per source), in registration order: the newest, or the newest matching the
 * name's pin (a name whose pin matches no registered version has none).
 */
export const activeOf = (
  tools: ReadonlyArray<Tool.Any>,
  pins: Readonly<Record<string, string>>
): ReadonlyArray<Tool.Any> => {
  if (!tools.some((t) => t.version !== undefined)) return tools
  const chosen = new Map<string, string | undefined | null>()
  const keyOf = (t: Tool.Any) => `${t.source}\u0000${t.name}`
  for (const t of tools) {
    const key = keyOf(t)
    if (chosen.has(key)) continue
    const versions = tools.filter((o) => keyOf(o) === key).map((o) => o.version)
    const pick = ToolVersion.active(versions, Object.hasOwn(pins, t.name) ? pins[t.name] : undefined)
    chosen.set(key, pick._tag === "Some" ? pick.version : null)
  }
  return tools.filter((t) => chosen.get(keyOf(t)) === t.version)
}

const noVersions: Readonly<Record<string, string>> = {}

/**
 * `f` remembering its last answer: asked again with the same arguments (by reference), it gives the same value
 * without working it out (the executor looks its tools up for every batch, and the tools and pins rarely change).
 */
const lastOf = <A, B, C>(f: (a: A, b: B) => C): ((a: A, b: B) => C) => {
  let last: { readonly a: A; readonly b: B; readonly c: C } | undefined
  return (a, b) => {
    if (last === undefined || last.a !== a || last.b !== b) last = { a, b, c: f(a, b) }
    return last.c
  }
}

/**
 * Builds the registry; version pins come from the settings' `toolVersions` (read at each lookup, so a pin edited in
 * live settings applies from the next call), when there are settings.
 */
export const make = Effect.gen(function* () {
  const tools = yield* Ref.make<ReadonlyArray<Tool.Any>>([])
  const hub = yield* PubSub.unbounded<RegistryChange>()
  const settings = yield* Effect.serviceOption(Settings)
  // pins given by the session itself (pinVersions) win over the settings'
  const sessionPins = yield* Ref.make<Readonly<Record<string, string>>>(noVersions)
  // without settings, the session's pins are all there is (not merged with an empty object at every lookup)
  const pinsNow = Option.isNone(settings)
    ? Ref.get(sessionPins)
    : Effect.zipWith(
        Effect.map(
          yield* reader.pipe(Effect.provideService(Settings, settings.value)),
          (s) => s.settings.toolVersions ?? noVersions
        ),
        Ref.get(sessionPins),
        lastOf((fromSettings, fromSession) => ({ ...fromSettings, ...fromSession }))
      )
  /** The tools a name may stand for, in pool order, for the registered tools and pins (kept until either changes). */
  const orderedOf = lastOf((all: ReadonlyArray<Tool.Any>, pins: Readonly<Record<string, string>>) =>
    poolOrder(activeOf(all, pins))
  )
  const current = Effect.zipWith(Ref.get(tools), pinsNow, activeOf)

  const register = (tool: Tool.Any) =>
    Ref.modify(tools, (current): readonly [Option.Option<DuplicateToolError>, ReadonlyArray<Tool.Any>] => {
      const names = [tool.name, ...tool.aliases]
      const clash = current.find(
        (t) =>
          t.source === tool.source &&
          names.some((n) => n === t.name || t.aliases.includes(n)) &&
          !(t.name === tool.name && t.version !== tool.version && t.version !== undefined && tool.version !== undefined)
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

  const unregister = (text: string) =>
    Ref.modify(tools, (current) => {
      const { name, version } = ToolVersion.parse(text)
      const next = current.filter((t) => t.name !== name || (version !== undefined && t.version !== version))
      return [next.length !== current.length, next] as const
    }).pipe(
      Effect.tap((removed) =>
        removed
          ? PubSub.publish(hub, { _tag: "Unregistered", name: ToolVersion.parse(text).name } as RegistryChange)
          : Effect.void
      )
    )

  const lookup = (text: string) =>
    Effect.zipWith(Ref.get(tools), pinsNow, (all, pins) => {
      const { name, version } = ToolVersion.parse(text)
      if (version !== undefined && !all.some((t) => t.name === text || t.aliases.includes(text))) {
        return Option.fromNullable(all.find((t) => t.name === name && t.version === version))
      }
      const ordered = orderedOf(all, pins)
      return Option.orElse(Option.fromNullable(ordered.find((t) => t.name === name)), () =>
        Option.fromNullable(ordered.find((t) => t.aliases.includes(name)))
      )
    })

  const pool = (options: PoolOptions = {}) =>
    Effect.map(current, (current) =>
      poolOrder(
        current
          .filter((t) => options.toolSet !== "simple" || simpleToolSet.has(t.name))
          .filter((t) => options.isDenied === undefined || !options.isDenied(t))
          .filter((t) => t.isEnabled())
      )
    )

  return ToolRegistry.of({
    register,
    registerScoped: (tool) =>
      Effect.acquireRelease(register(tool), () => unregister(ToolVersion.format(tool.name, tool.version))).pipe(
        Effect.asVoid
      ),
    unregister,
    lookup,
    versions: (name) =>
      Effect.map(Ref.get(tools), (all) =>
        all
          .filter((t) => t.name === name)
          .sort((a, b) =>
            a.version === undefined ? -1 : b.version === undefined ? 1 : ToolVersion.compare(a.version, b.version)
          )
      ),
    all: Effect.map(current, poolOrder),
    pool,
    changes: Stream.fromPubSub(hub),
    pinVersions: (pins) => Ref.update(sessionPins, (existing) => ({ ...existing, ...pins }))
  })
})

/** The registry as a layer. */
export const layer = Layer.effect(ToolRegistry, make)

/**
 * Registers a tool for the life of the layer: an application adds a tool by composing this layer over the
 * registry. What the tool's `call` needs (`R` of `Tool<I, O, E, R>`) is taken from the context the layer is built in
 * and provided to every call, so the layer's type carries it: Read's layer is
 * `Layer<never, never, ToolRegistry | FileSystem | FileStateCache>`.
 */
export const register = <I, O, E, RT, ME, MR>(
  tool: Effect.Effect<Tool.Tool<I, O, E, RT>, ME, MR>
): Layer.Layer<never, ME | DuplicateToolError, ToolRegistry | MR | RT> =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const registry = yield* ToolRegistry
      const made = yield* tool
      const context = yield* Effect.context<RT>()
      // the layer's own Scope is not the call's: a call that needs one gets it where it runs; the memo map of the
      // layer being built is not a service any call needs, and a call's context never holds it — kept, it made every
      // call take Tool.provide's slow path (bench/Executor.bench.ts, batches of 10: ratio 1.6 -> 2.0)
      const services = Context.omit(Scope.Scope, Layer.CurrentMemoMap)(context) as Context.Context<RT>
      yield* registry.registerScoped(Tool.provide(made, services))
    })
  )
