/**
 * `armature serve`: a runner of durable sessions on a PostgreSQL database shared with other runners
 * (`@effect/cluster`'s socket runner, `ClusterWorkflowEngine`, SQL storage), with a small HTTP API to start a session,
 * stream its events, send it a follow-up prompt, interrupt it and read its state. A session runs on the runner that
 * holds its shard; its events are stored in the database, so any runner streams them. See docs/durable.md.
 */
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import { createServer } from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Sharding from "@effect/cluster/Sharding"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { NodeHttpServer } from "@effect/platform-node"
import * as SqlClient from "@effect/sql/SqlClient"
import { PgClient } from "@effect/sql-pg"
import * as DurableDeferred from "@effect/workflow/DurableDeferred"
import { WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import { Cause, Chunk, Console, Context, Effect, Layer, Option, PubSub, Schedule, Schema, Stream } from "effect"
import { InvalidInputError } from "../domain/Errors.js"
import { permissionModes } from "../domain/Permission.js"
import * as PermissionRule from "../domain/PermissionRule.js"
import * as ServeAccess from "../domain/ServeAccess.js"
import * as CallProcesses from "../layers/durable/CallProcesses.js"
import * as DurableSession from "../layers/durable/DurableSession.js"
import * as DurableStep from "../layers/durable/DurableStep.js"
import * as DurableStore from "../layers/durable/DurableStore.js"
import * as RunnerWatch from "../layers/durable/RunnerWatch.js"
import * as SessionEvents from "../layers/durable/SessionEvents.js"
import * as SessionLease from "../layers/durable/SessionLease.js"
import * as Tables from "../layers/durable/Tables.js"
import * as ToolVersionPins from "../layers/durable/ToolVersionPins.js"
import * as OtlpExport from "../layers/observability/OtlpExport.js"
import * as SpawnRecord from "../layers/process/SpawnRecord.js"
import { CallJournal } from "../services/CallJournal.js"
import { LanguageModel } from "../services/LanguageModel.js"
import { Transcript, type TranscriptEntry } from "../services/Transcript.js"
import type { RunArgs } from "./AgentRun.js"
import { runAgent } from "./AgentRun.js"
import * as Audit from "./Audit.js"
import { causeOf, withoutPassword } from "./DatabaseUrl.js"
import { decodeArgs, encodeArgs, sessionEngine, stateDirOf, waitForLease } from "./DurableRun.js"
import { failure, guard, jsonBody } from "./ServeGuard.js"
import * as ServeToken from "./ServeToken.js"

/** Where `armature serve` listens, and the defaults of the sessions it starts. */
export interface ServeOptions {
  readonly database: string
  readonly host: string
  readonly port: number
  readonly runnerHost: string
  readonly runnerPort: number
  /** The run options of every session (its prompt and a few options come with the request). */
  readonly defaults: Omit<RunArgs, "prompt">
  /** `--token-file`, if given (else ARMATURE_SERVE_TOKEN, else the state directory's token file). */
  readonly tokenFile: string | undefined
  /** `--allow-origin`: origins whose pages may call the API. */
  readonly allowOrigins: ReadonlyArray<string>
  /** `--allow-host`: names a request's `Host` may carry besides the address listened on. */
  readonly allowHosts: ReadonlyArray<string>
  /** `--max-body`: the largest request body, in bytes. */
  readonly maxBody: number
  /** `--project`: the folders a session's `cwd` may be in (real paths). */
  readonly projects: ReadonlyArray<string>
  /** `--max-prompt`: the longest prompt, in characters. */
  readonly maxPrompt: number
  /** `--max-sessions`: sessions running on this runner (or just started through it) at once. */
  readonly maxSessions: number
  /** `--max-streams`: event streams open on this runner at once. */
  readonly maxStreams: number
  /** `--max-session-streams`: event streams of one session open on this runner at once. */
  readonly maxSessionStreams: number
}

/** The follow-up prompt number `n` (1 is the first follow-up) of a session: completed by `POST …/prompt`. */
const followUp = (n: number) => DurableDeferred.make(`prompt/${n}`, { success: Schema.String })

/** The prompts a session has been given (its first included), kept beside its record. */
const ensurePromptsColumn = Tables.once(
  "armature_sessions.prompts",
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`ALTER TABLE armature_sessions ADD COLUMN IF NOT EXISTS prompts INTEGER NOT NULL DEFAULT 1`
  )
)

