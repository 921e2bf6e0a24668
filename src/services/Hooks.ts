/**
 * The hooks registry: runs every hook (settings command hooks and in-process hooks) matching an event and
 * aggregates their outcomes into one HookOutcome.
 */
import { Context, Effect, Layer } from "effect"
import { emptyOutcome, type HookEvent, type HookInput, type HookOutcome } from "../domain/Hook.js"

/** The port. */
export class Hooks extends Context.Tag("armature/Hooks")<
  Hooks,
  {
    /** Runs the hooks of `event` whose matcher fits the input (its `tool_name` for tool events) and combines them. */
    readonly run: (event: HookEvent, input: HookInput) => Effect.Effect<HookOutcome>
    /**
     * Whether any hook at all is registered for `event` (matcher aside). When false, `run` would give the empty
     * outcome, so a caller may skip building the hook input and calling `run`. Absent: assume there may be hooks.
     */
    readonly has?: ((event: HookEvent) => Effect.Effect<boolean>) | undefined
  }
>() {}

const nothing: Effect.Effect<HookOutcome> = Effect.succeed(emptyOutcome)

/** The service of `none`: callers that get this very value know that no hook listens, without asking. */
export const noHooks: Hooks["Type"] = Hooks.of({ run: () => nothing, has: () => Effect.succeed(false) })

/** No hooks at all. */
export const none = Layer.succeed(Hooks, noHooks)

/** Runs the hooks of `event` on the input `build` makes, or gives the empty outcome at once when none listens. */
export const runIfAny = (hooks: Hooks["Type"], event: HookEvent, build: () => HookInput): Effect.Effect<HookOutcome> =>
  hooks === noHooks
    ? nothing
    : hooks.has === undefined
      ? Effect.suspend(() => hooks.run(event, build()))
      : Effect.flatMap(hooks.has(event), (any) => (any ? hooks.run(event, build()) : Effect.succeed(emptyOutcome)))
