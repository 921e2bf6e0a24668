/**
 * The making of armature's tables in a session store: each table once per SQL client, under the database's schema
 * lock. A durable session (and a served one, taken up by any runner) used to run every `CREATE TABLE IF NOT EXISTS`
 * of the modules it touches at each use (the lease, its record, its calls' processes: six or seven statements, each a
 * round trip and a catalog lock, for every session a runner took over). A table made once through a client is not
 * made again through it; processes started together on a new database still make their tables one at a time.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type * as SqlError from "@effect/sql/SqlError"
import { Deferred, Effect, Exit, FiberId, FiberRef } from "effect"

/** The advisory lock class of a database's schema ("ARMS"): held while tables are made. */
const schemaLockClass = 0x41524d53

/** Whether the fiber holds the schema lock already (tables made inside `withSchemaLock` do not take it again). */
const schemaLocked: FiberRef.FiberRef<boolean> = FiberRef.unsafeMake(false)

/**
 * Runs `effect` (making tables) holding the database's schema lock, so that processes started together on a new
 * database make its tables one at a time: PostgreSQL's `CREATE TABLE IF NOT EXISTS` run at once by two sessions can
 * fail with a duplicate key in `pg_type`. On another database, or inside another `withSchemaLock`, `effect` runs as
 * it is.
 */
export const withSchemaLock = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    if (yield* FiberRef.get(schemaLocked)) return yield* effect
    const sql = yield* SqlClient.SqlClient
    return yield* sql.onDialectOrElse({
      pg: () =>
        Effect.gen(function* () {
          const conn = yield* sql.reserve
          yield* conn.executeRaw("SELECT pg_advisory_lock($1, 0)", [schemaLockClass])
          return yield* Effect.ensuring(
            Effect.locally(effect, schemaLocked, true),
            conn.executeRaw("SELECT pg_advisory_unlock($1, 0)", [schemaLockClass]).pipe(Effect.ignore)
          )
        }).pipe(Effect.scoped),
      orElse: () => effect
    })
  })

/** The tables made (or being made) through each SQL client, by name. */
const made = new WeakMap<SqlClient.SqlClient, Map<string, Deferred.Deferred<void, unknown>>>()

/**
 * `make` (the statements that make the table `name`) run once per SQL client, under the schema lock: later uses
 * through the same client wait for the first one and run nothing. A failed making is tried again at the next use.
 */
export const once = <E, R>(
  name: string,
  make: Effect.Effect<unknown, E, R>
): Effect.Effect<void, E | SqlError.SqlError, R | SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.suspend(() => {
      let tables = made.get(sql)
      if (tables === undefined) {
        tables = new Map()
        made.set(sql, tables)
      }
      const known = tables.get(name) as Deferred.Deferred<void, E | SqlError.SqlError> | undefined
      if (known !== undefined) return Deferred.await(known)
      const done = Deferred.unsafeMake<void, E | SqlError.SqlError>(FiberId.none)
      const all = tables
      all.set(name, done as Deferred.Deferred<void, unknown>)
      return withSchemaLock(make).pipe(
        Effect.asVoid,
        Effect.onExit((exit) => {
          if (Exit.isFailure(exit)) all.delete(name)
          return Deferred.done(done, exit)
        })
      )
    })
  )