const promptsOf = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ prompts: number }>`SELECT prompts FROM armature_sessions WHERE id = ${id}`.pipe(
      Effect.map((rows) => Number(rows[0]?.prompts ?? 1))
    )
  )

/** The changes of sessions this runner hears (`SessionEvents.changes`): event streams and interrupts wait on it. */
class SessionChanges extends Context.Tag("armature/SessionChanges")<SessionChanges, PubSub.PubSub<string>>() {}

/**
 * The user's interrupts of prompt `n` of a session, as the agent loop takes them: read from the database once, then
 * each time a notification says one was asked for (`SessionEvents.interruptKey`), and every 5 s without one in case
 * a notification was lost. (It was read every 250 ms for each running session: most of a loaded runner's statements.)
 */
const interruptsOf = (sql: SqlClient.SqlClient, changes: PubSub.PubSub<string>, id: string, n: number) =>
  Stream.unwrapScoped(
    Effect.map(PubSub.subscribe(changes), (woken) => {
      const asked = SessionEvents.interruptRequested(id, n).pipe(
        Effect.provideService(SqlClient.SqlClient, sql),
        Effect.orDie
      )
      const key = SessionEvents.interruptKey(id)
      const next = woken.take.pipe(
        Effect.repeat({ until: (changed) => changed === key }),
        Effect.timeoutOption("5 seconds")
      )
      return Stream.concat(Stream.fromEffect(asked), Stream.repeatEffect(Effect.zipRight(next, asked)))
    })
  ).pipe(
    Stream.filter((yes) => yes),
    Stream.take(1),
    Stream.map((): void => undefined)
  )

/**
 * The body of a served session's workflow: its first prompt, then each follow-up prompt as it is given (the
 * workflow is suspended in between), every run continuing the conversation of the ones before. Its lines go to the
 * session's events; its state is recorded after each run.
 */
/** The sessions whose workflow body runs in this process now (for `GET /runner`). */
const runningHere = new Set<string>()

/** Whether ARMATURE_SERVE_TRACE=1 asks for the phases of each session taken up, on stderr. */
const tracing = process.env.ARMATURE_SERVE_TRACE === "1"

/**
 * A phase mark of a session on this runner (ARMATURE_SERVE_TRACE=1): `armature serve trace <ms since epoch>
 * <session> <phase>`, to see where the time of a failover goes (body started, lease won, stored state read, run
 * started, first model request, …).
 */
const trace = (sessionId: string, phase: string) =>
  tracing
    ? Effect.sync(() => void process.stderr.write(`armature serve trace ${Date.now()} ${sessionId} ${phase}\n`))
    : Effect.void

