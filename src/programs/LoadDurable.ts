/**
 * Loads the durable-session commands (the workflow engine, the cluster and the SQL drivers) only when one runs.
 * Their SQLite driver, better-sqlite3, is a native addon outside the CLI bundle: an installation without it gets
 * an error that says what to install, not a module-resolution stack.
 */
import { Effect } from "effect"
import { InvalidInputError } from "../domain/Errors.js"

export const loadDurable = Effect.tryPromise({
  try: () => import("./DurableRun.js"),
  catch: (e) => {
    const reason = (e instanceof Error ? e.message : String(e)).split("\n")[0]
    return new InvalidInputError({
      message: `durable sessions could not be loaded (${reason}); they need better-sqlite3 12: npm install better-sqlite3@12`
    })
  }
})
