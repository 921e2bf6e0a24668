/**
 * Who checks the health of the runners of `armature serve`. `@effect/cluster` checks it from one cluster singleton,
 * which lives on a shard: when the runner that died was the one running it, nobody marked it unhealthy, and its
 * shards (its sessions) stayed assigned to it until its heartbeat aged past the lock expiration (30 s; measured: 4-5
 * s or ~29 s from a kill to the sessions running again, by where the singleton ran).
 *
 * Here one runner at a time watches the others: the one holding a PostgreSQL advisory lock on a connection of its
 * own. The lock is free the moment that runner's connection goes (it died, or lost the database), and another
 * runner takes it on its next try. The watcher pings each other runner (the cluster's ping, with its retries) and
 * writes a change of health to the runner storage, one statement at a time outside any transaction (a transaction
 * would hold the rows it updated, and block the other runners' heartbeats, while later pings wait). A watcher found
 * marked down marks itself up first (it holds the lock and its connection answers: it is alive). The cluster's own
 * check is given `storedHealth`, which answers what the storage already holds, so at most it writes that value
 * again: one point of view, no two runners marking each other down. The lock's session ends by itself after 30 s
 * idle (`idle_session_timeout`, PostgreSQL 14 and later), so a watcher on a frozen host does not keep it for as long
 * as TCP takes to notice.
 */
import * as Crypto from "node:crypto"
import * as RunnerAddress from "@effect/cluster/RunnerAddress"
import * as RunnerHealth from "@effect/cluster/RunnerHealth"
import * as RunnerStorage from "@effect/cluster/RunnerStorage"
import * as SqlClient from "@effect/sql/SqlClient"
import type * as SqlConnection from "@effect/sql/SqlConnection"
import { Cause, Duration, Effect, Equal, ExecutionStrategy, Exit, Layer, Scope } from "effect"

/** The watcher's advisory lock (the two-key form, apart from the cluster's one-key shard locks): "arma", 1. */
export const watcherLock = [0x61726d61, 1] as const

/** The class of the runners' liveness locks ("armr"); the other half is the hash of the runner's address. */
export const livenessClass = 0x61726d72

/**
 * A runner's tag: a short hash of its address, at the end of the \`application_name\` of each of its database
 * connections (\`armature:PID@HOST #TAG\`), so that the watcher can end them all when the runner is gone.
 */
export const runnerTag = (address: { readonly host: string; readonly port: number }): string =>
  `#${Crypto.createHash("sha256").update(`${address.host}:${address.port}`).digest("hex").slice(0, 8)}`

/**
 * Ends the database connections of a runner found gone (its liveness connection went): the others (its shard locks,
 * its sessions' leases) would go only when the server's own keepalive finds them silent, each on its own clock, up
 * to seconds later (measured: a runner cut off lost its liveness connection 1.5 s after the cut, its shard locks
 * 3.3 s and its leases 4.4 s after), and its sessions could not be taken over before. A runner whose liveness
 * connection went stops by itself (it has lost its locks), so nothing of it that still runs is cut short.
 */