const sessionBody = (sessionId: string) => {
  // the stored values of the session's steps, read once the lease is held (until then, none)
  const steps = new Map<string, unknown>()
  const stored = DurableStep.StoredSteps.of({
    get: (name) => (steps.has(name) ? Option.some(steps.get(name)) : Option.none())
  })
  return Effect.gen(function* () {
    yield* Effect.acquireRelease(
      Effect.sync(() => void runningHere.add(sessionId)),
      () => Effect.sync(() => void runningHere.delete(sessionId))
    )
    const sql = yield* SqlClient.SqlClient
    const changes = yield* SessionChanges
    yield* trace(sessionId, "body")
    // one owner: a `resume` of the session (or a runner cut off from the others that still runs it) is let finish
    yield* waitForLease(sessionId)
    yield* trace(sessionId, "leased")
    // a new session is taken up once; one given up as never started (its runner died) stays so and runs nothing
    const claimed = yield* DurableStore.claimStart(sessionId)
    // what the replay will find stored, read at once and side by side: the record, the steps (each a statement or two
    // through the engine), the places of the lines already stored (each a statement to store again for nothing), the
    // prompts given; and what an execution that died (this runner's or another's) left running is gone before this
    // one goes on
    const instance = yield* WorkflowInstance
    const [record, stepValues, places, prompts] = yield* Effect.all(
      [
        DurableStore.find(sessionId),
        DurableStore.storedSteps(instance.workflow.name, instance.executionId),
        SessionEvents.storedPlaces(sessionId),
        promptsOf(sessionId),
        CallProcesses.killLeftovers(sessionId)
      ],
      { concurrency: "unbounded" }
    )
    yield* trace(sessionId, "read")
    if (Option.isNone(record)) return yield* Effect.dieMessage(`durable session ${sessionId} has no record`)
    if (!claimed && record.value.state === DurableStore.notStarted) {
      return yield* Effect.logWarning(`armature serve: session ${sessionId} was given up before it started`)
    }
    for (const [name, value] of stepValues) steps.set(name, value)
    const args = decodeArgs(record.value.args)
    const recorder = yield* CallProcesses.recorder(sessionId)
    const { journal, model, position } = yield* DurableSession.make({
      started: (toolUseId) =>
        CallProcesses.callStarted(sessionId, toolUseId).pipe(
          Effect.provideService(SqlClient.SqlClient, sql),
          Effect.orDie
        )
    })
    const events = yield* SessionEvents.console(sessionId, position, places)
    yield* trace(sessionId, "ready")
    // the conversation as a transcript in memory: each run continues from the lines of the runs before it
    const entries: Array<TranscriptEntry> = []
    for (let n = 0; ; n++) {
      const prompt = n === 0 ? args.prompt : yield* DurableDeferred.await(followUp(n))
      // the runs before the latest one are replays: the session is not running them again, it is only catching up
      const latest = n >= prompts - 1
      if (latest) yield* DurableStore.markRunning(sessionId, record.value.args)
      yield* trace(sessionId, `run ${n}${latest ? "" : " (replay)"}`)
      const audit = Audit.make()
      const transcript = Transcript.of({
        path: "",
        previous: [...entries],
        append: (entry) =>
          Effect.sync(() => {
            entries.push({ ...entry, session_id: sessionId, timestamp: new Date().toISOString() })
          }),
        sync: Effect.void
      })
      // the tool versions of the session's start are pinned before its calls, on every run of it (as run --durable)
      const subtype = yield* Effect.zipRight(
        Effect.zipRight(trace(sessionId, "engine"), ToolVersionPins.pin),
        runAgent({ ...args, prompt }, audit, {
          interrupts: latest ? interruptsOf(sql, changes, sessionId, n) : Stream.never,
          exitCode: false
        })
      ).pipe(
        Effect.updateService(LanguageModel, (inner) => {
          const durable = model(inner)
          if (!tracing) return durable
          // each turn asked of the model (a replayed one is answered from the store), as a phase mark
          let turns = 0
          return {
            ...durable,
            stream: (request) => Stream.unwrap(Effect.as(trace(sessionId, `model ${turns++}`), durable.stream(request)))
          }
        }),
        Effect.provideService(CallJournal, journal),
        Effect.provideService(Transcript, transcript),
        Effect.provide(sessionEngine({ ...args, prompt }, sessionId, audit)),
        Effect.provide(OtlpExport.layerFromEnv()),
        Effect.map((result) => result.subtype),
        // a run that cannot start or fails outright (no API key, a settings file that does not parse) ends with an
        // error result line, as a failed run would, instead of leaving the session running; interrupts go on up
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.failCause(cause)
            : Effect.gen(function* () {
                const message = Cause.pretty(cause).split("\n")[0]
                // one line on the runner's own stderr (the Console here is the session's events)
                yield* Effect.sync(
                  () => void process.stderr.write(`armature serve: session ${sessionId}: ${message}\n`)
                )
                yield* Console.log(
                  JSON.stringify({
                    type: "result",
                    subtype: "error_during_execution",
                    is_error: true,
                    session_id: sessionId,
                    result: message
                  })
                )
                return "error_during_execution"
              })
        ),
        Effect.withConsole(events),
        SpawnRecord.recording(recorder)
      )
      yield* trace(sessionId, `ended ${n}`)
      if (latest) {
        yield* DurableStore.markEnded(sessionId, subtype)
        yield* SessionEvents.changed(sessionId)
      }
    }
  }).pipe(Effect.scoped, Effect.provideService(DurableStep.StoredSteps, stored))
}

