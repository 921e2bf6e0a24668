/**
 * Durable runs, loaded only when `run --durable`, `resume` or `sessions` is used: the session's options are
 * recorded, its agent loop runs as the session workflow (DurableSession) on the engine over its store
 * (DurableStore), and a session cut short is continued from its last persisted step. See docs/durable.md.
 */
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import { Console, Effect, Layer, Option, Schedule } from "effect"
import { InvalidInputError } from "../domain/Errors.js"
import * as StatePaths from "../domain/StatePaths.js"
import * as CallProcesses from "../layers/durable/CallProcesses.js"
import * as DurableSession from "../layers/durable/DurableSession.js"
import * as DurableStore from "../layers/durable/DurableStore.js"
import * as SessionLease from "../layers/durable/SessionLease.js"
import * as SilentConsole from "../layers/durable/SilentConsole.js"
import * as ToolVersionPins from "../layers/durable/ToolVersionPins.js"
import * as OtlpExport from "../layers/observability/OtlpExport.js"
import * as SpawnRecord from "../layers/process/SpawnRecord.js"
import { modelOf, type OutputFormat, type RunArgs, retryOf, runAgent } from "./AgentRun.js"
import * as Audit from "./Audit.js"
import * as DatabaseUrl from "./DatabaseUrl.js"
import { engineLayer, type ResultOptions } from "./Runtime.js"

/** A run's options as text: `Option`s become `{"_id":"Option",…}` (their JSON form) and come back as `Option`s. */
export const encodeArgs = (args: RunArgs): string => JSON.stringify({ ...args, cwd: Path.resolve(args.cwd) })

/** The options of `encodeArgs`' text. */
export const decodeArgs = (text: string): RunArgs =>
  JSON.parse(text, (_key, value) =>
    typeof value === "object" && value !== null && value._id === "Option"
      ? value._tag === "Some"
        ? Option.some(value.value)
        : Option.none()
      : value
  ) as RunArgs

/** The state directory of durable sessions found from here: `ARMATURE_STATE_DIR`, else `<cwd>/.armature`. */
export const stateDirOf = (cwd: string): string => StatePaths.fromProcessEnv(cwd).root

/** Where a session is stored: the database given, else its own SQLite file. */
const locationOf = (database: Option.Option<string>, stateDir: string, id: string): DurableStore.Location =>
  Option.match(database, {
    onNone: () => ({ _tag: "Sqlite", file: DurableStore.sqliteFile(stateDir, id) }),
    onSome: (url) => ({ _tag: "Postgres", url })
  })

/** A store operation whose database cannot be used fails with an input error naming `--database` (a crash otherwise). */
const orUnusable =
  (location: DurableStore.Location) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, InvalidInputError, R> =>
    location._tag === "Postgres" ? Effect.mapError(self, DatabaseUrl.unusable(location.url)) : Effect.orDie(self)

/** The engine a durable session's agent loop runs on (its model from the environment, no transcript file). */
export const sessionEngine = (args: RunArgs, sessionId: string, audit: Audit.Audit) =>
  engineLayer(args, {
    sessionId,
    model: "anthropic",
    // the workflow's store is the session's record; a transcript would be read back as earlier messages
    transcript: false,
    modelRetry: retryOf(args.maxRetries),
    // the command line's result options were recorded with the rest
    results: args as RunArgs & ResultOptions,
    samplingModel: modelOf(args.model),
    onDecision: Audit.onDecision(audit)
  })

/** How `resume` shows a session, when it says otherwise than the session's recorded `run` options. */
export interface Display {
  readonly output: Option.Option<OutputFormat>
  readonly timeline: Option.Option<string>
}

/** Shows a session as recorded. */
export const asRecorded: Display = { output: Option.none(), timeline: Option.none() }

/** The recorded options with the display of `resume` over them (what is shown, never what runs). */
export const withDisplay = (args: RunArgs, display: Display): RunArgs => ({
  ...args,
  output: Option.getOrElse(display.output, () => args.output),
  timeline: Option.orElse(display.timeline, () => args.timeline)
})

