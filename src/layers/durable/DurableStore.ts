/**
 * Where durable sessions are kept, and the workflow engine over it: `@effect/cluster`'s single runner with its SQL
 * message storage and `ClusterWorkflowEngine`. Embedded (the default) keeps each session in its own SQLite file,
 * `<stateDir>/sessions/<id>.db`, so a process only ever replays its own session; `postgres://…` keeps every
 * session in one PostgreSQL database, where the cluster's shard locks let one runner at a time own them.
 *
 * Beside the engine's own tables, one table `armature_sessions` holds what the engine does not: the options a
 * session was started with (to resume it), the process running it and how it ended (for `armature sessions`).
 */
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import * as ClusterWorkflowEngine from "@effect/cluster/ClusterWorkflowEngine"
import * as RunnerAddress from "@effect/cluster/RunnerAddress"
import * as Runners from "@effect/cluster/Runners"
import * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as SingleRunner from "@effect/cluster/SingleRunner"
import * as SocketRunner from "@effect/cluster/SocketRunner"
import * as SqlMessageStorage from "@effect/cluster/SqlMessageStorage"
import * as SqlRunnerStorage from "@effect/cluster/SqlRunnerStorage"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as SqlClient from "@effect/sql/SqlClient"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Option, Redacted } from "effect"
import { InvalidInputError } from "../../domain/Errors.js"
import * as RunnerWatch from "./RunnerWatch.js"
import * as Tables from "./Tables.js"

/** Where a session is stored: its own SQLite file, or a PostgreSQL database shared by sessions and runners. */
export type Location =
  | { readonly _tag: "Sqlite"; readonly file: string }
  | { readonly _tag: "Postgres"; readonly url: string }

/** The SQLite file of an embedded session. */
export const sqliteFile = (stateDir: string, sessionId: string): string =>
  Path.join(stateDir, "sessions", `${sessionId}.db`)

/** The embedded sessions under a state directory: the ids of their files. */
export const embeddedSessions = (stateDir: string): ReadonlyArray<string> => {
  const dir = Path.join(stateDir, "sessions")
  if (!Fs.existsSync(dir)) return []
  return Fs.readdirSync(dir)
    .filter((f) => f.endsWith(".db"))
    .map((f) => f.slice(0, -3))
    .sort()
}

/**
 * The SQLite client, loaded when an embedded session is opened: its driver, better-sqlite3, is a native addon and
 * an optional peer of the package, so PostgreSQL sessions (and everything else) never load it, and an installation
 * without it gets an error that says what to install.
 */
export const loadSqlite = Effect.tryPromise({
  try: () => import("@effect/sql-sqlite-node/SqliteClient"),
  catch: (e) =>
    new InvalidInputError({
      message: `durable sessions in SQLite need better-sqlite3 12, which is not installed here (${
        (e instanceof Error ? e.message : String(e)).split("\n")[0]
      }): npm install better-sqlite3@12, or keep sessions in PostgreSQL with --database postgres://…`
    })
})

/**
 * What the database server is asked of each connection, so that it drops a connection whose client stopped
 * answering (a host cut off or frozen, not one whose process died: that connection resets at once) within about
 * 2 s, and with it the advisory locks held on it (shards, session leases, the runner's liveness lock): a keepalive
 * probe after 1 s idle, then one a second, and the connection ends once nothing was heard from the client for 2 s
 * (`tcp_user_timeout`, which also ends it when data sent stays unacknowledged that long). The probes are answered by
 * the client's kernel, not by the runner's event loop, so a runner slowed by load keeps its connections; a network
 * that drops everything for 2 s does end them (the runner then stops: its liveness connection fails). How soon the
 * others take over a runner cut off is bounded by this. A runner that lost its locks this way starts no call even if
 * its link comes back (the call's start mark checks the session's lease, CallProcesses). Without these the server's
 * operating system takes its default, often two hours. Put before the URL's own `options`, which win.
 */
export const serverKeepalives =
  "-c tcp_keepalives_idle=1 -c tcp_keepalives_interval=1 -c tcp_keepalives_count=2 -c tcp_user_timeout=2000"

/** A PostgreSQL URL with `serverKeepalives` in its startup options. */
export const withServerKeepalives = (url: string): string => {
  const parsed = new URL(url)
  const own = parsed.searchParams.get("options")
  parsed.searchParams.set("options", own === null || own === "" ? serverKeepalives : `${serverKeepalives} ${own}`)
  return parsed.toString()
}

/** The client side of the same: TCP keepalive on every connection's socket, probes after 5 s idle. */
const keepAliveSocket = (): Net.Socket => new Net.Socket().setKeepAlive(true, 5_000)

