/**
 * `armature serve`: a runner of durable sessions on a shared PostgreSQL database with an HTTP API. Its work lives in
 * Serve, loaded only when it runs (the cluster, the workflow engine and the SQL drivers are not part of a start).
 */
import { Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
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

/** `armature serve`. */
export const command = Command.make("serve", options, (args) =>
  Effect.gen(function* () {
    yield* DatabaseUrl.check(args.database)
    const problem = portProblem("--port", args.port, true) ?? portProblem("--runner-port", args.runnerPort, false)
    if (problem !== undefined) return yield* new InvalidInputError({ message: problem })
    const { database, host, port, runnerHost, runnerPort, ...defaults } = args
    const serve = yield* Effect.tryPromise({
      try: () => import("./Serve.js"),
      catch: (e) =>
        new InvalidInputError({
          message: `serve could not be loaded (${(e instanceof Error ? e.message : String(e)).split("\n")[0]})`
        })
    })
    yield* serve.serve({
      database,
      host,
      port,
      runnerHost: Option.getOrElse(runnerHost, () => host),
      runnerPort,
      defaults: {
        ...defaults,
        output: "stream-json",
        resume: Option.none(),
        timeline: Option.none(),
        durable: true,
        database: Option.some(database)
      }
    })
  }).pipe(ExitCode.onInvalidInput)
).pipe(
  Command.withDescription(
    "Run a runner of durable sessions on a PostgreSQL database shared with other runners, with an HTTP API: " +
      "POST /sessions, GET /sessions/ID/events, POST /sessions/ID/prompt, POST /sessions/ID/interrupt, GET /sessions/ID"
  )
)
