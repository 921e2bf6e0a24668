/**
 * Real time, not the fiber's Clock: killing real processes and waiting for their pipes is about real time, and a
 * finalizer waiting for a TestClock that nobody advances would hang the test that interrupts it.
 */
import { Clock, Duration, Effect } from "effect"

const liveClock = Clock.make()

/** Runs an effect on the wall clock (its sleeps and timeouts are real time). */
export const onWallClock = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withClock(effect, liveClock)

/** Waits on the wall clock. */
export const wallSleep = (ms: number): Effect.Effect<void> => onWallClock(Effect.sleep(Duration.millis(ms)))