/**
 * The body of the session workflow: the session's options are read from the store, it is marked running here, its
 * agent loop runs durably on its engine, and how it ended is recorded. Only `shown` prints its events, as `display`
 * says.
 */
const sessionBody = (shown: string, display: Display) => (sessionId: string) =>
  Effect.gen(function* () {
    // the shown session's lease is held by the command; another session of the database that this engine takes up
    // waits for its lease (a process that runs it, a `resume` of it, is let finish)
    if (sessionId !== shown) yield* waitForLease(sessionId)
    const record = yield* DurableStore.find(sessionId)
    if (Option.isNone(record)) return yield* Effect.dieMessage(`durable session ${sessionId} has no record`)
    const recorded = decodeArgs(record.value.args)
    const args = sessionId === shown ? withDisplay(recorded, display) : recorded
    yield* DurableStore.markRunning(sessionId, record.value.args)
    // what a crashed execution left running is gone before the replay tells the model its call was interrupted
    yield* CallProcesses.killLeftovers(sessionId)
    const recorder = yield* CallProcesses.recorder(sessionId)
    const audit = Audit.make()
    const sql = yield* SqlClient.SqlClient
    // the tool versions of the session's start are pinned before its first call, on every run of it
    const result = yield* Effect.zipRight(ToolVersionPins.pin, runAgent(args, audit)).pipe(
      DurableSession.durably({
        started: (toolUseId) =>
          CallProcesses.callStarted(sessionId, toolUseId).pipe(
            Effect.provideService(SqlClient.SqlClient, sql),
            Effect.orDie
          )
      }),
      Effect.provide(sessionEngine(args, sessionId, audit)),
      Effect.provide(OtlpExport.layerFromEnv()),
      sessionId === shown ? (effect) => effect : Effect.withConsole(SilentConsole.silent),
      SpawnRecord.recording(recorder)
    )
    yield* DurableStore.markEnded(sessionId, result.subtype)
    return result
  }).pipe(Effect.scoped)

/**
 * Takes a session's lease for the scope, waiting while another process holds it: tried again after 50 ms, doubling
 * up to a second (a runner taking a session over usually finds the lease free, or freed within moments).
 */
export const waitForLease = (sessionId: string) =>
  Effect.flatMap(SessionLease.SessionLease, (lease) =>
    lease
      .take(sessionId)
      .pipe(Effect.retry(Schedule.exponential("50 millis").pipe(Schedule.either(Schedule.spaced("1 second")))))
  )

/**
 * Runs `effect` holding the lease of session `id` in its location's store: a second command on the same session
 * fails at once, naming the process that runs it (usage error: exit 2). The lease is given back at the end.
 */
const leased =
  (location: DurableStore.Location, id: string, command: string) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.gen(function* () {
      const lease = yield* SessionLease.SessionLease
      yield* lease
        .take(id)
        .pipe(Effect.mapError((taken) => new InvalidInputError({ message: `${command}: ${taken.message}` })))
      return yield* Effect.provideService(effect, SessionLease.SessionLease, lease)
    }).pipe(Effect.scoped, Effect.provide(leaseLayer(location)))

/** The leases of a location's store; a database that cannot be used fails as `orUnusable` says. */
const leaseLayer = (location: DurableStore.Location) => {
  const leases = SessionLease.layer.pipe(Layer.provide(DurableStore.sqlLayer(location)))
  return location._tag === "Postgres" ? Layer.mapError(leases, DatabaseUrl.unusable(location.url)) : Layer.orDie(leases)
}

/** The engine, the store and the session workflow of a location, for a command that shows `shown`. */
const engine = (location: DurableStore.Location, shown: string, display: Display) =>
  DurableSession.layer(sessionBody(shown, display)).pipe(
    Layer.provideMerge(DurableStore.engineLayer(location)),
    Layer.provideMerge(DurableStore.sqlLayer(location))
  )

/** Runs a session (new or resumed) to its end on the engine of its location; its lease is held by the caller. */
const execute = (location: DurableStore.Location, id: string, display: Display = asRecorded) =>
  DurableSession.SessionWorkflow.execute({ sessionId: id }).pipe(
    Effect.provide(engine(location, id, display)),
    Effect.asVoid
  )

