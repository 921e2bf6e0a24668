/**
 * Exit codes of the CLI and the one way a command's failure is told (see docs/cli.md, "Exit status"): one line on
 * stderr, `armature: {message}` (or `armature {command}: …` for the command line itself), no stack trace, nothing
 * on stdout; exit 2 when the user's input (files, flags, JSON, settings) cannot be used, 1 when the work failed.
 */
import { Cause, Console, Effect, Option } from "effect"

/** Exit status for unusable input. */
export const invalidInput = 2

/** Exit status for work that failed (a model error, a crash). */
const runtimeFailure = 1

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
  "MissingApiKeyError",
  "UsageError",
  "OptionalDependencyError"
])

const tagOf = (u: unknown): string | undefined =>
  typeof u === "object" && u !== null && "_tag" in u && typeof u._tag === "string" ? u._tag : undefined

/** True when `e` is one of the errors of unusable input. */
const isInputError = (e: unknown): boolean => {
  const tag = tagOf(e)
  return tag !== undefined && inputErrorTags.has(tag)
}

/** The first line of an error's own message, without a stack trace. */
const ownMessage = (e: unknown): string => {
  const raw =
    e instanceof Error || (typeof e === "object" && e !== null && "message" in e && typeof e.message === "string")
      ? String((e as { message: unknown }).message)
      : typeof e === "string"
        ? e
        : (tagOf(e) ?? String(e))
  const first = raw.split("\n").find((line) => line.trim() !== "") ?? ""
  return first.trim()
}

/** The innermost `cause` of an error. */
const rootCause = (e: unknown): unknown => {
  let error = e
  for (let depth = 0; depth < 10; depth++) {
    if (typeof error !== "object" || error === null || !("cause" in error) || error.cause === undefined) break
    error = error.cause
  }
  return error
}

/**
 * The message of anything thrown or failed with: its first line, followed by its root cause's when that says
 * more (`PgClient: Failed to connect: connect ECONNREFUSED 127.0.0.1:1`), without a stack trace.
 */
const messageOf = (e: unknown): string => {
  const own = ownMessage(e)
  const root = rootCause(e)
  const inner = root === e ? "" : ownMessage(root)
  const text = inner === "" || own.includes(inner) ? own : own === "" ? inner : `${own}: ${inner}`
  return text !== "" ? text : (tagOf(e) ?? "unknown error")
}

/** What a failed command prints and its exit status. */
export interface Report {
  readonly line: string
  readonly status: number
}

/**
 * The report of a failure cause: the first expected error (exit 2 when it is about the user's input, else 1), else
 * the first defect (exit 1); undefined when the cause is only an interruption (a signal ended the command).
 */
export const report = (cause: Cause.Cause<unknown>, prefix = "armature"): Report | undefined => {
  const failure = Option.orElse(Cause.failureOption(cause), () => Cause.dieOption(cause))
  if (Option.isNone(failure)) return undefined
  const e = failure.value
  return {
    line: `${prefix}: ${messageOf(e)}`,
    status: Option.isSome(Cause.failureOption(cause)) ? statusOf(e) : runtimeFailure
  }
}

const statusOf = (e: unknown): number => (isInputError(e) ? invalidInput : runtimeFailure)

/** Prints input errors as `armature: {message}` and sets exit status 2; other failures pass through. */
export const onInvalidInput = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A | undefined, E, R> =>
  Effect.catchIf(
    self,
    (e): e is E => isInputError(e),
    (e) =>
      Effect.zipRight(
        Console.error(`armature: ${messageOf(e)}`),
        Effect.sync((): undefined => {
          process.exitCode = invalidInput
        })
      )
  )

/**
 * Tells any failure of `self` as one line on stderr with its exit status (see `report`); an interruption passes
 * through (the signal handling of the command or the runtime deals with it).
 */
export const reportFailures = <A, E, R>(
  self: Effect.Effect<A, E, R>,
  prefix = "armature"
): Effect.Effect<A | undefined, never, R> =>
  Effect.catchAllCause(self, (cause) => {
    const told = report(cause, prefix)
    if (told === undefined) return Effect.failCause(cause as Cause.Cause<never>)
    return Effect.sync((): undefined => {
      process.stderr.write(`${told.line}\n`)
      process.exitCode = told.status
    })
  })
