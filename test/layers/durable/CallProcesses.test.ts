import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber, Layer, Option, Redacted, Scope } from "effect"
import * as CallProcesses from "../../../src/layers/durable/CallProcesses.js"
import * as DurableStore from "../../../src/layers/durable/DurableStore.js"
import * as SessionLease from "../../../src/layers/durable/SessionLease.js"
import * as ProcessGroup from "../../../src/layers/process/ProcessGroup.js"
import * as SpawnRecord from "../../../src/layers/process/SpawnRecord.js"
import * as Postgres from "../../fixtures/Postgres.js"

/** A group as a call's spawn records it (this test process stands in for the leader: nothing is signalled). */
const spawned = (call: string): SpawnRecord.Spawned => ({
  tag: `tag-${call}`,
  pid: process.pid,
  startTicks: SpawnRecord.startTicksOf(process.pid) ?? 0,
  bootId: SpawnRecord.bootId(),
  call
})

/** Ends a server process of the database from another connection (waiting until it is gone), as a server dropping a silent client does. */
const terminate = (url: string, backendPid: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT pg_terminate_backend(${backendPid}, 10000)`).pipe(
    Effect.provide(PgClient.layer({ url: Redacted.make(url) })),
    Effect.scoped,
    Effect.orDie
  )

/** Whether the group of this tag has its row. */
const recorded = (tag: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT tag FROM armature_processes WHERE tag = ${tag}`).pipe(
    Effect.map((rows) => rows.length === 1),
    Effect.orDie
  )

/** The defect's tag of a failed effect, if it died. */
const defectTag = <A, E>(exit: Exit.Exit<A, E>): string | undefined =>
  Exit.isFailure(exit)
    ? Option.match(Cause.dieOption(exit.cause), {
        onNone: () => undefined,
        onSome: (d) => (d as { readonly _tag?: string })._tag
      })
    : undefined

describe("CallProcesses: a call's start mark is fenced by the session's lease (PostgreSQL)", () => {
  it.scoped(
    "records a call's group and marks it while the lease is held here; once its connection is gone, or for a session not leased, neither goes in",
    () =>
      Effect.gen(function* () {
        const url = yield* Postgres.freshDatabase("armature_call_fence")
        yield* Effect.gen(function* () {
          const lease = yield* SessionLease.SessionLease
          const fence = Option.getOrThrow(lease.fence)
          const leased = yield* Scope.make()
          yield* lease.take("s1").pipe(Scope.extend(leased))
          const s1 = yield* CallProcesses.recorder("s1")
          yield* s1.started(spawned("toolu_a"))
          expect(yield* CallProcesses.callStarted("s1", "toolu_a")).toBe(true)
          // a mark already there is kept (a group of the same call started again)
          yield* s1.started({ ...spawned("toolu_a"), tag: "tag-toolu_a-2" })

          // a session whose lease this process does not hold: nothing is marked
          const s2 = yield* CallProcesses.recorder("s2")
          expect(defectTag(yield* Effect.exit(s2.started(spawned("toolu_b"))))).toBe("LeaseLost")
          expect(yield* CallProcesses.callStarted("s2", "toolu_b")).toBe(false)
          expect(yield* recorded("tag-toolu_b")).toBe(false)

          // the lease's connection is dropped (its locks go with it): the next call of s1 is not marked
          yield* terminate(url, fence.backendPid)
          expect(defectTag(yield* Effect.exit(s1.started(spawned("toolu_c"))))).toBe("LeaseLost")
          expect(yield* CallProcesses.callStarted("s1", "toolu_c")).toBe(false)
          expect(yield* recorded("tag-toolu_c")).toBe(false)
          expect(yield* CallProcesses.callStarted("s1", "toolu_a")).toBe(true)
          yield* Scope.close(leased, Exit.void)
        }).pipe(
          Effect.provide(
            Layer.mergeAll(SessionLease.layer, ProcessGroup.layer).pipe(
              Layer.provideMerge(DurableStore.sqlLayer({ _tag: "Postgres", url }))
            )
          )
        )
      })
  )

  it.scoped("a second taker is told the process whose connection holds the lock, not a stale row", () =>
    Effect.gen(function* () {
      const url = yield* Postgres.freshDatabase("armature_lease_holder")
      const store = DurableStore.sqlLayer({ _tag: "Postgres", url })
      const first = yield* Layer.build(SessionLease.layer.pipe(Layer.provideMerge(store)))
      const second = yield* Layer.build(SessionLease.layer.pipe(Layer.provideMerge(store)))
      yield* Effect.flatMap(SessionLease.SessionLease, (lease) => lease.take("s1")).pipe(Effect.provide(first))
      // the row still names a process of another host that held the lease before (its holder writes it just after
      // taking the lock)
      yield* Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql`UPDATE armature_leases SET pid = 1, host = 'elsewhere' WHERE session_id = 's1'`
      ).pipe(Effect.provide(first), Effect.orDie)
      const refused = yield* Effect.flatMap(SessionLease.SessionLease, (lease) => lease.take("s1")).pipe(
        Effect.provide(second),
        Effect.scoped,
        Effect.flip
      )
      expect(refused.message).toBe(`session s1 is being run by pid ${process.pid}`)
    })
  )
})

/**
 * A call of session s1 whose start is being recorded when it is interrupted: the real recorder's `started` runs,
 * then the record waits at a latch; the fiber is interrupted there and only then let go. The interrupt is told to
 * the fiber before the latch opens (its messages are taken in order), so no timing decides the outcome. The call's
 * command would leave a file behind, were its gate to open.
 */