const endConnections = (conn: SqlConnection.Connection, address: RunnerAddress.RunnerAddress) =>
  conn
    .executeRaw(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND right(application_name, 10) = $1`,
      [` ${runnerTag(address)}`]
    )
    .pipe(
      Effect.catchAllCause((cause) => Effect.logDebug("runner watch: could not end a gone runner's connections", cause))
    )

/** A runner's address as its liveness lock is keyed. */
const addressKey = (address: RunnerAddress.RunnerAddress): string => `${address.host}:${address.port}`

/**
 * A runner's liveness: from before it registers until it stops, it holds an advisory lock keyed by its address on a
 * connection of its own, so that the watcher knows it is gone the moment the database drops that connection (its
 * process died, or the database stopped hearing from its host), without waiting for pings to fail. The connection is
 * asked `SELECT 1` every second: when it does not answer within `timeout`, this runner may have lost its locks (the
 * others may be taking its sessions over), and `onLost` is run: the runner must stop running sessions.
 */
export const liveness = (
  self: { readonly host: string; readonly port: number },
  timeout: Duration.DurationInput,
  onLost: (reason: string) => Effect.Effect<void>
) =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const conn = yield* sql.reserve
      const key = addressKey(RunnerAddress.make(self.host, self.port))
      // a runner of this address that is still alive (or not yet noticed gone) holds it: wait for it
      yield* conn.executeRaw("SELECT pg_advisory_lock($1, hashtext($2))", [livenessClass, key])
      yield* Effect.addFinalizer(() =>
        conn
          .executeRaw("SELECT pg_advisory_unlock($1, hashtext($2))", [livenessClass, key])
          .pipe(Effect.timeout("1 second"), Effect.ignore)
      )
      yield* conn.executeRaw("SELECT 1", []).pipe(
        Effect.timeoutFail({ duration: timeout, onTimeout: () => "no answer" }),
        Effect.zipRight(Effect.sleep("1 second")),
        Effect.forever,
        Effect.catchAllCause((cause) =>
          onLost(`its database connection ${Cause.isFailType(cause) ? "did not answer" : "failed"}`)
        ),
        Effect.forkScoped
      )
    })
  )

/**
 * The runners among `runners` whose liveness lock is free: their connection is gone, so they are. Checked on the
 * watcher's connection (each lock taken is given back at once).
 */
const gone = (conn: SqlConnection.Connection, runners: ReadonlyArray<RunnerAddress.RunnerAddress>) =>
  Effect.filter(runners, (address) =>
    conn
      .executeValues("SELECT pg_try_advisory_lock($1, hashtext($2))", [livenessClass, addressKey(address)])
      .pipe(
        Effect.flatMap((rows) =>
          rows[0]?.[0] === true
            ? Effect.as(
                conn.executeRaw("SELECT pg_advisory_unlock($1, hashtext($2))", [livenessClass, addressKey(address)]),
                true
              )
            : Effect.succeed(false)
        )
      )
  )

/**
 * The health the cluster's own check sees: what the storage holds, so that at most it writes that value again (its
 * own copy lags the storage by up to a second). A runner it does not find is reported alive.
 */
export const storedHealth = Layer.effect(
  RunnerHealth.RunnerHealth,
  Effect.map(RunnerStorage.RunnerStorage, (storage) =>
    RunnerHealth.RunnerHealth.of({
      isAlive: (address) =>
        storage.getRunners.pipe(
          Effect.map((runners) => runners.find(([runner]) => Equal.equals(runner.address, address))?.[1] ?? true),
          Effect.orElseSucceed(() => true)
        )
    })
  )
)

/**
 * One round of the watcher: the runners whose liveness lock is free are marked down at once; with `ping`, each other
 * runner is pinged and a change of health written.
 */
export const checkOnce = (self: RunnerAddress.RunnerAddress, conn?: SqlConnection.Connection, ping = true) =>
  Effect.gen(function* () {
    const storage = yield* RunnerStorage.RunnerStorage
    const health = yield* RunnerHealth.makePing
    const listed = yield* storage.getRunners
    const dead =
      conn === undefined
        ? []
        : yield* gone(
            conn,
            listed.filter(([runner]) => !Equal.equals(runner.address, self)).map(([runner]) => runner.address)
          )
    for (const address of dead) {
      if (listed.some(([runner, healthy]) => healthy && Equal.equals(runner.address, address))) {
        yield* Effect.logDebug(`runner ${address.host}:${address.port} lost its liveness lock: gone`)
        yield* storage.setRunnerHealth(address, false)
        if (conn !== undefined) yield* endConnections(conn, address)
      }
    }
    if (!ping) return
    const runners = listed.filter(([runner]) => !dead.some((address) => Equal.equals(runner.address, address)))
    // the watcher is alive whatever the storage says (a runner marked down by an earlier watcher that has gone)
    if (runners.some(([runner, healthy]) => !healthy && Equal.equals(runner.address, self))) {
      yield* storage.setRunnerHealth(self, true)
    }
    const found = yield* Effect.forEach(
      runners.filter(([runner]) => !Equal.equals(runner.address, self)),
      ([runner, healthy]) => Effect.map(health.isAlive(runner.address), (alive) => ({ runner, healthy, alive })),
      { concurrency: 10 }
    )
    for (const { runner, healthy, alive } of found) {
      if (alive === healthy) continue
      yield* Effect.logDebug(`runner ${runner.address.host}:${runner.address.port} is ${alive ? "back" : "gone"}`)
      yield* storage.setRunnerHealth(runner.address, alive)
    }
  }).pipe(Effect.scoped)

/**
 * The watch of the runner at `self`, every `interval`: it tries for the watcher's lock until it holds it, then runs
 * a round each time, as long as its lock connection answers. The liveness locks are looked at every round (a few
 * cheap statements, and what finds a dead runner first); the pings, and the check of the lock connection, once per
 * `pingInterval` (default: every round), the pings in a fiber of their own so that a hanging one delays no round.
 */
export const watch = (
  self: RunnerAddress.RunnerAddress,
  interval: Duration.DurationInput,
  pingInterval: Duration.DurationInput = interval
) =>
  Effect.gen(function* () {
    const pingEvery = Duration.toMillis(pingInterval)
    let pingedAt = 0
    // whether a round of pings is under way (one at a time)
    let pinging = false
    const sql = yield* SqlClient.SqlClient
    const outer = yield* Effect.scope
    // the scope of the lock connection while this runner is the watcher (a child of the watch's scope, so that it is
    // closed with it also when the watch is interrupted between reserving the connection and taking the lock)
    let holding: Scope.CloseableScope | undefined
    let connection: SqlConnection.Connection | undefined
    const letGo = Effect.suspend(() => {
      const scope = holding
      holding = undefined
      connection = undefined
      return scope === undefined ? Effect.void : Scope.close(scope, Exit.void)
    })
    yield* Effect.addFinalizer(() => letGo)
    const tryLock = Effect.gen(function* () {
      const scope = yield* Scope.fork(outer, ExecutionStrategy.sequential)
      const conn = yield* Scope.extend(sql.reserve, scope).pipe(Effect.tapError(() => Scope.close(scope, Exit.void)))
      const rows = (yield* conn
        .execute(`SELECT pg_try_advisory_lock(${watcherLock[0]}, ${watcherLock[1]}) AS locked`, [], undefined)
        .pipe(Effect.tapError(() => Scope.close(scope, Exit.void)))) as ReadonlyArray<{ readonly locked: boolean }>
      if (rows[0]?.locked === true) {
        // the connection goes back to the pool when the scope closes: the lock and the idle limit must not go with it
        yield* Scope.addFinalizer(
          scope,
          conn
            .executeRaw(`SELECT pg_advisory_unlock(${watcherLock[0]}, ${watcherLock[1]})`, [])
            .pipe(
              Effect.zipRight(conn.executeRaw("RESET idle_session_timeout", [])),
              Effect.timeout("1 second"),
              Effect.ignore
            )
        )
        yield* Effect.ignore(conn.executeRaw("SET idle_session_timeout = '30s'", []))
        holding = scope
        connection = conn
      } else {
        yield* Scope.close(scope, Exit.void)
      }
    })
    const round = Effect.gen(function* () {
      const now = Date.now()
      const ping = now - pingedAt >= pingEvery
      if (connection === undefined) yield* tryLock
      else if (ping)
        yield* Effect.catchAllCause(
          connection.executeRaw("SELECT 1", []).pipe(Effect.timeout("5 seconds")),
          () => letGo
        )
      if (connection !== undefined) {
        yield* checkOnce(self, connection, false)
        // the pings go on beside the rounds: a runner cut off from the network leaves its ping hanging until it
        // times out (seconds, with the cluster's retries), and the free liveness locks of the others (a runner killed
        // at the same time) must not wait for it (measured: 22-25 s instead of about 1 s, scripts/serve-acceptance.ts)
        if (ping && !pinging) {
          pingedAt = now
          pinging = true
          yield* checkOnce(self, undefined, true).pipe(
            Effect.catchAllCause((cause) => Effect.logDebug("runner watch: pings failed", cause)),
            Effect.ensuring(
              Effect.sync(() => {
                pinging = false
              })
            ),
            Effect.forkIn(outer)
          )
        }
      }
    })
    return yield* round.pipe(
      Effect.catchAllCause((cause) => Effect.logDebug("runner watch: a round failed", cause)),
      Effect.zipRight(Effect.sleep(interval)),
      Effect.forever
    )
  })

/** Runs the watch of the runner at `self` for as long as the layer lives. */
export const layer = (
  self: { readonly host: string; readonly port: number },
  interval: Duration.DurationInput,
  pingInterval: Duration.DurationInput = interval
) =>
  Layer.scopedDiscard(
    Effect.forkScoped(Effect.scoped(watch(RunnerAddress.make(self.host, self.port), interval, pingInterval)))
  )
