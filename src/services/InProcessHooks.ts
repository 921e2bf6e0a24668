/**
 * The registry of in-process hooks (docs/library.md, "In-process hooks"): hooks written as Effect functions by
 * application code, registered by composing layers, run beside the command hooks of the settings and aggregated the
 * same way.
 */
import { Context, Effect, Layer, Ref, type Scope } from "effect"
import type { HookEvent, HookInput } from "../domain/Hook.js"
import type { HookOutput } from "../domain/HookOutput.js"

/** A hook's explicit block: the same as a command hook exiting 2 with `reason` on stderr. */
export interface HookBlockResult {
  readonly _tag: "Block"
  readonly reason: string
}

/** Blocks the event (deny for PreToolUse, a blocking error for PostToolUse) with `reason`. */
export const block = (reason: string): HookBlockResult => ({ _tag: "Block", reason })

/** What an in-process hook returns: the JSON a command hook would print, a block, or nothing to say. */
// biome-ignore lint/suspicious/noConfusingVoidType: a hook with nothing to say may return `Effect.void`
export type InProcessHookResult = HookOutput | HookBlockResult | undefined | void

/** One registered in-process hook. Its effect has its requirements already provided. */
export interface InProcessHook {
  /** Names the hook in reasons, blocks and errors, where a command hook shows its command. */
  readonly name: string
  readonly event: HookEvent
  /** Same semantics as a settings matcher (see HookMatcher). */
  readonly matcher?: string | undefined
  /** Seconds; default 600 like command hooks. */
  readonly timeoutSeconds?: number | undefined
  /** A failure or defect is a non-blocking error, or a deny on PreToolUse/PermissionRequest (stricter). */
  readonly run: (input: HookInput) => Effect.Effect<InProcessHookResult, unknown>
}

/** The port. */
export class InProcessHooks extends Context.Tag("armature/InProcessHooks")<
  InProcessHooks,
  {
    /** Adds a hook for the life of the scope. */
    readonly registerScoped: (hook: InProcessHook) => Effect.Effect<void, never, Scope.Scope>
    /** Every registered hook, in registration order. */
    readonly all: Effect.Effect<ReadonlyArray<InProcessHook>>
  }
>() {}

/** Builds an empty registry. */
export const make = Effect.gen(function* () {
  const hooks = yield* Ref.make<ReadonlyArray<InProcessHook>>([])
  return InProcessHooks.of({
    registerScoped: (hook) =>
      Effect.acquireRelease(
        Ref.update(hooks, (current) => [...current, hook]),
        () => Ref.update(hooks, (current) => current.filter((h) => h !== hook))
      ),
    all: Ref.get(hooks)
  })
})

/** An empty registry as a layer. */
export const layer = Layer.effect(InProcessHooks, make)