/** How long a new session may wait to be taken up by a runner before it is given up as never started. */
const startGraceMs = 60_000

/**
 * Gives up the sessions that stayed starting past `startGraceMs` (the runner that took their request died before
 * handing them to the cluster): each is marked not started, its events end with an error result, its readers are
 * told. Any runner does it; a session is given up once (one UPDATE decides).
 */
const giveUpUnstarted = Effect.gen(function* () {
  const ids = yield* DurableStore.giveUpStarting(startGraceMs)
  for (const id of ids) {
    const line = JSON.stringify({
      type: "result",
      subtype: DurableStore.notStarted,
      is_error: true,
      session_id: id,
      result: `the session never started: no runner took it up within ${startGraceMs / 1000} s of its creation`
    })
    yield* SessionEvents.append(id, { turn: 0, attempt: "", key: `result/${DurableStore.notStarted}` }, line)
    yield* SessionEvents.changed(id)
    yield* Console.error(`armature serve: session ${id} never started; marked ${DurableStore.notStarted}`)
  }
})

/** The body of `POST /sessions`: the prompt and the run options a request may set. */
const StartBody = Schema.Struct({
  prompt: Schema.String.pipe(Schema.minLength(1)),
  cwd: Schema.optional(Schema.String),
  model: Schema.optional(Schema.String),
  max_turns: Schema.optional(Schema.Int.pipe(Schema.positive())),
  append_system_prompt: Schema.optional(Schema.String),
  permission_mode: Schema.optional(Schema.Literal(...permissionModes)),
  allowed_tools: Schema.optional(Schema.Array(Schema.String)),
  disallowed_tools: Schema.optional(Schema.Array(Schema.String))
})

const PromptBody = Schema.Struct({ prompt: Schema.String.pipe(Schema.minLength(1)) })

/** The body of `POST …/interrupt`: nothing (or `{}`). */
const InterruptBody = Schema.Struct({})

const sessionIdParam = Effect.map(HttpRouter.params, (p) => p.id ?? "")

/** The record of the session of the route, or a 404 reply. */
const sessionOfRoute = Effect.gen(function* () {
  const id = yield* sessionIdParam
  const record = yield* Effect.orDie(DurableStore.find(id))
  if (Option.isNone(record)) return yield* Effect.fail(failure(404, `no session ${id}`))
  return record.value
})

/** The state reply of a session. */
const stateOf = (record: DurableStore.SessionRecord) =>
  Effect.gen(function* () {
    const events = yield* SessionEvents.count(record.id)
    const prompts = yield* promptsOf(record.id)
    return {
      session_id: record.id,
      state: record.state,
      prompts,
      events,
      runner: { pid: record.pid, host: record.host },
      created_at: new Date(record.createdAt).toISOString(),
      updated_at: new Date(record.updatedAt).toISOString()
    }
  }).pipe(Effect.orDie)

/**
 * The lines of a session after line `after`, as they are stored, until the session is no longer running and every
 * line is sent (checked in that order, so that no line written before the end is missed). Between reads it waits
 * for the session's id on `changes` (subscribed before the first read, so no change is missed), and reads again
 * every 5 s without one in case a notification was lost (the listening connection was being replaced).
 *
 * By default only each turn's latest attempt is read; when a turn this stream has sent lines of is asked again
 * (a runner took the session over before the turn was stored), a `superseded` line says so before the new
 * attempt's lines: the lines of the earlier attempt of that turn no longer count. With `all`, every line is sent.
 */
