/**
 * Every runner of `armature serve` checks the other runners itself. `@effect/cluster` checks runners from one
 * cluster singleton: when the runner that died was the one running it, nobody marked it unhealthy, and its shards
 * (its sessions) stayed assigned to it until its heartbeat in the database aged past the lock expiration (30 s).
 * With a watch in each runner, a dead runner is found by a surviving one within one check interval and the ping's
 * retries, whichever runner held the singleton.
 *
 * The check is the cluster's own: a runner is alive when it answers a ping (retried, as `RunnerHealth.layerPing`
 * does); the finding is written to the runner storage, where every runner's shard assignment reads it. A runner
 * only marks others unhealthy while it is itself healthy in the storage, so two runners cut off from each other do
 * not both give their shards up.
 */
import * as RunnerAddress from "@effect/cluster/RunnerAddress"
import * as RunnerHealth from "@effect/cluster/RunnerHealth"
import * as RunnerStorage from "@effect/cluster/RunnerStorage"
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

/** Runs the watch of the runner at `self` for as long as the layer lives, a round every `interval`. */
export const layer = (self: { readonly host: string; readonly port: number }, interval: Duration.DurationInput) =>
  Layer.scopedDiscard(
    Effect.forkScoped(
      checkOnce(RunnerAddress.make(self.host, self.port)).pipe(
        Effect.catchAllCause((cause) => Effect.logDebug("runner watch: a round failed", cause)),
        Effect.zipRight(Effect.sleep(interval)),
        Effect.forever
      )
    )
  )
