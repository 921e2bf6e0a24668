/**
 * Loads the durable-session commands (the workflow engine, the cluster and the SQL drivers) only when one runs.
 * Their SQLite driver, better-sqlite3, is loaded later still, only for a session kept in SQLite
 * (DurableStore.loadSqlite), so PostgreSQL mode runs without it.
 */
import { Effect } from "effect"
import { InvalidInputError } from "../domain/Errors.js"

export const loadDurable = Effect.tryPromise({
  try: () => import("./DurableRun.js"),
  catch: (e) => {
    const reason = (e instanceof Error ? e.message : String(e)).split("\n")[0]
    return new InvalidInputError({
      message: `durable sessions could not be loaded (${reason})`
    })
  }
})