const eventLines = (
  sql: SqlClient.SqlClient,
  changes: PubSub.PubSub<string>,
  id: string,
  after: number,
  all: boolean
): Stream.Stream<string> =>
  Stream.unwrapScoped(
    Effect.map(PubSub.subscribe(changes), (woken) => {
      // the attempt of each turn this stream has sent lines of
      const sent = new Map<number, string>()
      return Stream.paginateChunkEffect(after, (last) =>
        Effect.gen(function* () {
          while (true) {
            const record = yield* DurableStore.find(id)
            const rows = yield* SessionEvents.after(id, last, { all })
            if (rows.length > 0) {
              const next = rows[rows.length - 1].seq
              const out: Array<string> = []
              for (const row of rows) {
                const before = sent.get(row.turn)
                if (!all && before !== undefined && before !== row.attempt) {
                  out.push(
                    `${JSON.stringify({
                      type: "system",
                      subtype: "superseded",
                      session_id: id,
                      turn: row.turn,
                      attempt: before,
                      by: row.attempt
                    })}\n`
                  )
                }
                sent.set(row.turn, row.attempt)
                out.push(`${SessionEvents.served(row)}\n`)
              }
              return [Chunk.fromIterable(out), Option.some(next)] as const
            }
            if (Option.isNone(record) || !isLive(record.value.state)) {
              return [Chunk.empty<string>(), Option.none<number>()] as const
            }
            yield* woken.take.pipe(
              Effect.repeat({ until: (changed) => changed === id }),
              Effect.timeoutOption("5 seconds")
            )
          }
        }).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.orDie)
      )
    })
  )

/** Whether a session's state may still change by itself (its events are not over). */
const isLive = (state: string): boolean => state === "running" || state === DurableStore.starting

/** A 429 reply: too many of something at once; try again after a few seconds. */
const busy = (message: string) => failure(429, message, { "retry-after": "5" })

/** A prompt longer than `--max-prompt`, as a 413 reply. */
const promptTooLong = (prompt: string, max: number) =>
  prompt.length > max
    ? Effect.fail(failure(413, `prompt: ${prompt.length} characters, more than ${max} (--max-prompt)`))
    : Effect.void

/** The sessions this runner runs or has just started (running, on this host under this pid). */
const sessionsHere = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM armature_sessions
    WHERE state IN ('running', ${DurableStore.starting}) AND pid = ${process.pid} AND host = ${Os.hostname()}`.pipe(
    Effect.map((rows) => Number(rows[0]?.n ?? 0))
  )
).pipe(Effect.orDie)

/** A 429 reply when this runner already has `--max-sessions` sessions running. */
const sessionRoom = (max: number) =>
  Effect.flatMap(sessionsHere, (n) =>
    n >= max
      ? Effect.fail(busy(`this runner runs ${n} sessions, its most (--max-sessions); try again later`))
      : Effect.void
  )

/**
 * A session's `cwd` as a real path when it is inside one of the runner's projects: a 400 reply when it is not a
 * directory, 403 when it is outside them (nothing of it is read).
 */
const cwdWithin = (cwd: string, projects: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const real = yield* Effect.try({
      try: () => Fs.realpathSync(Path.resolve(cwd)),
      catch: () => failure(400, `cwd: ${cwd} is not a directory`)
    })
    if (!Fs.statSync(real).isDirectory()) return yield* Effect.fail(failure(400, `cwd: ${cwd} is not a directory`))
    if (!projects.some((root) => ServeAccess.isInside(root, real))) {
      return yield* Effect.fail(failure(403, `cwd: ${cwd} is outside the runner's projects (--project)`))
    }
    return real
  })

/** Counts of the event streams open on this runner, in all and per session. */
const streamCounts = () => {
  let all = 0
  const perSession = new Map<string, number>()
  return {
    /** Takes a place for a stream of `id`, or says why there is none. */
    take: (id: string, maxAll: number, maxSession: number): string | undefined => {
      const mine = perSession.get(id) ?? 0
      if (all >= maxAll) return `this runner has ${all} event streams open, its most (--max-streams); try again later`
      if (mine >= maxSession) {
        return `session ${id} has ${mine} event streams open here, its most (--max-session-streams); try again later`
      }
      all += 1
      perSession.set(id, mine + 1)
      return undefined
    },
    /** The streams open, and the sessions they are of. */
    open: () => ({ all, sessions: perSession.size }),
    release: (id: string): void => {
      all -= 1
      const mine = (perSession.get(id) ?? 1) - 1
      if (mine <= 0) perSession.delete(id)
      else perSession.set(id, mine)
    }
  }
}

