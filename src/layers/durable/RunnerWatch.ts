/**
 * Every runner of `armature serve` checks the other runners itself. `@effect/cluster` checks runners from one
 * cluster singleton: when the runner that died was the one running it, nobody marked it unhealthy, and its shards
 * (its sessions) stayed assigned to it until its heartbeat in the database aged past the lock expiration (30 s).
 * With a watch in each runner, a dead runner is found by a surviving one within one check interval and the ping's
 * retries, whichever runner held the singleton.
 *
 * The check is the cluster's own: a runner is alive when it answers a ping (retried, as `RunnerHealth.layerPing`
 * does); the finding is written to the runner storage, where every runner's shard assignment reads it.
 *
 * Two runners that reach the database but not each other (a partition, or a wrong `--runner-host`) must not both
 * mark the other down: then no runner would be healthy and every session would stop. So one round runs at a time
 * in the whole cluster — a round holds a PostgreSQL advisory lock for its transaction, and a runner that finds it
 * taken skips its round — and a runner marks others down only while it is itself healthy: the second of two such
 * runners finds itself marked down by the first and leaves the first alone. Unlike the cluster's singleton, the
 * lock is free again the moment its holder's connection goes.
 */
import * as RunnerAddress from "@effect/cluster/RunnerAddress"
import * as RunnerHealth from "@effect/cluster/RunnerHealth"
import * as RunnerStorage from "@effect/cluster/RunnerStorage"
import * as SqlClient from "@effect/sql/SqlClient"
import { type Duration, Effect, Equal, Layer } from "effect"

/** One round: each other runner pinged; a change of health written. */
export const checkOnce = (self: RunnerAddress.RunnerAddress) =>
  Effect.gen(function* () {
    const storage = yield* RunnerStorage.RunnerStorage
    const health = yield* RunnerHealth.makePing
    const runners = yield* storage.getRunners
    const selfHealthy = runners.some(([runner, healthy]) => healthy && Equal.equals(runner.address, self))
    yield* Effect.forEach(
      runners.filter(([runner]) => !Equal.equals(runner.address, self)),
      ([runner, healthy]) =>
        Effect.flatMap(health.isAlive(runner.address), (alive) =>
          alive === healthy || (!alive && !selfHealthy)
            ? Effect.void
            : Effect.zipRight(
                Effect.logDebug(`runner ${runner.address.host}:${runner.address.port} is ${alive ? "back" : "gone"}`),
                storage.setRunnerHealth(runner.address, alive)
              )
        ),
      { concurrency: 10, discard: true }
    )
  }).pipe(Effect.scoped)

/** The advisory lock of a round (the two-key form, apart from the cluster's one-key shard locks): "armature", 1. */
const roundLock = [0x61726d61, 1] as const

/** A round of the runner at `self` if no other runner's round is running: the round holds `roundLock`. */
export const round = (self: RunnerAddress.RunnerAddress) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      Effect.gen(function* () {
        const [row] = yield* sql<{ readonly locked: boolean }>`
          SELECT pg_try_advisory_xact_lock(${roundLock[0]}, ${roundLock[1]}) AS locked`
        if (row?.locked === true) yield* checkOnce(self)
      })
    )
  )

/** Runs the watch of the runner at `self` for as long as the layer lives, a round every `interval`. */
export const layer = (self: { readonly host: string; readonly port: number }, interval: Duration.DurationInput) =>
  Layer.scopedDiscard(
    Effect.forkScoped(
      round(RunnerAddress.make(self.host, self.port)).pipe(
        Effect.catchAllCause((cause) => Effect.logDebug("runner watch: a round failed", cause)),
        Effect.zipRight(Effect.sleep(interval)),
        Effect.forever
      )
    )
  )