/**
 * The SQL client of a location (the SQLite file's directory is made); a PostgreSQL client's connections carry
 * `applicationName` when given.
 */
export const sqlLayer = (location: Location, applicationName?: string): Layer.Layer<SqlClient.SqlClient, unknown> => {
  if (location._tag === "Postgres") {
    return PgClient.layer({
      url: Redacted.make(withServerKeepalives(location.url)),
      stream: keepAliveSocket,
      applicationName
    })
  }
  return Layer.unwrapEffect(
    Effect.map(loadSqlite, (SqliteClient) => {
      Fs.mkdirSync(Path.dirname(location.file), { recursive: true })
      return SqliteClient.layer({ filename: location.file })
    })
  )
}

/**
 * The workflow engine over a location's storage. Embedded: one process per session file, runner state in memory.
 * Postgres: the runner takes the shards' locks in the database (advisory locks, released when a runner dies).
 */
export const engineLayer = (location: Location) =>
  ClusterWorkflowEngine.layer.pipe(
    Layer.provideMerge(
      SingleRunner.layer({
        runnerStorage: location._tag === "Sqlite" ? "memory" : "sql",
        shardingConfig: {
          ...sharedSharding,
          // one process per SQLite file needs no spread
          shardsPerGroup: location._tag === "Sqlite" ? 1 : sharedSharding.shardsPerGroup,
          // one process: messages never cross a wire, so they need not be serialized on the way
          simulateRemoteSerialization: location._tag !== "Sqlite"
        }
      })
    )
  )

/**
 * The cluster settings every process on one database agrees on (the number of shards above all). Polls are short so
 * that a session whose runner died is found soon by the runner that takes its shard over.
 */
export const sharedSharding = {
  shardsPerGroup: 16,
  entityMessagePollInterval: "250 millis",
  entityReplyPollInterval: "50 millis",
  shardLockRefreshInterval: "2 seconds",
  shardLockExpiration: "6 seconds"
} satisfies Partial<ShardingConfig.ShardingConfig["Type"]>

/**
 * The workflow engine of a runner of `armature serve`: `@effect/cluster`'s socket runner listening for the other
 * runners at `address` (its parts as `NodeClusterSocket.layer` puts them together), with its message and runner
 * storage in the PostgreSQL database of the SQL client it is given. Runners of one database share its shards: each
 * shard's lock is held by one runner, and the shards of a runner that stops answering (or whose database connection
 * goes) move to the others. Who finds a runner that stopped answering is `RunnerWatch`'s: the cluster's own check is
 * given the stored health, so at most it writes that value again.
 */
export const runnerLayer = (
  address: { readonly host: string; readonly port: number },
  onLost: (reason: string) => Effect.Effect<void> = () => Effect.void
) => {
  const sharding = ShardingConfig.layerFromEnv({
    ...sharedSharding,
    runnerAddress: Option.some(RunnerAddress.make(address.host, address.port)),
    runnerListenAddress: Option.none(),
    // a runner is dropped from the assignment when its heartbeat is older than this: generous, so that a runner
    // slowed by load keeps its shards (a dead one is found sooner, by RunnerWatch's pings)
    shardLockExpiration: "30 seconds",
    // the refresh of this runner's own shard locks (and heartbeat) every 10 s, given 10 s to answer: one that does not
    // makes the runner let every shard go and stop their sessions ("Shard lock storage is unhealthy"). The locks are
    // advisory locks, held as long as their connection lives, so a slow answer is a runner slowed by load, not a lost
    // lock; with 5 s a loaded survivor stopped all its sessions just when it had to take others over (issue 36). A
    // runner that really lost its database is stopped by its liveness connection (RunnerWatch.liveness) first.
    shardLockRefreshInterval: "10 seconds",
    // how soon a runner marked down (RunnerWatch) loses its shards to the others: one read of the runners table
    refreshAssignmentsInterval: "250 millis",
    runnerHealthCheckInterval: "2 seconds",
    // a stopping runner gives its running sessions this long before it cuts them and lets their shards go: a
    // session's call is not waited for (it gets the crash result where the session goes on), so the shards move soon
    entityTerminationTimeout: "2 seconds",
    // a session's workflow entity (its mailbox, scope and what the finished execution left referenced) is let go this
    // long after its last message, not the cluster's default minute: a busy runner no longer carries the last
    // minute's sessions. A session waiting for a follow-up prompt is suspended and stored; the prompt wakes it.
    entityMaxIdleTime: "5 seconds"
  })
  const storage = Layer.merge(SqlMessageStorage.layer, Layer.orDie(SqlRunnerStorage.layer)).pipe(
    Layer.provide(sharding)
  )
  // the liveness lock is held before the runner registers, so a watcher never sees it registered without one
  const alive = RunnerWatch.liveness(address, "5 seconds", onLost)
  const runner = SocketRunner.layer.pipe(
    Layer.provide(alive),
    Layer.provide(NodeClusterSocket.layerSocketServer),
    Layer.provide(NodeClusterSocket.layerClientProtocol),
    Layer.provide(RunnerWatch.storedHealth),
    Layer.provideMerge(storage),
    Layer.provide(sharding),
    Layer.provide(RpcSerialization.layerMsgPack)
  )
  // the watch pings over clients of its own, as the cluster's ping does: a failed ping resets the client it used
  const pingClients = Runners.layerRpc.pipe(
    Layer.provide(NodeClusterSocket.layerClientProtocol),
    Layer.provide(Layer.merge(sharding, RpcSerialization.layerMsgPack))
  )
  // free liveness locks (dead runners) are looked for every 200 ms, pings go out every second
  const watch = RunnerWatch.layer(address, "200 millis", "1 second").pipe(
    Layer.provide(pingClients),
    Layer.provide(runner)
  )
  return ClusterWorkflowEngine.layer.pipe(Layer.provideMerge(Layer.merge(runner, watch)))
}

