/**
 * One owner per durable session: whoever runs a session (`run --durable`, `resume`, a runner of `armature serve`
 * taking it up) holds its lease for as long as it runs it, and a second taker is refused at once, told which process
 * holds it.
 *
 * - In a session's own SQLite file the lease is a row of `armature_leases` naming its holder (pid, start time, boot
 *   id). It is taken by compare-and-set, so that of two takers exactly one wins; a row whose holder is gone (another
 *   boot, no such pid, or a pid reused by a process started at another time) is stale and may be taken over.
 * - In PostgreSQL the lease is an advisory lock on the session, taken on one connection this process keeps for its
 *   leases: the server drops it when the holder's connection goes, so a dead holder (on any host) never keeps it.
 *   The same table names the holder for the refusal's message.
 */
import * as Os from "node:os"
import * as SqlClient from "@effect/sql/SqlClient"
import type * as SqlConnection from "@effect/sql/SqlConnection"
import { Context, Data, Effect, Layer, Option, type Scope } from "effect"
import * as SpawnRecord from "../process/SpawnRecord.js"
import * as Tables from "./Tables.js"

/** The session is run by another process; it holds the session's lease. */
export class SessionTaken extends Data.TaggedError("SessionTaken")<{
  readonly sessionId: string
  readonly pid: number
  readonly host: string
}> {
  override get message(): string {
    const where = this.host === Os.hostname() || this.host === "" ? "" : ` on ${this.host}`
    return `session ${this.sessionId} is being run by pid ${this.pid}${where}`
  }
}

/**
 * How a statement checks that this process still holds a session's lease (PostgreSQL): the server process of the
 * connection holding the leases' locks. A statement that runs only while that server process holds the session's
 * lock cannot land once the lease is lost (the server dropped the connection, and another process may hold it now).
 */
export interface LeaseFence {
  /** The `pg_backend_pid()` of the connection holding this process's leases. */
  readonly backendPid: number
}

/** Takes the lease of a session for the scope, or fails with who holds it. */
export class SessionLease extends Context.Tag("armature/SessionLease")<
  SessionLease,
  {
    readonly take: (sessionId: string) => Effect.Effect<void, SessionTaken, Scope.Scope>
    /** The fence of the leases (PostgreSQL's advisory locks); none for row leases (a session's SQLite file). */
    readonly fence: Option.Option<LeaseFence>
  }
>() {}

/**
 * The SQL condition (PostgreSQL) that holds while the fence's connection holds the lease of the session whose id is
 * the parameter `sessionId`: its advisory lock, granted to that server process.
 */
export const leaseHeld = (sql: SqlClient.SqlClient, fence: LeaseFence, sessionId: string) =>
  sql`EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2
    AND classid = ${lockClass}::bigint::oid AND objid = hashtext(${sessionId})::oid AND pid = ${fence.backendPid})`

/** The lock class of sessions' advisory locks ("ARMA"); the session id's hash is the lock's other half. */
const lockClass = 0x41524d41

/** This process, as a lease names its holder. */
const self = {
  pid: process.pid,
  start: SpawnRecord.startTicksOf(process.pid) ?? 0,
  boot: SpawnRecord.bootId(),
  host: Os.hostname()
}

/** Makes the table if it is not there (once per SQL client: see Tables.once). */
export const ensureTable = Tables.once(
  "armature_leases",
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`CREATE TABLE IF NOT EXISTS armature_leases (
        session_id TEXT PRIMARY KEY,
        pid INTEGER NOT NULL,
        start_ticks BIGINT NOT NULL,
        boot_id TEXT NOT NULL,
        host TEXT NOT NULL,
        taken_at BIGINT NOT NULL
      )`
  )
)

interface Row {
  readonly pid: number | string
  readonly start_ticks: number | string
  readonly boot_id: string
  readonly host: string
}

const isSelf = (row: Row): boolean =>
  Number(row.pid) === self.pid &&
  Number(row.start_ticks) === self.start &&
  row.boot_id === self.boot &&
  row.host === self.host

/**
 * Whether a row's holder may still run: a process of another host cannot be checked from here and counts as
 * running; on this host it runs when this boot has a process of that pid started at the recorded time.
 */
const holderRuns = (row: Row): boolean =>
  row.host !== self.host ||
  (row.boot_id === self.boot && SpawnRecord.startTicksOf(Number(row.pid)) === Number(row.start_ticks))

const holderOf = (sessionId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<Row>`SELECT pid, start_ticks, boot_id, host FROM armature_leases WHERE session_id = ${sessionId}`.pipe(
      Effect.map((rows) => Option.fromNullable(rows[0]))
    )
  )

const taken = (sessionId: string, row: Row) => new SessionTaken({ sessionId, pid: Number(row.pid), host: row.host })

/**
 * The lease as a row, taken by compare-and-set: inserted when there is none, replaced when its holder is gone and
 * the row is still the one read. Of two takers, the one whose write lands first wins; the other reads it back.
 */
