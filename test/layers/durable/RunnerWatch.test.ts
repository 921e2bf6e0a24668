import { RunnerUnavailable } from "@effect/cluster/ClusterError"
import * as Runner from "@effect/cluster/Runner"
import * as RunnerAddress from "@effect/cluster/RunnerAddress"
import * as RunnerHealth from "@effect/cluster/RunnerHealth"
import * as RunnerStorage from "@effect/cluster/RunnerStorage"
import * as Runners from "@effect/cluster/Runners"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as SqlRunnerStorage from "@effect/cluster/SqlRunnerStorage"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer, Schedule, Scope } from "effect"
import * as DurableStore from "../../../src/layers/durable/DurableStore.js"
import * as RunnerWatch from "../../../src/layers/durable/RunnerWatch.js"
import * as SessionLease from "../../../src/layers/durable/SessionLease.js"
import * as Postgres from "../../fixtures/Postgres.js"

const address = (port: number) => RunnerAddress.make("127.0.0.1", port)

/**
 * The runners' network, as far as the watch sees it: a ping to a runner in `down` fails (as a refused connection
 * does), any other is answered. The storage the watch reads and writes is the cluster's real SQL runner storage.
 */
const network = (down: Set<number>, pings = { count: 0 }) =>
  Layer.succeed(Runners.Runners, {
    ping: (to: RunnerAddress.RunnerAddress) =>
      Effect.suspend(() => {
        pings.count++
        return down.has(to.port) ? Effect.fail(new RunnerUnavailable({ address: to })) : Effect.void
      })
  } as unknown as Runners.Runners["Type"])

/** The cluster's SQL runner storage on the database at `url`, the fake network and the SQL client. */
const provide = (url: string, down: Set<number>) =>
  Effect.provide(
    Layer.mergeAll(
      Layer.orDie(SqlRunnerStorage.layer).pipe(
        Layer.provide(ShardingConfig.layer({ shardLockExpiration: "30 seconds" }))
      ),
      network(down)
    ).pipe(Layer.provideMerge(DurableStore.sqlLayer({ _tag: "Postgres", url })))
  )

const health = Effect.flatMap(RunnerStorage.RunnerStorage, (storage) => storage.getRunners).pipe(
  Effect.map((runners) => Object.fromEntries(runners.map(([runner, healthy]) => [runner.address.port, healthy])))
)

const register = (ports: ReadonlyArray<number>) =>
  Effect.flatMap(RunnerStorage.RunnerStorage, (storage) =>
    Effect.forEach(
      ports,
      (port) => storage.register(Runner.make({ address: address(port), groups: ["default"], weight: 1 }), true),
      { discard: true }
    )
  )

/** Holds the liveness locks of the runners at `ports` (as their processes do) until `scope` closes. */
const alive = (ports: ReadonlyArray<number>, scope: Scope.Scope) =>
  Effect.forEach(
    ports,
    (port) =>
      Layer.buildWithScope(
        RunnerWatch.liveness({ host: "127.0.0.1", port }, "5 seconds", () => Effect.void),
        scope
      ),
    { discard: true }
  )

/** Waits (every 50 ms, at most 30 s) until the stored health is `expected`. */
const healthBecomes = (expected: Record<number, boolean>) =>
  health.pipe(
    Effect.filterOrFail((now) => JSON.stringify(now) === JSON.stringify(expected)),
    Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo("30 seconds"))),
    Effect.orElse(() => Effect.flatMap(health, (now) => Effect.dieMessage(`health stayed ${JSON.stringify(now)}`)))
  )

