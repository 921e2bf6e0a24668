/**
 * A reader that goes away (`armature run … | head -1`) is not an error: the first EPIPE on stdout ends the command
 * quietly (its work is interrupted, so finalizers run and child processes are stopped), and later writes to the
 * closed pipe are dropped. The same holds for stderr, which then is simply not written to any more.
 */
import { Effect } from "effect"

/** How long the interrupted work may take to finish before the process exits anyway. */
const exitGraceMs = 5000

let closed = false
const waiting = new Set<() => void>()

const isEpipe = (e: unknown): boolean => typeof e === "object" && e !== null && "code" in e && e.code === "EPIPE"

/** Installs the listeners on stdout and stderr (once); other stream errors are raised as before. */
export const install = (): void => {
  if (process.stdout.listeners("error").includes(onStdoutError)) return
  process.stdout.on("error", onStdoutError)
  process.stderr.on("error", onStderrError)
}

function onStdoutError(e: unknown): void {
  if (!isEpipe(e)) throw e
  if (closed) return
  closed = true
  // whatever still holds the process open after the interruption must not keep it alive for long
  setTimeout(() => process.exit(), exitGraceMs).unref()
  for (const resume of waiting) resume()
  waiting.clear()
}

function onStderrError(e: unknown): void {
  if (!isEpipe(e)) throw e
}

/** Completes when stdout's reader goes away (never, while it reads). */
const stdoutClosed: Effect.Effect<void> = Effect.async<void>((resume) => {
  if (closed) return resume(Effect.void)
  const done = () => resume(Effect.void)
  waiting.add(done)
  return Effect.sync(() => void waiting.delete(done))
})

/** Runs `self` until it ends or stdout's reader goes away, whichever comes first (then `self` is interrupted). */
export const untilClosed = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A | undefined, E, R> =>
  Effect.raceFirst(self, Effect.as(stdoutClosed, undefined))