/** `armature run --durable`: a new durable session. */
export const runDurable = (args: RunArgs) =>
  Effect.gen(function* () {
    if (Option.isSome(args.resume)) {
      return yield* new InvalidInputError({
        message: "--resume: a durable session is continued with `armature resume SESSION_ID`"
      })
    }
    if (Option.isSome(args.database)) yield* DatabaseUrl.check(args.database.value)
    const id = Crypto.randomUUID()
    const location = locationOf(args.database, stateDirOf(args.cwd), id)
    const durableArgs: RunArgs = { ...args, durable: true }
    yield* DurableStore.markRunning(id, encodeArgs(durableArgs)).pipe(
      Effect.provide(DurableStore.sqlLayer(location)),
      orUnusable(location)
    )
    yield* execute(location, id).pipe(leased(location, id, "run"))
  })

/**
 * `armature resume SESSION_ID`: continues a durable session from its last persisted step, printed as `display` says
 * (by default as the session's `run` asked).
 */
export const resume = (id: string, database: Option.Option<string>, display: Display = asRecorded) =>
  Effect.gen(function* () {
    if (Option.isSome(database)) yield* DatabaseUrl.check(database.value)
    const stateDir = stateDirOf(process.cwd())
    const location = locationOf(database, stateDir, id)
    if (location._tag === "Sqlite" && !Fs.existsSync(location.file)) {
      return yield* new InvalidInputError({
        message: `resume: no durable session ${id} (${location.file} not found; sessions lists them)`
      })
    }
    // the lease first: of two resumes of one session, one runs it and the other is refused, whatever their timing
    yield* Effect.gen(function* () {
      const record = yield* DurableStore.find(id).pipe(
        Effect.provide(DurableStore.sqlLayer(location)),
        orUnusable(location)
      )
      if (Option.isNone(record)) return yield* new InvalidInputError({ message: `resume: no durable session ${id}` })
      const state = DurableStore.stateOf(record.value)
      if (state === "running") {
        // alive, yet without the lease: a process of another host, or one that has not taken it yet
        return yield* new InvalidInputError({
          message: `resume: session ${id} is being run by pid ${record.value.pid} on ${record.value.host}`
        })
      }
      if (state !== "interrupted") {
        yield* Console.error(`armature: session ${id} has already ended (${state})`)
        if (state !== "success") process.exitCode = 1
        return
      }
      yield* execute(location, id, display)
    }).pipe(leased(location, id, "resume"))
  })

/** `armature sessions`: the durable sessions with their state, as a table or JSON lines. */
export const sessions = (database: Option.Option<string>, json: boolean) =>
  Effect.gen(function* () {
    if (Option.isSome(database)) yield* DatabaseUrl.check(database.value)
    const stateDir = stateDirOf(process.cwd())
    const records = yield* Option.match(database, {
      onNone: () =>
        Effect.forEach(DurableStore.embeddedSessions(stateDir), (id) =>
          DurableStore.find(id).pipe(Effect.provide(DurableStore.sqlLayer(locationOf(database, stateDir, id))))
        ).pipe(
          Effect.map((found) => found.flatMap((r) => (Option.isSome(r) ? [r.value] : []))),
          Effect.orDie
        ),
      onSome: (url) =>
        DurableStore.list.pipe(
          Effect.provide(DurableStore.sqlLayer({ _tag: "Postgres", url })),
          orUnusable({ _tag: "Postgres", url })
        )
    })
    for (const record of records) {
      const args = decodeArgs(record.args)
      const row = {
        session_id: record.id,
        state: DurableStore.stateOf(record),
        created_at: new Date(record.createdAt).toISOString(),
        updated_at: new Date(record.updatedAt).toISOString(),
        pid: record.pid,
        prompt: args.prompt
      }
      yield* Console.log(
        json
          ? JSON.stringify(row)
          : `${row.session_id}  ${row.state.padEnd(22)}  ${row.updated_at}  ${args.prompt.replace(/\s+/g, " ").slice(0, 60)}`
      )
    }
    if (records.length === 0 && !json) yield* Console.error("armature: no durable sessions")
  })
