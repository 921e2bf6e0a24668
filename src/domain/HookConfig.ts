/**
 * The `hooks` section of a settings file, in Claude Code's shape.
 */
import { Schema } from "effect"

/** One command hook. `timeout` is in seconds (default 600). */
export const CommandHook = Schema.Struct({
  type: Schema.Literal("command"),
  command: Schema.String,
  timeout: Schema.optional(Schema.Number.pipe(Schema.positive()))
})
export type CommandHook = typeof CommandHook.Type

/** A matcher and the hooks it runs. */
export const HookMatcher = Schema.Struct({
  matcher: Schema.optional(Schema.String),
  hooks: Schema.Array(CommandHook)
})
export type HookMatcher = typeof HookMatcher.Type

/** `hooks[Event] = [{ matcher?, hooks: [...] }]`. Unknown event names are kept and ignored. */
export const HooksConfig = Schema.Record({ key: Schema.String, value: Schema.Array(HookMatcher) })
export type HooksConfig = typeof HooksConfig.Type
