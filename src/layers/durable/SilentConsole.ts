/**
 * A console that prints nothing, loggers included: the sessions a runner picks up besides the one a command shows
 * run with it. Effect's default logger writes through the console's `unsafe` member, so that member is silent too
 * (a console without it makes the first log line a defect of the fiber that logs).
 */
import { type Console, Effect } from "effect"

const unsafe = new Proxy({} as Console.UnsafeConsole, { get: () => () => undefined })

/** The silent console. */
export const silent: Console.Console = new Proxy({} as Console.Console, {
  get: (_target, key) => (key === "unsafe" ? unsafe : () => Effect.void)
})
