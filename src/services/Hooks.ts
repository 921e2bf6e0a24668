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
  }
>() {}

/** No hooks at all. */
export const none = Layer.succeed(Hooks, Hooks.of({ run: () => Effect.succeed(emptyOutcome) }))
