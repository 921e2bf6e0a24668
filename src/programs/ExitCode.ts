/**
 * Exit codes of the CLI: 2 with a message on stderr for unusable input (see docs/cli.md, "Exit status").
 */
import { Console, Effect } from "effect"

/** Exit status for unusable input. */
export const invalidInput = 2

/** Errors whose tag means the user's input (files, flags, JSON) cannot be used. */
const inputErrorTags = new Set([
  "InvalidInputError",
  "DependencyCycleError",
  "SettingsJsonError",
  "SettingsShapeError",
  "SettingsReadError",
  "SettingSourcesError",
  "PermissionRuleError",
  "McpConfigError",
  "MissingApiKeyError"
])

const tagOf = (u: unknown): string | undefined =>
  typeof u === "object" && u !== null && "_tag" in u && typeof u._tag === "string" ? u._tag : undefined

/** Prints input errors as `armature: {message}` and sets exit status 2; other failures pass through. */
export const onInvalidInput = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A | undefined, E, R> =>
  Effect.catchIf(
    self,
    (e): e is E => {
      const tag = tagOf(e)
      return tag !== undefined && inputErrorTags.has(tag)
    },
    (e) =>
      Effect.zipRight(
        Console.error(`armature: ${e instanceof Error ? e.message : String(e)}`),
        Effect.sync((): undefined => {
          process.exitCode = invalidInput
        })
      )
  )
