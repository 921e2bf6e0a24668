/**
 * The `--database` flag of `run`, `resume`, `sessions` and `serve`: a PostgreSQL URL. One that is not one, or whose
 * server cannot be reached, is an input error naming the flag and the URL (without its password).
 */
import { Effect } from "effect"
import { InvalidInputError } from "../domain/Errors.js"

/** True for a `postgres://` or `postgresql://` URL that parses. */
export const isPostgresUrl = (url: string): boolean => /^postgres(ql)?:\/\//.test(url) && URL.canParse(url)

/** A database URL as it may be shown: without its password. */
export const withoutPassword = (url: string): string => {
  const parsed = URL.canParse(url) ? new URL(url) : undefined
  if (parsed === undefined) return url
  parsed.password = ""
  return parsed.toString()
}

/** The first line of what went wrong, down to its root cause. */
export const causeOf = (e: unknown): string => {
  let error: unknown = e
  while (typeof error === "object" && error !== null && "cause" in error && error.cause !== undefined) {
    error = error.cause
  }
  return (error instanceof Error ? error.message : String(error)).split("\n")[0]
}

/** Fails with an input error unless `url` is a PostgreSQL URL. */
export const check = (url: string): Effect.Effect<void, InvalidInputError> =>
  isPostgresUrl(url)
    ? Effect.void
    : Effect.fail(
        new InvalidInputError({ message: `--database: expected a PostgreSQL URL (postgres://…), got ${url}` })
      )

/** The input error of a database that could not be used (unreachable, refused, wrong credentials). */
export const unusable =
  (url: string) =>
  (e: unknown): InvalidInputError =>
    new InvalidInputError({ message: `--database: ${withoutPassword(url)}: ${causeOf(e)}` })
