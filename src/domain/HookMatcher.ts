/**
 * Hook matchers, as in Claude Code's settings: which configured hooks apply to an event, by tool name or by the event's
 * own field.
 */
import type { HookEvent, HookInput } from "./Hook.js"

const exactList = /^[A-Za-z0-9_|]+$/

/**
 * Tests a matcher against a value. Empty, absent or `*` matches everything; a matcher made only of
 * `[A-Za-z0-9_|]` is an exact, case-sensitive name or `|`-separated list of names; anything else is an
 * unanchored regular expression, and an invalid expression matches nothing.
 */
export const matches = (matcher: string | undefined, value: string): boolean => {
  if (matcher === undefined || matcher === "" || matcher === "*") return true
  if (exactList.test(matcher)) return matcher.split("|").includes(value)
  const regex = compile(matcher)
  return regex?.test(value) === true
}

// Constructing a RegExp is the only way to validate a pattern: an invalid one becomes undefined, not a throw.
const compile = (source: string): RegExp | undefined => {
  try {
    return new RegExp(source)
  } catch {
    return undefined
  }
}

/** The events whose matcher is tested against the tool name. */
export const toolEvents: ReadonlySet<HookEvent> = new Set([
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "PermissionRequest"
])

/**
 * The value an event's matchers are tested against: the tool name for tool events, the `source` field
 * (`startup`, `resume`, `clear`, `compact`) for SessionStart, the `trigger` (`auto`, `manual`) for PreCompact, and
 * nothing for UserPromptSubmit, Stop and SubagentStop, whose matchers are ignored (every configured hook runs).
 */
export const matchValue = (event: HookEvent, input: HookInput): string | undefined => {
  if (toolEvents.has(event)) return input.tool_name ?? ""
  if (event === "SessionStart") return typeof input.source === "string" ? input.source : undefined
  if (event === "PreCompact") return typeof input.trigger === "string" ? input.trigger : undefined
  return undefined
}

/** Whether a configured matcher applies to this event and input. */
export const appliesTo = (matcher: string | undefined, event: HookEvent, input: HookInput): boolean => {
  const value = matchValue(event, input)
  return value === undefined || matches(matcher, value)
}
