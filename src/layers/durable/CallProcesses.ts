/**
 * The process groups of a durable session's calls, kept in the session's store (`armature_processes`) from before
 * they run anything (see SpawnRecord) until they are gone. A process that outlives a crash of the engine running
 * its call is found here: when the session is taken up again (`resume`, a runner taking it over) its recorded
 * groups that still run are killed before anything else happens, so the model is told that the call was
 * interrupted only once it really has stopped, and the next call never runs beside it. `armature serve` also kills,
 * on start, the groups of runners on this machine that are gone.
 *
 * A group is signalled only when it is the one recorded: same machine, same boot, and a leader that either is gone
 * (its group then still holds the id, which the kernel does not hand out again meanwhile) or has the recorded start
 * time. A reused pid is never signalled; processes that left the group are found by the call's tag.
 */
import * as Os from "node:os"
import * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import { Data, Effect, Option } from "effect"
import { Processes, type ProcessesService } from "../../services/Processes.js"
import * as SpawnRecord from "../process/SpawnRecord.js"
import * as SessionLease from "./SessionLease.js"
import * as Tables from "./Tables.js"

/** Makes the tables if they are not there (once per SQL client: see Tables.once). */
export const ensureTable = Tables.once(
  "armature_processes",
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.zipRight(
      sql`CREATE TABLE IF NOT EXISTS armature_call_starts (
      session_id TEXT NOT NULL,
      call TEXT NOT NULL,
      PRIMARY KEY (session_id, call)
    )`,
      sql`CREATE TABLE IF NOT EXISTS armature_processes (
      tag TEXT PRIMARY KEY,
      session_id TEXT NOT NULL,
      pid INTEGER NOT NULL,
      start_ticks BIGINT NOT NULL,
      boot_id TEXT NOT NULL,
      host TEXT NOT NULL,
      owner_pid INTEGER NOT NULL,
      owner_start BIGINT NOT NULL,
      created_at BIGINT NOT NULL
    )`
    )
  )
)

/**
 * Whether a process of the call `toolUseId` of a session ever got past its gate (or was about to): the call's tool
 * may have had effects. A call begun by an execution that died without such a mark provably never started its work.
 * The mark stays after the group is gone.
 */
