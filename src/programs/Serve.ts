/**
 * `armature serve`: a runner of durable sessions on a PostgreSQL database shared with other runners
 * (`@effect/cluster`'s socket runner, `ClusterWorkflowEngine`, SQL storage), with a small HTTP API to start a session,
 * stream its events, send it a follow-up prompt, interrupt it and read its state. A session runs on the runner that
 * holds its shard; its events are stored in the database, so any runner streams them. See docs/durable.md.
 */
import * as Crypto from "node:crypto"
import { createServer } from "node:http"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { NodeHttpServer } from "@effect/platform-node"
import * as SqlClient from "@effect/sql/SqlClient"
import * as DurableDeferred from "@effect/workflow/DurableDeferred"
import { Cause, Chunk, Console, Effect, Layer, Option, Schedule, Schema, Stream } from "effect"
import { InvalidInputError } from "../domain/Errors.js"
import { permissionModes } from "../domain/Permission.js"
import * as DurableSession from "../layers/durable/DurableSession.js"
import * as DurableStore from "../layers/durable/DurableStore.js"
import * as SessionEvents from "../layers/durable/SessionEvents.js"
import * as OtlpExport from "../layers/observability/OtlpExport.js"
import { CallJournal } from "../services/CallJournal.js"
import { LanguageModel } from "../services/LanguageModel.js"
import { Transcript, type TranscriptEntry } from "../services/Transcript.js"
import * as Audit from "./Audit.js"
import { causeOf, withoutPassword } from "./DatabaseUrl.js"
import { decodeArgs, encodeArgs, sessionEngine } from "./DurableRun.js"
import type { RunArgs } from "./RunCommand.js"
import { runAgent } from "./RunCommand.js"

/** Where `armature serve` listens, and the defaults of the sessions it starts. */
export interface ServeOptions {
  readonly database: string
  readonly host: string
  readonly port: number
  readonly runnerHost: string
  readonly runnerPort: number
  /** The run options of every session (its prompt and a few options come with the request). */
  readonly defaults: Omit<RunArgs, "prompt">
}

/** The follow-up prompt number `n` (1 is the first follow-up) of a session: completed by `POST …/prompt`. */
const followUp = (n: number) => DurableDeferred.make(`prompt/${n}`, { success: Schema.String })

/** The prompts a session has been given (its first included), kept beside its record. */
const ensurePromptsColumn = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql`ALTER TABLE armature_sessions ADD COLUMN IF NOT EXISTS prompts INTEGER NOT NULL DEFAULT 1`
)

const promptsOf = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ prompts: number }>`SELECT prompts FROM armature_sessions WHERE id = ${id}`.pipe(
      Effect.map((rows) => Number(rows[0]?.prompts ?? 1))
    )
  )

/** The user's interrupts of prompt `n` of a session, as the agent loop takes them: polled from the database. */
const interruptsOf = (sql: SqlClient.SqlClient, id: string, n: number): Stream.Stream<void> =>
  Stream.repeatEffectWithSchedule(
    SessionEvents.interruptRequested(id, n).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.orDie),
    Schedule.spaced("250 millis")
  ).pipe(
    Stream.filter((asked) => asked),
    Stream.take(1),
    Stream.map((): void => undefined)
  )

/**
 * The body of a served session's workflow: its first prompt, then each follow-up prompt as it is given (the
 * workflow is suspended in between), every run continuing the conversation of the ones before. Its lines go to the
 * session's events; its state is recorded after each run.
 */
const sessionBody = (sessionId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const record = yield* DurableStore.find(sessionId)
    if (Option.isNone(record)) return yield* Effect.dieMessage(`durable session ${sessionId} has no record`)
    const args = decodeArgs(record.value.args)
    const prompts = yield* promptsOf(sessionId)
    const { journal, model } = yield* DurableSession.make()
    const events = yield* SessionEvents.console(sessionId)
    // the conversation as a transcript in memory: each run continues from the lines of the runs before it
    const entries: Array<TranscriptEntry> = []
    for (let n = 0; ; n++) {
      const prompt = n === 0 ? args.prompt : yield* DurableDeferred.await(followUp(n))
      // the runs before the latest one are replays: the session is not running them again, it is only catching up
      const latest = n >= prompts - 1
      if (latest) yield* DurableStore.markRunning(sessionId, record.value.args)
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
      const subtype = yield* runAgent({ ...args, prompt }, audit, {
        interrupts: latest ? interruptsOf(sql, sessionId, n) : Stream.never,
        exitCode: false
      }).pipe(
        Effect.updateService(LanguageModel, model),
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
                yield* Effect.logError(`armature serve: session ${sessionId}: ${message}`)
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
        Effect.withConsole(events)
      )
      if (latest) yield* DurableStore.markEnded(sessionId, subtype)
    }
  })

/** An error reply: `{ "error": message }`. */
const failure = (status: number, message: string) => HttpServerResponse.unsafeJson({ error: message }, { status })

/** The body of `POST /sessions`: the prompt and the run options a request may set. */
const StartBody = Schema.Struct({
  prompt: Schema.String.pipe(Schema.minLength(1)),
  cwd: Schema.optional(Schema.String),
  model: Schema.optional(Schema.String),
  max_turns: Schema.optional(Schema.Int.pipe(Schema.positive())),
  append_system_prompt: Schema.optional(Schema.String),
  permission_mode: Schema.optional(Schema.Literal(...permissionModes))
})