const takeRow = (sessionId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* ensureTable
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = yield* holderOf(sessionId)
      if (Option.isNone(current)) {
        yield* sql`INSERT INTO armature_leases (session_id, pid, start_ticks, boot_id, host, taken_at)
          VALUES (${sessionId}, ${self.pid}, ${self.start}, ${self.boot}, ${self.host}, ${Date.now()})
          ON CONFLICT (session_id) DO NOTHING`
      } else if (isSelf(current.value)) {
        return
      } else if (holderRuns(current.value)) {
        return yield* taken(sessionId, current.value)
      } else {
        const old = current.value
        yield* sql`UPDATE armature_leases SET pid = ${self.pid}, start_ticks = ${self.start}, boot_id = ${self.boot},
            host = ${self.host}, taken_at = ${Date.now()}
          WHERE session_id = ${sessionId} AND pid = ${Number(old.pid)} AND start_ticks = ${Number(old.start_ticks)}
            AND boot_id = ${old.boot_id} AND host = ${old.host}`
      }
      const after = yield* holderOf(sessionId)
      if (Option.isSome(after) && isSelf(after.value)) return
    }
    const last = yield* holderOf(sessionId)
    return yield* taken(
      sessionId,
      Option.getOrElse(last, () => ({ pid: 0, start_ticks: 0, boot_id: "", host: "" }))
    )
  })

/** Gives a row lease back (only this process's). */
const releaseRow = (sessionId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`DELETE FROM armature_leases WHERE session_id = ${sessionId} AND pid = ${self.pid}
      AND start_ticks = ${self.start} AND boot_id = ${self.boot}`.pipe(Effect.ignore)
  )

/** The leases of a session file (SQLite): rows. */
const rowLeases = (sql: SqlClient.SqlClient) =>
  SessionLease.of({
    take: (sessionId) =>
      Effect.acquireRelease(takeRow(sessionId), () => releaseRow(sessionId)).pipe(
        Effect.catchTag("SqlError", Effect.die),
        Effect.provideService(SqlClient.SqlClient, sql)
      ),
    fence: Option.none()
  })

/**
 * How a lease connection names its process to the others (`application_name`, at most 63 bytes kept): `armature:`,
 * the pid, `@`, the host, and after a space whatever else its process adds (a runner's tag, RunnerWatch).
 */
export const processName = (suffix = ""): string =>
  `armature:${self.pid}@${self.host}${suffix === "" ? "" : ` ${suffix}`}`.slice(0, 63)

/**
 * The process whose connection holds the lock of a session now, by that connection's `application_name`
 * (`leaseName`); none when no connection holds it or the holder names itself otherwise.
 */
const lockHolder = (sql: SqlClient.SqlClient, sessionId: string, leaseName: string) =>
  sql<{
    name: string | null
  }>`SELECT a.application_name AS name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND l.classid = ${lockClass}::bigint::oid
      AND l.objid = hashtext(${sessionId})::oid`.pipe(
    Effect.map((rows) => {
      const named = /^armature:(\d+)@(\S*)/.exec(rows[0]?.name ?? "")
      return named === null
        ? Option.none()
        : Option.some({
            pid: Number(named[1]),
            start_ticks: 0,
            boot_id: "",
            // a long host name was cut to fit: this host's own name is kept whole
            host: leaseName.length === 63 && self.host.startsWith(named[2]) ? self.host : named[2]
          } satisfies Row)
    })
  )

/** The leases of a PostgreSQL database: advisory locks on `conn`, this process's own connection for them. */
const lockLeases = (sql: SqlClient.SqlClient, conn: SqlConnection.Connection, backendPid: number, leaseName: string) =>
  SessionLease.of({
    fence: Option.some({ backendPid }),
    take: (sessionId) =>
      Effect.gen(function* () {
        const rows = yield* conn.executeValues("SELECT pg_try_advisory_lock($1, hashtext($2))", [lockClass, sessionId])
        if (rows[0]?.[0] !== true) {
          // the process holding the lock now, as its connection names it: the row may still name the one before
          // (the holder writes it just after taking the lock)
          const now = yield* lockHolder(sql, sessionId, leaseName)
          const holder = Option.isSome(now) ? now : yield* holderOf(sessionId)
          return yield* taken(
            sessionId,
            Option.getOrElse(holder, () => ({ pid: 0, start_ticks: 0, boot_id: "", host: "" }))
          )
        }
        yield* Effect.addFinalizer(() =>
          conn.executeRaw("SELECT pg_advisory_unlock($1, hashtext($2))", [lockClass, sessionId]).pipe(Effect.ignore)
        )
        yield* sql`INSERT INTO armature_leases (session_id, pid, start_ticks, boot_id, host, taken_at)
          VALUES (${sessionId}, ${self.pid}, ${self.start}, ${self.boot}, ${self.host}, ${Date.now()})
          ON CONFLICT (session_id) DO UPDATE SET pid = ${self.pid}, start_ticks = ${self.start},
            boot_id = ${self.boot}, host = ${self.host}, taken_at = ${Date.now()}`
      }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.provideService(SqlClient.SqlClient, sql))
  })

/**
 * The leases of the store of the SQL client in context: advisory locks on a connection kept for the layer's life
 * (PostgreSQL), rows otherwise. The lock connection is named `processName(suffix)`.
 */
export const layerNamed = (suffix: string) =>
  Layer.scoped(
    SessionLease,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* ensureTable
      const leaseName = processName(suffix)
      return yield* sql.onDialectOrElse({
        pg: () =>
          Effect.gen(function* () {
            const conn = yield* sql.reserve
            const rows = yield* conn.executeValues(
              "SELECT pg_backend_pid(), set_config('application_name', $1, false)",
              [leaseName]
            )
            return lockLeases(sql, conn, Number(rows[0]?.[0]), leaseName)
          }),
        orElse: () => Effect.succeed(rowLeases(sql))
      })
    })
  )

/** The leases, their connection named after this process only. */
export const layer = layerNamed("")
