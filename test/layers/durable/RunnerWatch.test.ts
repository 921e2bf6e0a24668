import { RunnerUnavailable } from "@effect/cluster/ClusterError"
import * as Runner from "@effect/cluster/Runner"
import * as RunnerAddress from "@effect/cluster/RunnerAddress"
import * as RunnerStorage from "@effect/cluster/RunnerStorage"
import * as Runners from "@effect/cluster/Runners"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as SqlRunnerStorage from "@effect/cluster/SqlRunnerStorage"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as DurableStore from "../../../src/layers/durable/DurableStore.js"
import * as RunnerWatch from "../../../src/layers/durable/RunnerWatch.js"
import * as Postgres from "../../fixtures/Postgres.js"

const address = (port: number) => RunnerAddress.make("127.0.0.1", port)
const self = address(7001)

/**
 * The runners' network, as far as the watch sees it: a ping to a runner in `down` fails (as a refused connection
 * does), any other is answered. The storage the watch reads and writes is the cluster's real SQL runner storage.
 */
const network = (down: Set<number>) =>
  Layer.succeed(Runners.Runners, {
    ping: (to: RunnerAddress.RunnerAddress) =>
      down.has(to.port) ? Effect.fail(new RunnerUnavailable({ address: to })) : Effect.void
  } as unknown as Runners.Runners["Type"])

const health = Effect.flatMap(RunnerStorage.RunnerStorage, (storage) => storage.getRunners).pipe(
  Effect.map((runners) => Object.fromEntries(runners.map(([runner, healthy]) => [runner.address.port, healthy])))
)

describe("RunnerWatch", () => {
  it.scopedLive(
    "marks a runner that does not answer unhealthy and one that answers again healthy; not while it is unhealthy itself",
    () =>
      Effect.gen(function* () {
        const url = yield* Postgres.freshDatabase("armature_runner_watch")
        const down = new Set<number>()
        yield* Effect.gen(function* () {
          const storage = yield* RunnerStorage.RunnerStorage
          for (const port of [7001, 7002, 7003, 7004]) {
            yield* storage.register(Runner.make({ address: address(port), groups: ["default"], weight: 1 }), true)
          }
          yield* storage.setRunnerHealth(address(7004), false)
          // 7003 died; 7004 had been marked unhealthy and answers again
          down.add(7003)
          yield* RunnerWatch.checkOnce(self)
          expect(yield* health).toEqual({ 7001: true, 7002: true, 7003: false, 7004: true })
          // a runner that is itself marked unhealthy (cut off, say) does not mark others down, but marks them up
          yield* storage.setRunnerHealth(self, false)
          down.add(7002)
          down.delete(7003)
          yield* RunnerWatch.checkOnce(self)
          expect(yield* health).toEqual({ 7001: false, 7002: true, 7003: true, 7004: true })
        }).pipe(
          Effect.provide(
            Layer.mergeAll(
              Layer.orDie(SqlRunnerStorage.layer).pipe(
                Layer.provide(ShardingConfig.layer({ shardLockExpiration: "30 seconds" }))
              ),
              network(down)
            ).pipe(Layer.provideMerge(DurableStore.sqlLayer({ _tag: "Postgres", url })))
          )
        )
      }),
    60_000
  )
})
