/**
 * Termination signals as values: while a command runs, SIGINT and SIGTERM no longer end the process by default;
 * they are offered to a stream so the command can interrupt its work, report what happened and exit with the
 * conventional status (128 + the signal's number: 130 for SIGINT, 143 for SIGTERM).
 */
import { Effect, Queue, Stream } from "effect"

/** The signals a command may handle itself. */
export type Termination = "SIGINT" | "SIGTERM"

/** The exit status for a process ended by `signal` (the shell's 128 + n). */
export const exitStatus = (signal: Termination): number => (signal === "SIGINT" ? 130 : 143)

/** Options of `listen`. */
export interface ListenOptions {
  /** The signals taken over. */
  readonly signals: ReadonlyArray<Termination>
  /** How many signals are handled here; the next one goes to the listeners that were there before (default 2). */
  readonly handled?: number | undefined
  /** A note on stderr (a terminal only) for the n-th signal handled (1-based). */
  readonly note?: ((signal: Termination, n: number) => string | undefined) | undefined
}

/**
 * Takes over `signals` from the moment this effect runs (not from the stream's first pull, so no signal is lost to
 * a fiber that has not started yet) and returns them as a stream. The listener stays for the rest of the process:
 * a signal that lands while the command is winding down must not kill it mid-teardown by default action; once
 * `handled` signals were seen, the next one reaches the listeners that were there before (the runtime's).
 */
export const listen = (options: ListenOptions): Effect.Effect<Stream.Stream<Termination>> =>
  Effect.gen(function* () {
    const queue = yield* Queue.unbounded<Termination>()
    const handled = options.handled ?? 2
    yield* Effect.sync(() => {
      let count = 0
      for (const signal of options.signals) {
        const previous = process.listeners(signal)
        for (const listener of previous) process.removeListener(signal, listener)
        process.on(signal, () => {
          count++
          if (count > handled) {
            for (const listener of previous) listener(signal)
            if (previous.length === 0) process.exit(exitStatus(signal))
            return
          }
          const note = options.note?.(signal, count)
          if (note !== undefined && process.stderr.isTTY === true) process.stderr.write(note)
          Queue.unsafeOffer(queue, signal)
        })
      }
    })
    return Stream.fromQueue(queue)
  })