/** The HTTP API of a runner; `changes` wakes its event streams. */
const router = (options: ServeOptions, changes: PubSub.PubSub<string>) => {
  const streams = streamCounts()
  const ceiling: ServeAccess.Ceiling = {
    permissionMode: Option.getOrElse(options.defaults.permissionMode, () => "default" as const),
    allowedTools: options.defaults.allowedTools.flatMap(PermissionRule.splitRuleList),
    maxTurns: options.defaults.maxTurns
  }
  return HttpRouter.empty.pipe(
    HttpRouter.post(
      "/sessions",
      Effect.gen(function* () {
        const body = yield* jsonBody(StartBody, options.maxBody)
        yield* promptTooLong(body.prompt, options.maxPrompt)
        const allowedTools = (body.allowed_tools ?? []).flatMap(PermissionRule.splitRuleList)
        const widened = ServeAccess.widening(ceiling, {
          permissionMode: body.permission_mode,
          allowedTools,
          maxTurns: body.max_turns
        })
        if (widened !== undefined) return yield* failure(403, widened)
        const cwd = body.cwd === undefined ? options.defaults.cwd : yield* cwdWithin(body.cwd, options.projects)
        yield* sessionRoom(options.maxSessions)
        const id = Crypto.randomUUID()
        const args: RunArgs = {
          ...options.defaults,
          prompt: body.prompt,
          cwd,
          allowedTools: body.allowed_tools === undefined ? options.defaults.allowedTools : allowedTools,
          disallowedTools: [...options.defaults.disallowedTools, ...(body.disallowed_tools ?? [])],
          model: body.model === undefined ? options.defaults.model : Option.some(body.model),
          maxTurns: body.max_turns ?? options.defaults.maxTurns,
          appendSystemPrompt:
            body.append_system_prompt === undefined
              ? options.defaults.appendSystemPrompt
              : Option.some(body.append_system_prompt),
          permissionMode:
            body.permission_mode === undefined ? options.defaults.permissionMode : Option.some(body.permission_mode)
        }
        // starting until a runner takes it up: should this runner die before the cluster has it, it is given up
        yield* Effect.orDie(DurableStore.markStarting(id, encodeArgs(args)))
        // handed to the cluster: the runner that holds the session's shard runs it
        yield* DurableSession.SessionWorkflow.execute({ sessionId: id }, { discard: true })
        return HttpServerResponse.unsafeJson({ session_id: id }, { status: 201 })
      })
    ),
    // what this runner holds in memory for sessions: each count goes back to 0 once its sessions have ended, their
    // streams closed and their entities gone idle (see docs/durable.md, Limits)
    HttpRouter.get(
      "/runner",
      Effect.gen(function* () {
        const sharding = yield* Sharding.Sharding
        const entities = yield* sharding.activeEntityCount
        const open = streams.open()
        return HttpServerResponse.unsafeJson({
          pid: process.pid,
          sessions_running: [...runningHere],
          entities,
          event_streams: open.all,
          event_stream_sessions: open.sessions,
          call_groups: CallProcesses.runningGroups(),
          rss_bytes: process.memoryUsage().rss
        })
      })
    ),
    HttpRouter.get(
      "/sessions/:id",
      Effect.flatMap(sessionOfRoute, (record) => Effect.map(stateOf(record), (s) => HttpServerResponse.unsafeJson(s)))
    ),
    HttpRouter.get(
      "/sessions/:id/events",
      Effect.gen(function* () {
        const record = yield* sessionOfRoute
        const query = yield* HttpServerRequest.schemaSearchParams(
          Schema.Struct({ after: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.nonNegative())) })
        ).pipe(Effect.mapError(() => failure(400, "after: expected the seq of the last line read (0 or more)")))
        const attempts = yield* HttpServerRequest.schemaSearchParams(
          Schema.Struct({ attempts: Schema.optional(Schema.Literal("all", "final")) })
        ).pipe(Effect.mapError(() => failure(400, "attempts: expected all or final")))
        const sql = yield* SqlClient.SqlClient
        const full = streams.take(record.id, options.maxStreams, options.maxSessionStreams)
        if (full !== undefined) return yield* busy(full)
        const lines = eventLines(sql, changes, record.id, query.after ?? 0, attempts.attempts === "all").pipe(
          Stream.ensuring(Effect.sync(() => streams.release(record.id)))
        )
        return HttpServerResponse.stream(Stream.encodeText(lines), { contentType: "application/x-ndjson" })
      })
    ),
    HttpRouter.post(
      "/sessions/:id/prompt",
      Effect.gen(function* () {
        const record = yield* sessionOfRoute
        const body = yield* jsonBody(PromptBody, options.maxBody)
        yield* promptTooLong(body.prompt, options.maxPrompt)
        yield* sessionRoom(options.maxSessions)
        const sql = yield* SqlClient.SqlClient
        // one follow-up at a time: the session takes a prompt only when its last run has ended
        const taken = yield* sql<{ prompts: number }>`UPDATE armature_sessions
          SET prompts = prompts + 1, state = 'running', updated_at = ${Date.now()}
          WHERE id = ${record.id} AND state NOT IN ('running', ${DurableStore.starting}, ${DurableStore.notStarted})
          RETURNING prompts`.pipe(Effect.orDie)
        if (taken.length === 0) {
          const now = yield* sessionOfRoute
          return yield* failure(
            409,
            now.state === DurableStore.notStarted
              ? `session ${record.id} never started; start a new one`
              : `session ${record.id} is running; interrupt it or wait`
          )
        }
        const n = Number(taken[0].prompts) - 1
        const executionId = yield* DurableSession.SessionWorkflow.executionId({ sessionId: record.id })
        const deferred = followUp(n)
        yield* DurableDeferred.succeed(deferred, {
          token: DurableDeferred.tokenFromExecutionId(deferred, {
            workflow: DurableSession.SessionWorkflow,
            executionId
          }),
          value: body.prompt
        })
        return HttpServerResponse.unsafeJson({ session_id: record.id, prompt: n }, { status: 202 })
      })
    ),
    HttpRouter.post(
      "/sessions/:id/interrupt",
      Effect.gen(function* () {
        const record = yield* sessionOfRoute
        yield* jsonBody(InterruptBody, options.maxBody)
        if (record.state === DurableStore.starting) {
          return yield* failure(409, `session ${record.id} has not started yet; try again in a moment`)
        }
        if (record.state !== "running") {
          return yield* failure(409, `session ${record.id} is not running (${record.state})`)
        }
        const prompts = yield* Effect.orDie(promptsOf(record.id))
        yield* Effect.orDie(SessionEvents.requestInterrupt(record.id, prompts - 1))
        yield* Effect.orDie(SessionEvents.changed(SessionEvents.interruptKey(record.id)))
        return HttpServerResponse.unsafeJson({ session_id: record.id, interrupted: prompts - 1 }, { status: 202 })
      })
    ),
    HttpRouter.catchAll((e) => (HttpServerResponse.isServerResponse(e) ? Effect.succeed(e) : Effect.fail(e)))
  )
}