/** See Tables.withSchemaLock: runners started together on a new database make its tables one at a time. */
export const withSchemaLock = Tables.withSchemaLock

/**
 * Makes the cluster's tables (messages, runners, locks) by building its storage once and letting it go: a runner
 * built afterwards finds them made.
 */
export const clusterTables = Effect.suspend(() =>
  Layer.build(
    Layer.merge(SqlMessageStorage.layer, SqlRunnerStorage.layer).pipe(
      Layer.provide(ShardingConfig.layer(sharedSharding))
    )
  )
).pipe(Effect.scoped, Effect.asVoid)

/**
 * An index of the engine's message table by entity (a session's workflow is one entity), so that `storedSteps`
 * reads one session's rows without scanning the others'. Made with the runners' tables (PostgreSQL).
 */
export const stepsIndex = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql`CREATE INDEX IF NOT EXISTS armature_cluster_messages_entity ON cluster_messages (entity_id)`
)

/**
 * The stored values of the steps of one workflow execution, read in one statement from the engine's tables
 * (`cluster_messages`, `cluster_replies` of `@effect/cluster`'s SqlMessageStorage, whose layout this follows): each
 * activity request of the execution's entity with its final reply, kept when that reply is a completed success of
 * the first attempt. A replay then returns those steps without asking the engine, which costs two statements a step
 * (saving the request again, reading its reply). Anything else (a suspended or failed step, a later attempt) is left
 * to the engine.
 */
export const storedSteps = (workflowName: string, executionId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ request: string; reply: string }>`SELECT m.payload AS request, r.payload AS reply
      FROM cluster_messages m JOIN cluster_replies r ON r.request_id = m.id AND r.kind = 0
      WHERE m.entity_id = ${executionId} AND m.entity_type = ${`Workflow/${workflowName}`} AND m.tag = 'activity'`
    const values = new Map<string, unknown>()
    for (const row of rows) {
      const value = completedValue(row.request, row.reply)
      if (value !== undefined) values.set(value.name, value.value)
    }
    return values
  })

/** The step name and value of a stored activity request and reply, when the reply is a completed success. */
const completedValue = (request: string, reply: string): { name: string; value: unknown } | undefined => {
  try {
    const payload = JSON.parse(request) as { name?: unknown; attempt?: unknown }
    const exit = JSON.parse(reply) as {
      _tag?: unknown
      value?: { _tag?: unknown; exit?: { _tag?: unknown; value?: unknown } }
    }
    if (typeof payload.name !== "string" || payload.attempt !== 1) return undefined
    if (exit._tag !== "Success" || exit.value?._tag !== "Complete" || exit.value.exit?._tag !== "Success") {
      return undefined
    }
    return { name: payload.name, value: exit.value.exit.value }
  } catch {
    return undefined
  }
}

/** What `armature sessions` shows of a session, and what `resume` needs. */
export interface SessionRecord {
  readonly id: string
  /** The options of the run, as `RunOptionsCodec` wrote them. */
  readonly args: string
  readonly createdAt: number
  readonly pid: number
  /** The host of that process. */
  readonly host: string
  /** `running` while a process runs it, else the result's subtype (`success`, `error_max_turns`, …). */
  readonly state: string
  readonly updatedAt: number
}