const PromptBody = Schema.Struct({ prompt: Schema.String.pipe(Schema.minLength(1)) })

/** A request body decoded with `schema`, or a 400 reply that says what is wrong with it. */
const bodyOf = <A, I>(schema: Schema.Schema<A, I>) =>
  HttpServerRequest.schemaBodyJson(schema).pipe(
    Effect.mapError((e) =>
      failure(400, e._tag === "ParseError" ? `invalid body: ${e.message}` : `invalid body: ${String(e)}`)
    )
  )

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
 * line is sent (checked in that order, so that no line written before the end is missed).
 */
const eventLines = (sql: SqlClient.SqlClient, id: string, after: number): Stream.Stream<string> =>
  Stream.paginateChunkEffect(after, (last) =>
    Effect.gen(function* () {
      while (true) {
        const record = yield* DurableStore.find(id)
        const rows = yield* SessionEvents.after(id, last)
        if (rows.length > 0) {
          const next = rows[rows.length - 1].seq
          return [Chunk.fromIterable(rows.map((r) => `${r.line}\n`)), Option.some(next)] as const
        }
        if (Option.isNone(record) || record.value.state !== "running") {
          return [Chunk.empty<string>(), Option.none<number>()] as const
        }
        yield* Effect.sleep("100 millis")
      }
    }).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.orDie)
  )

/** The HTTP API of a runner. */
const router = (options: ServeOptions) =>
  HttpRouter.empty.pipe(
    HttpRouter.post(
      "/sessions",
      Effect.gen(function* () {
        const body = yield* bodyOf(StartBody)
        const id = Crypto.randomUUID()
        const args: RunArgs = {
          ...options.defaults,
          prompt: body.prompt,
          cwd: body.cwd ?? options.defaults.cwd,
          model: body.model === undefined ? options.defaults.model : Option.some(body.model),
          maxTurns: body.max_turns ?? options.defaults.maxTurns,
          appendSystemPrompt:
            body.append_system_prompt === undefined
              ? options.defaults.appendSystemPrompt
              : Option.some(body.append_system_prompt),
          permissionMode:
            body.permission_mode === undefined ? options.defaults.permissionMode : Option.some(body.permission_mode)
        }
        yield* Effect.orDie(DurableStore.markRunning(id, encodeArgs(args)))
        // handed to the cluster: the runner that holds the session's shard runs it
        yield* DurableSession.SessionWorkflow.execute({ sessionId: id }, { discard: true })
        return HttpServerResponse.unsafeJson({ session_id: id }, { status: 201 })
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
        ).pipe(Effect.mapError(() => failure(400, "after: expected the number of lines already read (0 or more)")))
        const sql = yield* SqlClient.SqlClient
        return HttpServerResponse.stream(Stream.encodeText(eventLines(sql, record.id, query.after ?? 0)), {
          contentType: "application/x-ndjson"
        })
      })
    ),
    HttpRouter.post(
      "/sessions/:id/prompt",
      Effect.gen(function* () {
        const record = yield* sessionOfRoute
        const body = yield* bodyOf(PromptBody)
        const sql = yield* SqlClient.SqlClient
        // one follow-up at a time: the session takes a prompt only when its last run has ended
        const taken = yield* sql<{ prompts: number }>`UPDATE armature_sessions
          SET prompts = prompts + 1, state = 'running', updated_at = ${Date.now()}
          WHERE id = ${record.id} AND state <> 'running' RETURNING prompts`.pipe(Effect.orDie)
        if (taken.length === 0) return yield* failure(409, `session ${record.id} is running; interrupt it or wait`)
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
        if (record.state !== "running") return yield* failure(409, `session ${record.id} is not running`)
        const prompts = yield* Effect.orDie(promptsOf(record.id))
        yield* Effect.orDie(SessionEvents.requestInterrupt(record.id, prompts - 1))
        return HttpServerResponse.unsafeJson({ session_id: record.id, interrupted: prompts - 1 }, { status: 202 })
      })
    ),
    HttpRouter.catchAll((e) => (HttpServerResponse.isServerResponse(e) ? Effect.succeed(e) : Effect.fail(e)))
  )

/** Runs a runner until the process is told to stop (SIGTERM, SIGINT): then it lets its shards go and exits. */
export const serve = (options: ServeOptions) =>
  Effect.gen(function* () {
    const sql = DurableStore.sqlLayer({ _tag: "Postgres", url: options.database })
    yield* Effect.gen(function* () {
      yield* DurableStore.list
      yield* SessionEvents.ensureTables
      yield* ensurePromptsColumn
    }).pipe(
      Effect.provide(sql),
      Effect.mapError(
        (e) => new InvalidInputError({ message: `--database: ${withoutPassword(options.database)}: ${causeOf(e)}` })
      )
    )
    const app = Layer.mergeAll(
      HttpServer.serve(router(options)),
      Layer.effectDiscard(
        Effect.flatMap(
          HttpServer.addressFormattedWith((address) => Effect.succeed(address)),
          (address) =>
            Console.error(`armature serve: listening on ${address}, runner ${options.runnerHost}:${options.runnerPort}`)
        )
      )
    )
    yield* Layer.launch(
      app.pipe(
        Layer.provide(NodeHttpServer.layer(createServer, { host: options.host, port: options.port })),
        Layer.provide(DurableSession.layer(sessionBody)),
        Layer.provideMerge(DurableStore.runnerLayer({ host: options.runnerHost, port: options.runnerPort })),
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