/** How long a stopping runner (SIGTERM, SIGINT) may take to hand its sessions over before it exits regardless. */
const stopDeadlineMs = 1_000

/**
 * Ends this runner at once: its sessions' call processes are killed (so none goes on unowned) and the process exits
 * with `code`; the database drops its connections, and with them its locks, so the other runners take its sessions
 * over as from a runner that died.
 */
const exitNow = (why: string, code: number) => {
  const killed = CallProcesses.killOwnNow()
  process.stderr.write(
    `armature serve: ${why}; killed ${killed} call process group${killed === 1 ? "" : "s"} and exiting\n`
  )
  process.exit(code)
}

/**
 * A stop signal starts a deadline: the orderly stop (the cluster lets the sessions go and gives their shards up) has
 * `stopDeadlineMs`; a runner still there then exits regardless.
 */
const armStopDeadline = Effect.sync(() => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => {
      setTimeout(() => exitNow(`still stopping ${stopDeadlineMs / 1000} s after ${signal}`, 0), stopDeadlineMs).unref()
    })
  }
})

/**
 * What a runner does when it may have lost its locks (its database connection stopped answering): the other runners
 * may already be running its sessions, so it runs none of them any more: it exits (status 1), its calls killed.
 */
const lockLost = (reason: string) => Effect.sync(() => exitNow(`lost its locks: ${reason}`, 1))