const ensureTable = Tables.once(
  "armature_sessions",
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`CREATE TABLE IF NOT EXISTS armature_sessions (
      id TEXT PRIMARY KEY,
      args TEXT NOT NULL,
      created_at BIGINT NOT NULL,
      pid INTEGER NOT NULL,
      host TEXT NOT NULL,
      state TEXT NOT NULL,
      updated_at BIGINT NOT NULL
    )`
  )
)

/** Records a session as running in this process (a new one with its options, or one being resumed). */
export const markRunning = (id: string, args: string) =>
  Effect.gen(function* () {
    yield* ensureTable
    const sql = yield* SqlClient.SqlClient
    const now = Date.now()
    const host = Os.hostname()
    yield* sql`INSERT INTO armature_sessions (id, args, created_at, pid, host, state, updated_at)
      VALUES (${id}, ${args}, ${now}, ${process.pid}, ${host}, 'running', ${now})
      ON CONFLICT (id) DO UPDATE SET pid = ${process.pid}, host = ${host}, state = 'running', updated_at = ${now}`
  })

/**
 * The state of a served session between its creation and the moment a runner takes it up: its record exists, its
 * start may or may not have reached the cluster (the runner that took the request may die in between).
 */
export const starting = "starting"

/** The state of a served session that no runner took up in time: its start never reached the cluster. */
export const notStarted = "error_not_started"

/** Records a new served session as starting (see `starting`), with its options, on this process. */
export const markStarting = (id: string, args: string) =>
  Effect.gen(function* () {
    yield* ensureTable
    const sql = yield* SqlClient.SqlClient
    const now = Date.now()
    yield* sql`INSERT INTO armature_sessions (id, args, created_at, pid, host, state, updated_at)
      VALUES (${id}, ${args}, ${now}, ${process.pid}, ${Os.hostname()}, ${starting}, ${now})`
  })

/**
 * Takes up a starting session: true when it was starting and is now running here, false when it was not starting
 * (already taken up before, or given up as not started). One statement, so that it and `giveUpStarting` never both
 * win.
 */
export const claimStart = (id: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const now = Date.now()
    const rows = yield* sql<{ id: string }>`UPDATE armature_sessions
      SET state = 'running', pid = ${process.pid}, host = ${Os.hostname()}, updated_at = ${now}
      WHERE id = ${id} AND state = ${starting} RETURNING id`
    return rows.length > 0
  })

/** Marks the sessions starting for longer than `graceMs` as not started; their ids. */
export const giveUpStarting = (graceMs: number) =>
  Effect.gen(function* () {
    yield* ensureTable
    const sql = yield* SqlClient.SqlClient
    const now = Date.now()
    const rows = yield* sql<{ id: string }>`UPDATE armature_sessions SET state = ${notStarted}, updated_at = ${now}
      WHERE state = ${starting} AND updated_at < ${now - graceMs} RETURNING id`
    return rows.map((r) => r.id)
  })

/** Records how a session ended. */
export const markEnded = (id: string, state: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`UPDATE armature_sessions SET state = ${state}, updated_at = ${Date.now()} WHERE id = ${id}`
  )

interface Row {
  readonly id: string
  readonly args: string
  readonly created_at: number | string
  readonly pid: number
  readonly host: string
  readonly state: string
  readonly updated_at: number | string
}

const toRecord = (row: Row): SessionRecord => ({
  id: row.id,
  args: row.args,
  createdAt: Number(row.created_at),
  pid: row.pid,
  host: row.host,
  state: row.state,
  updatedAt: Number(row.updated_at)
})

/** The sessions of this storage, oldest first. */
export const list = Effect.gen(function* () {
  yield* ensureTable
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<Row>`SELECT * FROM armature_sessions ORDER BY created_at, id`
  return rows.map(toRecord)
})

/** One session, if this storage has it. */
export const find = (id: string) =>
  Effect.gen(function* () {
    yield* ensureTable
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<Row>`SELECT * FROM armature_sessions WHERE id = ${id}`
    return Option.map(Option.fromNullable(rows[0]), toRecord)
  })

/** Whether a process with this id is alive (signal 0 checks without sending anything). */
export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * The state shown for a session: a `running` session whose process (on this host) is gone was cut short and can be
 * resumed (`interrupted`); a process on another host cannot be checked from here, and its sessions stay `running`.
 */
export const stateOf = (record: SessionRecord): string =>
  record.state === "running" && record.host === Os.hostname() && !isAlive(record.pid) ? "interrupted" : record.state
