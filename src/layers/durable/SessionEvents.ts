/**
 * The events of sessions served by `armature serve`, kept in the database the runners share: one row per line of
 * the session's `stream-json` output, numbered from 1 within the session. Any runner reads them, whichever runner
 * runs the session, so a client may stream a session from any runner and pick up where it left off.
 *
 * A replayed execution (a runner taking a session over, a follow-up prompt) prints its lines again from the first;
 * a line's number is its position in that output, so a line already stored is not stored twice.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { PgClient } from "@effect/sql-pg"
import { type Console, Effect, PubSub, Schedule, Stream } from "effect"

/** A stored line of a session's output. */
export interface EventRow {
  readonly seq: number
  readonly line: string
}

/** Makes the tables (events, and interrupt requests) if they are not there. */
export const ensureTables = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.zipRight(
    sql`CREATE TABLE IF NOT EXISTS armature_events (
      session_id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      line TEXT NOT NULL,
      PRIMARY KEY (session_id, seq)
    )`,
    sql`CREATE TABLE IF NOT EXISTS armature_interrupts (
      session_id TEXT NOT NULL,
      prompt INTEGER NOT NULL,
      PRIMARY KEY (session_id, prompt)
    )`
  )
)

/**
 * The PostgreSQL channel on which a session's id is sent when it has a new line or changed state: readers of its
 * events wait on it instead of polling.
 */
export const channel = "armature_session_changed"

/** Tells the readers of a session's events that something changed (a new state). */
export const changed = (sessionId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT pg_notify(${channel}, ${sessionId})`)

/**
 * Stores line `seq` of a session, unless a line with that number is stored already, and tells the readers (one
 * statement: the notification goes only when a line was stored).
 */
export const append = (sessionId: string, seq: number, line: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`WITH stored AS (
        INSERT INTO armature_events (session_id, seq, line) VALUES (${sessionId}, ${seq}, ${line})
        ON CONFLICT (session_id, seq) DO NOTHING RETURNING 1
      ) SELECT pg_notify(${channel}, ${sessionId}) FROM stored`
  )

/**
 * The ids of sessions that changed, as this runner's one listening connection hears them, for any number of readers
 * to subscribe to. The listener runs as long as the scope.
 */
export const changes = (pg: PgClient.PgClient) =>
  Effect.gen(function* () {
    const hub = yield* PubSub.sliding<string>(1024)
    yield* pg.listen(channel).pipe(
      Stream.runForEach((id) => PubSub.publish(hub, id)),
      Effect.retry(Schedule.spaced("1 second")),
      Effect.forkScoped
    )
    return hub
  })

/** The stored lines of a session after line `after`, in order (at most `limit`). */
export const after = (sessionId: string, seq: number, limit = 500) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ seq: number; line: string }>`SELECT seq, line FROM armature_events
      WHERE session_id = ${sessionId} AND seq > ${seq} ORDER BY seq LIMIT ${limit}`.pipe(
      Effect.map((rows): ReadonlyArray<EventRow> => rows.map((r) => ({ seq: Number(r.seq), line: r.line })))
    )
  )

/** How many lines a session has stored. */
export const count = (sessionId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM armature_events WHERE session_id = ${sessionId}`.pipe(
      Effect.map((rows) => Number(rows[0]?.n ?? 0))
    )
  )

/** Records that the user asked to interrupt the session's run of its prompt number `prompt` (0 is the first). */
export const requestInterrupt = (sessionId: string, prompt: number) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`INSERT INTO armature_interrupts (session_id, prompt) VALUES (${sessionId}, ${prompt})
        ON CONFLICT (session_id, prompt) DO NOTHING`
  )

/** Whether an interrupt of the session's run of prompt `prompt` was asked for. */
export const interruptRequested = (sessionId: string, prompt: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM armature_interrupts
      WHERE session_id = ${sessionId} AND prompt = ${prompt}`.pipe(Effect.map((rows) => Number(rows[0]?.n ?? 0) > 0))
  )

/**
 * A console whose `log` lines are the session's events (numbered from 1 in the order printed); the loggers' output
 * goes to the runner's stderr, and the rest of what it is told is dropped.
 */
export const console = (sessionId: string) =>
  Effect.map(SqlClient.SqlClient, (sql) => {
    let seq = 0
    const log = (...args: ReadonlyArray<unknown>) =>
      Effect.suspend(() => {
        seq += 1
        return append(sessionId, seq, args.map(String).join(" ")).pipe(
          Effect.provideService(SqlClient.SqlClient, sql),
          Effect.orDie
        )
      })
    // the loggers write through `unsafe` (synchronously): to the runner's stderr, as its own log
    const unsafe = new Proxy({} as Console.UnsafeConsole, {
      get:
        () =>
        (...args: ReadonlyArray<unknown>) =>
          globalThis.console.error(...args)
    })
    return new Proxy({} as Console.Console, {
      get: (_target, key) => (key === "log" ? log : key === "unsafe" ? unsafe : () => Effect.void)
    })
  })