/** Runs a runner until the process is told to stop (SIGTERM, SIGINT): then it lets its shards go and exits. */
export const serve = (options: ServeOptions) =>
  Effect.gen(function* () {
    // every connection of this runner is named with its tag, for the watcher to end them all once it is gone
    const tag = RunnerWatch.runnerTag({ host: options.runnerHost, port: options.runnerPort })
    const sql = DurableStore.sqlLayer({ _tag: "Postgres", url: options.database }, SessionLease.processName(tag))
    const token = yield* ServeToken.resolve(
      options.tokenFile,
      process.env[ServeToken.tokenVariable],
      stateDirOf(options.defaults.cwd)
    )
    const localAddresses = Object.values(Os.networkInterfaces()).flatMap((list) => (list ?? []).map((a) => a.address))
    const guarded = guard({
      token: token.token,
      hostNames: ServeAccess.allowedHostNames(options.host, options.allowHosts, localAddresses, Os.hostname()),
      allowOrigins: new Set(options.allowOrigins)
    })
    yield* Effect.gen(function* () {
      // runners started together on a new database make its tables one at a time
      yield* DurableStore.withSchemaLock(
        Effect.gen(function* () {
          yield* DurableStore.clusterTables
          yield* DurableStore.stepsIndex
          yield* DurableStore.list
          yield* SessionEvents.ensureTables
          yield* ensurePromptsColumn
          yield* CallProcesses.ensureTable
          yield* SessionLease.ensureTable
        })
      )
      // the call processes of runners on this machine that died
      const killed = yield* CallProcesses.killOrphans
      if (killed > 0) yield* Console.error(`armature serve: killed ${killed} process groups left by runners that died`)
    }).pipe(
      Effect.provide(sql),
      Effect.mapError(
        (e) => new InvalidInputError({ message: `--database: ${withoutPassword(options.database)}: ${causeOf(e)}` })
      )
    )
    const app = Layer.mergeAll(
      Layer.unwrapEffect(Effect.map(SessionChanges, (changes) => HttpServer.serve(guarded(router(options, changes))))),
      Layer.effectDiscard(
        Effect.flatMap(
          HttpServer.addressFormattedWith((address) => Effect.succeed(address)),
          (address) =>
            Console.error(
              `armature serve: listening on ${address}, runner ${options.runnerHost}:${options.runnerPort}; ` +
                `token: ${token.source === ServeToken.tokenVariable ? `from ${token.source}` : `in ${token.source}`}`
            )
        )
      ),
      // sessions whose runner died before handing them over end as not started, found by whichever runner looks
      Layer.scopedDiscard(
        Effect.forkScoped(
          giveUpUnstarted.pipe(
            Effect.catchAllCause((cause) => Effect.logWarning("armature serve: giving up unstarted sessions", cause)),
            Effect.repeat(Schedule.spaced("5 seconds"))
          )
        )
      )
    )
    yield* armStopDeadline
    yield* Layer.launch(
      app.pipe(
        Layer.provide(NodeHttpServer.layer(createServer, { host: options.host, port: options.port })),
        Layer.provide(DurableSession.layer(sessionBody).pipe(Layer.provide(SessionLease.layerNamed(tag)))),
        // one listening connection per runner, for its event streams and its sessions' interrupts
        Layer.provideMerge(Layer.scoped(SessionChanges, Effect.flatMap(PgClient.PgClient, SessionEvents.changes))),
        Layer.provideMerge(DurableStore.runnerLayer({ host: options.runnerHost, port: options.runnerPort }, lockLost)),
        Layer.provideMerge(sql)
      )
    ).pipe(
      Effect.mapError((e) => {
        const tag = typeof e === "object" && e !== null && "_tag" in e ? String(e._tag) : ""
        const flag = tag === "ServeError" ? "--port" : tag === "SocketServerError" ? "--runner-port" : "serve"
        return new InvalidInputError({ message: `${flag}: ${causeOf(e)}` })
      })
    )
  })
