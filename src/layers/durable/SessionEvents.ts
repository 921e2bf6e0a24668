/**
 * The events of sessions served by `armature serve`, kept in the database the runners share: one row per line of
 * the session's `stream-json` output. Any runner reads them, whichever runner runs the session, so a client may
 * stream a session from any runner and pick up where it left off.
 *
 * Each line is stored with its place: the model turn of the session it belongs to (0 before the first), the attempt
 * (which asking of that turn: the execution that streamed the model's answer) and a key naming the line within the
 * turn (a tool call's id for its `tool_use` and `tool_result` lines, else its kind and how many of that kind came
 * before). A replayed execution (a runner taking a session over, a follow-up prompt) prints its lines again; a line
 * of a stored turn comes back with the same place and is not stored twice. A turn asked again (the runner streaming
 * it died before it was stored) has a new attempt: its lines are new, and the earlier attempt's lines of that turn
 * are superseded. Lines are numbered (`seq`) per session in the order they were stored.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { PgClient } from "@effect/sql-pg"
import { type Console, Effect, PubSub, Schedule, Stream } from "effect"
import * as Tables from "./Tables.js"

/** Where a line printed now belongs: the model turn of the session's own conversation, and its attempt. */
export interface Position {
  readonly turn: number
  readonly attempt: string
}

/** A stored line of a session's output, with its place. */
export interface EventRow {
  readonly seq: number
  readonly turn: number
  readonly attempt: string
  readonly line: string
}

/** Makes the tables (events, and interrupt requests) if they are not there (once per SQL client: Tables.once). */
export const ensureTables = Tables.once(
  "armature_event_lines",
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.all([
      sql`CREATE TABLE IF NOT EXISTS armature_event_lines (
      session_id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      turn INTEGER NOT NULL,
      attempt TEXT NOT NULL,
      key TEXT NOT NULL,
      line TEXT NOT NULL,
      PRIMARY KEY (session_id, seq),
      UNIQUE (session_id, turn, attempt, key)
    )`,
      sql`CREATE INDEX IF NOT EXISTS armature_event_lines_turn ON armature_event_lines (session_id, turn, seq)`,
      sql`CREATE TABLE IF NOT EXISTS armature_interrupts (
      session_id TEXT NOT NULL,
      prompt INTEGER NOT NULL,
      PRIMARY KEY (session_id, prompt)
    )`
    ])
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

/** The place of a line: its turn, its attempt and its key within them. */
export interface Place extends Position {
  readonly key: string
}

/**
 * Stores a line of a session at its place, unless a line is stored there already, as the session's next line, and
 * tells the readers (one statement: the notification goes only when a line was stored). Two writers of one session
 * at once (a runner cut off that has not noticed yet) may pick the same number: the loser tries again.
 */
export const append = (sessionId: string, place: Place, line: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`WITH stored AS (
        INSERT INTO armature_event_lines (session_id, seq, turn, attempt, key, line)
        SELECT ${sessionId}, COALESCE(MAX(seq), 0) + 1, ${place.turn}, ${place.attempt}, ${place.key}, ${line}
          FROM armature_event_lines WHERE session_id = ${sessionId}
        ON CONFLICT (session_id, turn, attempt, key) DO NOTHING RETURNING 1
      ) SELECT pg_notify(${channel}, ${sessionId}) FROM stored`.pipe(
      Effect.retry({ times: 5, schedule: Schedule.exponential("5 millis") })
    )
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

/**
 * The stored lines of a session after line `seq`, in order (at most `limit`): by default only those of each turn's
 * latest attempt (the attempt of the turn's last stored line), with `all` every line.
 */
export const after = (
  sessionId: string,
  seq: number,
  options: { readonly limit?: number; readonly all?: boolean } = {}
) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ seq: number; turn: number; attempt: string; line: string }>`SELECT seq, turn, attempt, line
      FROM armature_event_lines e
      WHERE session_id = ${sessionId} AND seq > ${seq}
        AND (${options.all === true}::boolean OR attempt = (
          SELECT f.attempt FROM armature_event_lines f
          WHERE f.session_id = e.session_id AND f.turn = e.turn ORDER BY f.seq DESC LIMIT 1))
      ORDER BY seq LIMIT ${options.limit ?? 500}`.pipe(
      Effect.map(
        (rows): ReadonlyArray<EventRow> =>
          rows.map((r) => ({ seq: Number(r.seq), turn: Number(r.turn), attempt: r.attempt, line: r.line }))
      )
    )
  )