describe("RunnerWatch", () => {
  it.scopedLive(
    "a round marks a runner that does not answer unhealthy, one that answers again healthy, and the watcher itself healthy",
    () =>
      Effect.gen(function* () {
        const url = yield* Postgres.freshDatabase("armature_runner_watch")
        const down = new Set<number>()
        yield* Effect.gen(function* () {
          const storage = yield* RunnerStorage.RunnerStorage
          yield* register([7001, 7002, 7003, 7004])
          yield* storage.setRunnerHealth(address(7004), false)
          // 7003 died; 7004 had been marked unhealthy and answers again
          down.add(7003)
          yield* RunnerWatch.checkOnce(address(7001))
          expect(yield* health).toEqual({ 7001: true, 7002: true, 7003: false, 7004: true })
          // a watcher that an earlier watcher marked down marks itself up: it is alive
          yield* storage.setRunnerHealth(address(7001), false)
          down.add(7002)
          down.delete(7003)
          yield* RunnerWatch.checkOnce(address(7001))
          expect(yield* health).toEqual({ 7001: true, 7002: false, 7003: true, 7004: true })
        }).pipe(provide(url, down))
      }),
    60_000
  )

  it.scopedLive(
    "one runner watches at a time: two that cannot reach each other do not both go down; when the watcher goes, another takes over",
    () =>
      Effect.gen(function* () {
        const url = yield* Postgres.freshDatabase("armature_runner_watch_split")
        // 7001 and 7002 cannot reach each other (a partition, or runner addresses that do not route)
        const down = new Set([7001, 7002])
        yield* Effect.gen(function* () {
          yield* register([7001, 7002, 7003])
          // all three are alive as the database sees them: each holds its liveness lock
          yield* alive([7001, 7002, 7003], yield* Effect.scope)
          const scopes = [yield* Scope.make(), yield* Scope.make()]
          // each runner's pings, counted
          const pings = [{ count: 0 }, { count: 0 }]
          const watchers = yield* Effect.forEach([7001, 7002], (port, i) =>
            Effect.forkDaemon(
              RunnerWatch.watch(address(port), "100 millis").pipe(
                Effect.provideService(Scope.Scope, scopes[i]),
                Effect.provide(network(down, pings[i]))
              )
            )
          )
          // the watcher marks the other down, and only that one, for as long as it watches
          const split = yield* health.pipe(
            Effect.filterOrFail((now) => now[7001] !== now[7002]),
            Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo("30 seconds")))
          )
          const watcher = split[7001] ? 0 : 1
          const other = 1 - watcher
          yield* Effect.sleep("3 seconds")
          expect(yield* health).toEqual(split)
          // the other runner has not pinged anyone: it is not the watcher
          expect(pings[other].count).toBe(0)
          expect(pings[watcher].count).toBeGreaterThan(0)
          // the watcher stops (its lock connection closes, as when its process dies) and 7003 goes down; the other
          // runner becomes the watcher: it marks itself up (the first watcher had marked it down), then the others
          yield* Fiber.interrupt(watchers[watcher])
          yield* Scope.close(scopes[watcher], Exit.void)
          down.add(7003)
          // the new watcher finds 7003 down, and the old one (gone, as far as its pings tell) too
          yield* healthBecomes({ [7001 + watcher]: false, [7001 + other]: true, 7003: false })
          yield* Fiber.interrupt(watchers[other])
          yield* Scope.close(scopes[other], Exit.void)
        }).pipe(provide(url, down))
      }),
    90_000
  )

  it.scopedLive(
    "a runner whose liveness lock is free is marked down without waiting for pings; once it holds it again, up",
    () =>
      Effect.gen(function* () {
        const url = yield* Postgres.freshDatabase("armature_runner_watch_liveness")
        // every ping is answered: only the lock tells
        yield* Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const conn = yield* sql.reserve
          yield* register([7001, 7002])
          yield* alive([7001], yield* Effect.scope)
          const pings = { count: 0 }
          const round = RunnerWatch.checkOnce(address(7001), conn).pipe(Effect.provide(network(new Set(), pings)))
          yield* round
          expect(yield* health).toEqual({ 7001: true, 7002: false })
          expect(pings.count).toBe(0)
          // 7002's process takes its lock (it was slow to start, or came back): the ping finds it, it is up
          const holder = yield* Scope.make()
          yield* alive([7002], holder)
          yield* round
          expect(yield* health).toEqual({ 7001: true, 7002: true })
          expect(pings.count).toBe(1)
          // each runner's other connections, named with its tag, each holding a lock (as its shard locks and leases)
          const named = (port: number, lock: number) =>
            Effect.gen(function* () {
              const context = yield* Layer.build(
                DurableStore.sqlLayer(
                  { _tag: "Postgres", url },
                  SessionLease.processName(RunnerWatch.runnerTag(address(port)))
                )
              )
              const other = yield* Context.get(context, SqlClient.SqlClient).reserve
              yield* other.executeRaw("SELECT pg_advisory_lock($1)", [lock])
            })
          yield* named(7001, 70011)
          yield* named(7002, 70021)
          const held = (lock: number) =>
            Effect.map(
              sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM pg_locks
                WHERE locktype = 'advisory' AND granted AND objid = ${lock}`,
              (rows) => Number(rows[0]?.n ?? 0) === 1
            )
          expect([yield* held(70011), yield* held(70021)]).toEqual([true, true])
          // its connection goes (the process died, or the database lost its host): down at the next round, and its
          // other connections are ended at once (their locks free), not when the server's keepalive finds them
          yield* Scope.close(holder, Exit.void)
          yield* round
          expect(yield* health).toEqual({ 7001: true, 7002: false })
          expect(pings.count).toBe(1)
          expect([yield* held(70011), yield* held(70021)]).toEqual([true, false])
        }).pipe(provide(url, new Set()))
      }),
    60_000
  )

  it.scopedLive("the cluster's own check sees the stored health, so it finds nothing to write", () =>
    Effect.gen(function* () {
      const url = yield* Postgres.freshDatabase("armature_runner_watch_stored")
      yield* Effect.gen(function* () {
        yield* register([7001, 7002])
        yield* Effect.flatMap(RunnerStorage.RunnerStorage, (s) => s.setRunnerHealth(address(7002), false))
        const stored = yield* RunnerHealth.RunnerHealth
        expect(yield* stored.isAlive(address(7001))).toBe(true)
        expect(yield* stored.isAlive(address(7002))).toBe(false)
      }).pipe(Effect.provide(RunnerWatch.storedHealth), provide(url, new Set()))
    })
  )
})