const interruptedAtStart = (options: { readonly before?: (fence: SessionLease.LeaseFence) => Effect.Effect<void> }) =>
  Effect.gen(function* () {
    const real = yield* CallProcesses.recorder("s1")
    const recorded = yield* Deferred.make<SpawnRecord.Spawned>()
    const latch = yield* Deferred.make<void>()
    const latched: SpawnRecord.Recorder = {
      ...real,
      started: (spawned) =>
        real
          .started(spawned)
          .pipe(Effect.zipRight(Deferred.succeed(recorded, spawned)), Effect.zipRight(Deferred.await(latch)))
    }
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-withdraw-"))
    const ran = Path.join(dir, "ran")
    const call = ProcessGroup.spawn({
      file: "/bin/sh",
      args: ["-c", `echo ran > ${ran}`],
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"]
    }).pipe(
      Effect.flatMap((handle) => handle.exited),
      Effect.scoped,
      SpawnRecord.forCall("toolu_a"),
      SpawnRecord.recording(latched)
    )
    const fiber = yield* Effect.fork(call)
    const spawned = yield* Deferred.await(recorded)
    // the start is recorded: the mark is there while the record is not done
    expect(yield* CallProcesses.callStarted("s1", "toolu_a")).toBe(true)
    if (options.before !== undefined) {
      const lease = yield* SessionLease.SessionLease
      yield* options.before(Option.getOrThrow(lease.fence))
    }
    yield* Fiber.interruptFork(fiber)
    yield* Deferred.succeed(latch, undefined)
    const exit = yield* Fiber.await(fiber)
    return { exit, spawned, ran }
  })

/** The session lease and process layers over a fresh database. */
const leased = (url: string) =>
  Layer.mergeAll(SessionLease.layer, ProcessGroup.layer).pipe(
    Layer.provideMerge(DurableStore.sqlLayer({ _tag: "Postgres", url }))
  )

describe("CallProcesses: a call interrupted while its start is recorded never starts", () => {
  it.scoped(
    "its gate stays shut and its group row and start mark are taken back, so the next holder of the session runs it",
    () =>
      Effect.gen(function* () {
        const url = yield* Postgres.freshDatabase("armature_call_withdraw")
        const { exit, spawned, ran } = yield* Effect.gen(function* () {
          const lease = yield* SessionLease.SessionLease
          yield* lease.take("s1")
          return yield* interruptedAtStart({})
        }).pipe(Effect.scoped, Effect.provide(leased(url)))
        expect(Exit.isInterrupted(exit)).toBe(true)
        yield* Effect.gen(function* () {
          // the next holder of the session finds no mark (DurableSession: the call never started: run it) and no row
          const lease = yield* SessionLease.SessionLease
          yield* lease.take("s1")
          expect(yield* CallProcesses.callStarted("s1", "toolu_a")).toBe(false)
          expect(yield* recorded(spawned.tag)).toBe(false)
        }).pipe(Effect.scoped, Effect.provide(leased(url)))
        expect(Fs.existsSync(ran)).toBe(false)
      })
  )

  it.scoped("a mark put in by an earlier group of the same call stays: that group may have run", () =>
    Effect.gen(function* () {
      const url = yield* Postgres.freshDatabase("armature_call_withdraw_kept")
      const { exit } = yield* Effect.gen(function* () {
        const lease = yield* SessionLease.SessionLease
        yield* lease.take("s1")
        const earlier = yield* CallProcesses.recorder("s1")
        yield* earlier.started(spawned("toolu_a"))
        return yield* interruptedAtStart({})
      }).pipe(Effect.scoped, Effect.provide(leased(url)))
      expect(Exit.isInterrupted(exit)).toBe(true)
      expect(yield* CallProcesses.callStarted("s1", "toolu_a").pipe(Effect.provide(leased(url)), Effect.orDie)).toBe(
        true
      )
    })
  )

  it.scoped(
    "once the session's lease is gone from here, the mark stays (the call counts as one that may have run)",
    () =>
      Effect.gen(function* () {
        const url = yield* Postgres.freshDatabase("armature_call_withdraw_fenced")
        const { exit } = yield* Effect.gen(function* () {
          const lease = yield* SessionLease.SessionLease
          yield* lease.take("s1")
          return yield* interruptedAtStart({ before: (fence) => terminate(url, fence.backendPid) })
        }).pipe(Effect.scoped, Effect.provide(leased(url)))
        expect(Exit.isInterrupted(exit)).toBe(true)
        expect(yield* CallProcesses.callStarted("s1", "toolu_a").pipe(Effect.provide(leased(url)), Effect.orDie)).toBe(
          true
        )
      })
  )
})

describe("CallProcesses: the same in a session's SQLite file (no lease fence)", () => {
  it.scoped("a call interrupted while its start is recorded leaves no mark and no row", () =>
    Effect.gen(function* () {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-withdraw-sqlite-"))
      const store = DurableStore.sqlLayer({ _tag: "Sqlite", file: Path.join(dir, "s.db") })
      const { exit, spawned, ran } = yield* interruptedAtStart({}).pipe(
        Effect.provide(Layer.mergeAll(SessionLease.layer, ProcessGroup.layer).pipe(Layer.provideMerge(store)))
      )
      expect(Exit.isInterrupted(exit)).toBe(true)
      yield* Effect.gen(function* () {
        expect(yield* CallProcesses.callStarted("s1", "toolu_a")).toBe(false)
        expect(yield* recorded(spawned.tag)).toBe(false)
      }).pipe(Effect.provide(store), Effect.orDie)
      expect(Fs.existsSync(ran)).toBe(false)
    })
  )
})
