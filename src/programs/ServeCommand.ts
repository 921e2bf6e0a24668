/**
 * `armature serve`: a runner of durable sessions on a shared PostgreSQL database with an HTTP API. Its work lives in
 * Serve, loaded only when it runs (the cluster, the workflow engine and the SQL drivers are not part of a start).
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Command, Options } from "@effect/cli"
import { Effect, Logger, LogLevel, Option } from "effect"
import { InvalidInputError } from "../domain/Errors.js"
import * as DatabaseUrl from "./DatabaseUrl.js"
import * as ExitCode from "./ExitCode.js"
import { runOptions } from "./RunCommand.js"
import { engineOptions, resultOptions } from "./Runtime.js"

const port = (name: string, description: string, fallback: number) =>
  Options.integer(name).pipe(Options.withDescription(description), Options.withDefault(fallback))

const options = {
  database: Options.text("database").pipe(
    Options.withDescription("The PostgreSQL database the runners share (postgres://…); required")
  ),
  host: Options.text("host").pipe(
    Options.withDescription("The address the HTTP API listens on (default 127.0.0.1)"),
    Options.withDefault("127.0.0.1")
  ),
  port: port("port", "The port of the HTTP API (default 8787; 0: any free port, printed on start)", 8787),
  runnerHost: Options.text("runner-host").pipe(
    Options.withDescription("The address other runners reach this one at (default: --host)"),
    Options.optional
  ),
  runnerPort: port("runner-port", "The port other runners reach this one at (default 34431)", 34431),
  tokenFile: Options.file("token-file").pipe(
    Options.withDescription(
      "A file (mode 600) holding the bearer token every request must send (default: ARMATURE_SERVE_TOKEN, else a " +
        "token made once in <state dir>/serve-token, whose path is printed on start)"
    ),
    Options.optional
  ),
  allowOrigin: Options.text("allow-origin").pipe(
    Options.withDescription(
      "An origin (https://app.example:8443) whose web pages may call the API (repeatable; default: none)"
    ),
    Options.repeated,
    Options.withDefault([])
  ),
  allowHost: Options.text("allow-host").pipe(
    Options.withDescription("A name requests may give in their Host header besides --host (repeatable)"),
    Options.repeated,
    Options.withDefault([])
  ),
  maxBody: Options.integer("max-body").pipe(
    Options.withDescription("The largest request body in bytes (default 1048576: 1 MiB)"),
    Options.withDefault(1024 * 1024)
  ),
  project: Options.directory("project").pipe(
    Options.withDescription("A folder a session's cwd may be in (repeatable; default: --cwd)"),
    Options.repeated,
    Options.withDefault([])
  ),
  maxPrompt: Options.integer("max-prompt").pipe(
    Options.withDescription("The longest prompt in characters (default 262144)"),
    Options.withDefault(262_144)
  ),
  maxSessions: Options.integer("max-sessions").pipe(
    Options.withDescription("Most sessions running on this runner at once (default 16; more: 429)"),
    Options.withDefault(16)
  ),
  maxStreams: Options.integer("max-streams").pipe(
    Options.withDescription("Most event streams open on this runner at once (default 64; more: 429)"),
    Options.withDefault(64)
  ),
  maxSessionStreams: Options.integer("max-session-streams").pipe(
    Options.withDescription("Most event streams of one session open on this runner at once (default 8; more: 429)"),
    Options.withDefault(8)
  ),
  model: runOptions.model,
  maxTurns: runOptions.maxTurns,
  maxTokens: runOptions.maxTokens,
  maxRetries: runOptions.maxRetries,
  appendSystemPrompt: runOptions.appendSystemPrompt,
  toolLoading: runOptions.toolLoading,
  compactThreshold: runOptions.compactThreshold,
  ...resultOptions,
  ...engineOptions
}

const portProblem = (flag: string, value: number, zero: boolean) =>
  Number.isInteger(value) && value >= (zero ? 0 : 1) && value <= 65535
    ? undefined
    : `${flag}: expected a port (${zero ? 0 : 1}–65535), got ${value}`

const positiveProblem = (flag: string, value: number) =>
  Number.isInteger(value) && value > 0 ? undefined : `${flag}: expected a positive number, got ${value}`

/** An `--allow-origin` must be an origin as a browser sends it: scheme, host and port only, no path. */
const originProblem = (origin: string) =>
  URL.canParse(origin) && new URL(origin).origin === origin
    ? undefined
    : `--allow-origin: expected an origin such as https://app.example:8443 (no path, no trailing slash), got ${origin}`

/** `armature serve`. */
export const command = Command.make("serve", options, (args) =>
  Effect.gen(function* () {
    yield* DatabaseUrl.check(args.database)
    const problem =
      portProblem("--port", args.port, true) ??
      portProblem("--runner-port", args.runnerPort, false) ??
      positiveProblem("--max-body", args.maxBody) ??
      positiveProblem("--max-prompt", args.maxPrompt) ??
      positiveProblem("--max-sessions", args.maxSessions) ??
      positiveProblem("--max-streams", args.maxStreams) ??
      positiveProblem("--max-session-streams", args.maxSessionStreams) ??
      args.allowOrigin.map(originProblem).find((p) => p !== undefined)
    if (problem !== undefined) return yield* new InvalidInputError({ message: problem })
    const {
      database,
      host,
      port,
      runnerHost,
      runnerPort,
      tokenFile,
      allowOrigin,
      allowHost,
      maxBody,
      project,
      maxPrompt,
      maxSessions,
      maxStreams,
      maxSessionStreams,
      ...defaults
    } = args
    const serve = yield* Effect.tryPromise({
      try: () => import("./Serve.js"),
      catch: (e) =>
        new InvalidInputError({
          message: `serve could not be loaded (${(e instanceof Error ? e.message : String(e)).split("\n")[0]})`
        })
    })
    yield* serve
      .serve({
        database,
        host,
        port,
        runnerHost: Option.getOrElse(runnerHost, () => host),
        runnerPort,
        tokenFile: Option.getOrUndefined(tokenFile),
        allowOrigins: allowOrigin,
        allowHosts: allowHost,
        maxBody,
        projects: (project.length > 0 ? project : [defaults.cwd]).map((dir) => Fs.realpathSync(Path.resolve(dir))),
        maxPrompt,
        maxSessions,
        maxStreams,
        maxSessionStreams,
        defaults: {
          ...defaults,
          output: "stream-json",
          resume: Option.none(),
          timeline: Option.none(),
          durable: true,
          database: Option.some(database)
        }
      })
      .pipe(
        // the runner prints its own start line; @effect/cluster's INFO logs ("Listening on: …") are not for people
        Logger.withMinimumLogLevel(LogLevel.Warning)
      )
  }).pipe(ExitCode.onInvalidInput)
).pipe(
  Command.withDescription(
    "Run a runner of durable sessions on a PostgreSQL database shared with other runners, with an HTTP API: " +
      "POST /sessions, GET /sessions/ID/events, POST /sessions/ID/prompt, POST /sessions/ID/interrupt, GET /sessions/ID. " +
      "Every request sends Authorization: Bearer TOKEN (see --token-file) and JSON bodies; pages of other origins " +
      "and Host names other than --host are refused"
  )
)