/** How many lines a session shows (each turn's latest attempt). */
export const count = (sessionId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM armature_event_lines e
      WHERE session_id = ${sessionId} AND attempt = (
        SELECT f.attempt FROM armature_event_lines f
        WHERE f.session_id = e.session_id AND f.turn = e.turn ORDER BY f.seq DESC LIMIT 1)`.pipe(
      Effect.map((rows) => Number(rows[0]?.n ?? 0))
    )
  )

/**
 * A line as a client gets it: the stored line with its number, turn and attempt added (a line that is not a JSON
 * object is given as is).
 */
export const served = (row: EventRow): string => {
  try {
    const value: unknown = JSON.parse(row.line)
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      return JSON.stringify({ ...value, seq: row.seq, turn: row.turn, attempt: row.attempt })
    }
  } catch {
    // not JSON: as stored
  }
  return row.line
}

const blockIds = (value: Record<string, unknown>, type: string, field: string): ReadonlyArray<string> => {
  const message = value.message
  if (typeof message !== "object" || message === null) return []
  const content = (message as { content?: unknown }).content
  if (!Array.isArray(content)) return []
  return content.flatMap((block: unknown) => {
    if (typeof block !== "object" || block === null) return []
    const b = block as Record<string, unknown>
    return b.type === type && typeof b[field] === "string" ? [b[field] as string] : []
  })
}

/**
 * The kind of a line, for its key: a tool call's lines are named by the call's id (so that results that come back
 * in another order on a replay keep their places); other lines by their type, subtype and parent call.
 */
export const kindOf = (line: string): { readonly id: string } | { readonly kind: string } => {
  try {
    const value: unknown = JSON.parse(line)
    if (typeof value !== "object" || value === null) return { kind: "other" }
    const v = value as Record<string, unknown>
    const uses = v.type === "assistant" ? blockIds(v, "tool_use", "id") : []
    if (uses.length > 0) return { id: `use/${uses.join(",")}` }
    const results = v.type === "user" ? blockIds(v, "tool_result", "tool_use_id") : []
    if (results.length > 0) return { id: `result/${results.join(",")}` }
    return { kind: `${String(v.type)}/${String(v.subtype ?? "")}/${String(v.parent_tool_use_id ?? "")}` }
  } catch {
    return { kind: "other" }
  }
}

/**
 * What is sent on `channel` when an interrupt of a session is asked for: not the session's id, so that its event
 * streams are not woken for it.
 */
export const interruptKey = (sessionId: string): string => `interrupt:${sessionId}`

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

/** A place as one string (for `storedPlaces`). */
export const placeKey = (place: Place): string => `${place.turn}\u0000${place.attempt}\u0000${place.key}`

/** The places of a session's stored lines (`placeKey`), read at once before a replay prints them again. */
export const storedPlaces = (sessionId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ turn: number; attempt: string; key: string }>`SELECT turn, attempt, key FROM armature_event_lines
      WHERE session_id = ${sessionId}`.pipe(
      Effect.map((rows): ReadonlySet<string> => new Set(rows.map((r) => placeKey({ ...r, turn: Number(r.turn) }))))
    )
  )

/**
 * A console whose `log` lines are the session's events, each stored at its place: `position` tells the turn and
 * attempt the line belongs to when it is printed. The loggers' output goes to the runner's stderr, and the rest of
 * what it is told is dropped.
 */
export const console = (
  sessionId: string,
  position: () => Position = () => ({ turn: 0, attempt: "" }),
  stored: ReadonlySet<string> = new Set()
) =>
  Effect.map(SqlClient.SqlClient, (sql) => {
    // per turn and attempt, how many lines of each kind were printed
    const seen = new Map<string, number>()
    const log = (...args: ReadonlyArray<unknown>) =>
      Effect.suspend(() => {
        const line = args.map(String).join(" ")
        const { turn, attempt } = position()
        const kind = kindOf(line)
        let key: string
        if ("id" in kind) key = kind.id
        else {
          const counter = `${turn}\u0000${attempt}\u0000${kind.kind}`
          const n = (seen.get(counter) ?? 0) + 1
          seen.set(counter, n)
          key = `${kind.kind}/${n}`
        }
        // a line of a replayed turn is stored already: it would not be stored again, so it is not sent
        if (stored.has(placeKey({ turn, attempt, key }))) return Effect.void
        return append(sessionId, { turn, attempt, key }, line).pipe(
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