export const callStarted = (sessionId: string, toolUseId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM armature_call_starts
      WHERE session_id = ${sessionId} AND call = ${toolUseId}`.pipe(Effect.map((rows) => Number(rows[0]?.n ?? 0) > 0))
  )

interface Row {
  readonly tag: string
  readonly session_id: string
  readonly pid: number | string
  readonly start_ticks: number | string
  readonly boot_id: string
  readonly host: string
  readonly owner_pid: number | string
  readonly owner_start: number | string
}

/** The groups this process recorded and has not seen end: tag → leader pid and the service that started it. */
const live = new Map<string, { readonly pid: number; readonly processes: ProcessesService }>()

/**
 * Kills at once (SIGKILL) every group this process started for its sessions' calls, and the processes that left
 * them (by their tag): for a runner about to exit without waiting (a SIGTERM past its deadline, its database lost),
 * so that no call goes on unowned. Synchronous; returns how many groups it looked at.
 */
export const killOwnNow = (): number => {
  const groups = [...live.entries()]
  for (const [tag, { pid, processes }] of groups) {
    for (const member of processes.findDescendants(pid, tag)) {
      try {
        process.kill(member, "SIGKILL")
      } catch {
        // gone already
      }
    }
    try {
      process.kill(-pid, "SIGKILL")
    } catch {
      // gone already
    }
  }
  return groups.length
}

/** How many of the groups this process started are still running (for a runner's `GET /runner`). */
export const runningGroups = (): number => live.size

/** A call's start mark could not go in: this process no longer holds the session's lease. */
export class LeaseLost extends Data.TaggedError("LeaseLost")<{ readonly sessionId: string; readonly call: string }> {
  override get message(): string {
    return `session ${this.sessionId} is no longer leased to this process: call ${this.call} is not started`
  }
}

/**
 * A call's group row and start mark, both put in by one statement and only while this process holds the session's
 * lease (checked in that statement). A runner that lost its database and with it its locks (the server dropped its
 * connections, another runner took the session over) can thus start no call there, even if its link comes back
 * before it has stopped: nothing goes in, and the gate stays shut. One statement also leaves no moment between the
 * two writes for a crash to fall in. A mark already there (put in earlier) is kept.
 */
const fencedStart = (
  sql: SqlClient.SqlClient,
  fence: SessionLease.LeaseFence,
  sessionId: string,
  call: string,
  values: Statement.Fragment
) =>
  Effect.gen(function* () {
    const rows = yield* sql<{
      held: boolean
      marked: number | string
    }>`WITH lease AS (SELECT ${SessionLease.leaseHeld(sql, fence, sessionId)} AS held),
      grp AS (
        INSERT INTO armature_processes (tag, session_id, pid, start_ticks, boot_id, host, owner_pid, owner_start, created_at)
        SELECT ${values} WHERE (SELECT held FROM lease)
      ),
      mark AS (
        INSERT INTO armature_call_starts (session_id, call) SELECT ${sessionId}, ${call} WHERE (SELECT held FROM lease)
        ON CONFLICT (session_id, call) DO NOTHING
        RETURNING call
      )
      SELECT held, (SELECT COUNT(*) FROM mark) AS marked FROM lease`
    if (rows[0]?.held !== true) return yield* new LeaseLost({ sessionId, call })
    return Number(rows[0]?.marked ?? 0) > 0
  }).pipe(Effect.orDie)

/**
 * Takes back what `fencedStart` put in for a group whose gate stayed shut: its row, and the call's mark when `marked`
 * (this group put it in), only while the session is still leased here. Returns whether the lease was held; when it
 * was not, the mark stays (whoever holds the session now may have read it already: the call counts as one that may
 * have run, never as one to run again).
 */
const fencedWithdraw = (
  sql: SqlClient.SqlClient,
  fence: SessionLease.LeaseFence,
  sessionId: string,
  spawned: SpawnRecord.Spawned,
  marked: boolean
) =>
  sql<{ held: boolean }>`WITH lease AS (SELECT ${SessionLease.leaseHeld(sql, fence, sessionId)} AS held),
      grp AS (DELETE FROM armature_processes WHERE tag = ${spawned.tag} AND (SELECT held FROM lease)),
      mark AS (
        DELETE FROM armature_call_starts
        WHERE session_id = ${sessionId} AND call = ${spawned.call ?? ""} AND ${marked}::boolean AND (SELECT held FROM lease)
      )
      SELECT held FROM lease`.pipe(Effect.map((rows) => rows[0]?.held === true))

/** This process as the owner of the groups it records: its pid and start time. */
const self = { pid: process.pid, start: SpawnRecord.startTicksOf(process.pid) ?? 0 }

/**
 * The recorder of a session's calls, writing to the store of the SQL client in context. A group that cannot be
 * recorded is not run (the call fails); a record that cannot be removed is logged and left for the next sweep.
 */
export const recorder = (sessionId: string) =>
  Effect.gen(function* () {
    yield* ensureTable
    const sql = yield* SqlClient.SqlClient
    const processes = yield* Processes
    const host = Os.hostname()
    // the session's lease as the database holds it (PostgreSQL): a call's marks go in only while it is held here
    const fence = Option.flatMap(yield* Effect.serviceOption(SessionLease.SessionLease), (lease) => lease.fence)
    const values = (spawned: SpawnRecord.Spawned) =>
      sql`${spawned.tag}, ${sessionId}, ${spawned.pid}, ${spawned.startTicks}, ${spawned.bootId}, ${host}, ${self.pid},
        ${self.start}, ${Date.now()}`
    // the same typed (PostgreSQL), for a row selected rather than given as VALUES (which take the table's types)
    const typed = (spawned: SpawnRecord.Spawned) =>
      sql`${spawned.tag}::text, ${sessionId}::text, ${spawned.pid}::integer, ${spawned.startTicks}::bigint,
        ${spawned.bootId}::text, ${host}::text, ${self.pid}::integer, ${self.start}::bigint, ${Date.now()}::bigint`
    // the group's row, then the call's start mark: the mark is the last write before the gate opens, so that a
    // process that dies between the two leaves a call that provably never started (run again where it is taken up)
    const unfenced = (spawned: SpawnRecord.Spawned) =>
      Effect.zipRight(
        sql`INSERT INTO armature_processes
          (tag, session_id, pid, start_ticks, boot_id, host, owner_pid, owner_start, created_at)
          VALUES (${values(spawned)})`,
        spawned.call === undefined
          ? Effect.succeed(false)
          : sql<{
              call: string
            }>`INSERT INTO armature_call_starts (session_id, call) VALUES (${sessionId}, ${spawned.call})
              ON CONFLICT (session_id, call) DO NOTHING RETURNING call`.pipe(Effect.map((rows) => rows.length > 0))
      ).pipe(Effect.orDie)
    // the groups whose record put their call's start mark in (not one already there): only those take it back
    const marks = new Set<string>()
    const withdrawUnfenced = (spawned: SpawnRecord.Spawned, marked: boolean) =>
      Effect.zipRight(
        sql`DELETE FROM armature_processes WHERE tag = ${spawned.tag}`,
        marked && spawned.call !== undefined
          ? sql`DELETE FROM armature_call_starts WHERE session_id = ${sessionId} AND call = ${spawned.call}`
          : Effect.void
      ).pipe(Effect.as(true))
    return {
      started: (spawned) =>
        Option.match(fence, {
          onNone: () => unfenced(spawned),
          onSome: (held) =>
            spawned.call === undefined
              ? unfenced(spawned)
              : fencedStart(sql, held, sessionId, spawned.call, typed(spawned))
        }).pipe(
          Effect.flatMap((marked) =>
            Effect.sync(() => {
              live.set(spawned.tag, { pid: spawned.pid, processes })
              if (marked) marks.add(spawned.tag)
            })
          )
        ),
      ended: (tag) =>
        Effect.sync(() => {
          live.delete(tag)
          marks.delete(tag)
        }).pipe(
          Effect.zipRight(
            sql`DELETE FROM armature_processes WHERE tag = ${tag}`.pipe(
              Effect.asVoid,
              Effect.catchAll((e) =>
                Effect.logWarning(`armature: the record of process group ${tag} stays: ${e.message}`)
              )
            )
          )
        ),
      withdrawn: (spawned) =>
        Effect.gen(function* () {
          const marked = marks.has(spawned.tag)
          live.delete(spawned.tag)
          marks.delete(spawned.tag)
          const held = yield* Option.match(fence, {
            onNone: () => withdrawUnfenced(spawned, marked),
            onSome: (lease) =>
              spawned.call === undefined
                ? withdrawUnfenced(spawned, false)
                : fencedWithdraw(sql, lease, sessionId, spawned, marked)
          })
          if (!held) {
            yield* Effect.logWarning(
              `armature: call ${spawned.call} of session ${sessionId} was stopped at its start, but the session is no longer leased here: its start mark stays`
            )
          }
        }).pipe(
          Effect.catchAll((e) =>
            Effect.logWarning(
              `armature: the start of process group ${spawned.tag} could not be withdrawn: ${e.message}`
            )
          )
        )
    } satisfies SpawnRecord.Recorder
  })

/** Whether a recorded group can be checked from here (this machine, this boot). */
const local = (row: Row): boolean => row.host === Os.hostname() && row.boot_id === SpawnRecord.bootId()

/**
 * Kills what is left of a recorded group (SIGTERM, then SIGKILL; see Processes.killAll) and waits until it is gone.
 * The group id is signalled only when it is still the recorded group; the tag finds the rest either way.
 */
const killRecorded = (processes: ProcessesService, row: Row): Effect.Effect<void> => {
  const pid = Number(row.pid)
  const started = Number(row.start_ticks)
  const leader = SpawnRecord.startTicksOf(pid)
  const sameGroup = leader === undefined ? processes.groupExists(pid) : leader === started
  return processes.killAll(sameGroup ? pid : -1, row.tag, processes.defaultKillGraceMs, started)
}

/** Kills each row's group when it is local, and removes the rows of the groups that are gone. */
const sweep = (rows: ReadonlyArray<Row>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const processes = yield* Processes
    let killed = 0
    for (const row of rows) {
      if (row.host !== Os.hostname()) {
        yield* Effect.logWarning(
          `armature: process group ${row.pid} of session ${row.session_id} ran on ${row.host}; it cannot be checked from here`
        )
        continue
      }
      // on another boot the group is gone with the machine's processes
      if (local(row)) {
        yield* killRecorded(processes, row)
        killed += 1
      }
      yield* sql`DELETE FROM armature_processes WHERE tag = ${row.tag}`
    }
    return killed
  })

/**
 * Kills the recorded groups of a session that still run, before the session goes on (its owner takes it up again:
 * whatever its calls left running belongs to an execution that is over). Returns how many were looked at.
 */
export const killLeftovers = (sessionId: string) =>
  Effect.gen(function* () {
    yield* ensureTable
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<Row>`SELECT * FROM armature_processes WHERE session_id = ${sessionId}`
    return yield* sweep(rows)
  })

/** Kills the recorded groups whose owner on this machine is gone (a runner that died), whatever their session. */
export const killOrphans = Effect.gen(function* () {
  yield* ensureTable
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<Row>`SELECT * FROM armature_processes WHERE host = ${Os.hostname()}`
  const orphaned = rows.filter((row) => {
    const owner = SpawnRecord.startTicksOf(Number(row.owner_pid))
    return !local(row) || owner === undefined || owner !== Number(row.owner_start)
  })
  return yield* sweep(orphaned)
})
