/**
 * `armature run PROMPT`: the agent loop over the Anthropic Messages API, with streaming tool execution.
 */
import * as Fs from "node:fs"
import { Args, Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { InvalidInputError } from "../domain/Errors.js"
import * as StatePaths from "../domain/StatePaths.js"
import * as AgentLoop from "../layers/agent/AgentLoop.js"
import * as OtlpExport from "../layers/observability/OtlpExport.js"
import { defaultMaxTokens, defaultModel, defaultRetryPolicy } from "../services/LanguageModel.js"
import { modelOf, type RunArgs, retryOf, runAgent, runLayer } from "./AgentRun.js"
import * as Audit from "./Audit.js"
import * as ExitCode from "./ExitCode.js"
import { loadDurable } from "./LoadDurable.js"
import { type EngineOptions, engineOptions, resultOptions } from "./Runtime.js"
import * as ToolLoading from "./ToolLoading.js"

/** The prompt: the argument, or stdin when there is none or it is `-` (a terminal is not read: that is an error). */
export const readPrompt = (arg: Option.Option<string>): Effect.Effect<string, InvalidInputError> =>
  Effect.gen(function* () {
    if (Option.isSome(arg) && arg.value !== "-") return arg.value
    if (process.stdin.isTTY === true) {
      return yield* new InvalidInputError({
        message: 'no prompt: give it as an argument (armature run "…") or on stdin (echo … | armature run)'
      })
    }
    const text = yield* Effect.tryPromise({
      try: async () => {
        const chunks: Array<Buffer> = []
        for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk))
        return Buffer.concat(chunks).toString("utf8")
      },
      catch: (e) => new InvalidInputError({ message: `stdin: ${String(e)}` })
    })
    if (text.trim() === "") return yield* new InvalidInputError({ message: "no prompt: stdin was empty" })
    return text.replace(/\n$/, "")
  })

/** Checks that a session to resume exists, before anything starts. */
const checkResume = (args: RunArgs) =>
  Effect.suspend(() => {
    if (Option.isNone(args.resume)) return Effect.void
    const path = StatePaths.transcriptOf(StatePaths.fromProcessEnv(args.cwd), args.resume.value)
    return Fs.existsSync(path)
      ? Effect.void
      : Effect.fail(new InvalidInputError({ message: `--resume: no session ${args.resume.value} (${path} not found)` }))
  })

const prompt = Args.text({ name: "PROMPT" }).pipe(
  Args.withDescription("The user's message; read from stdin when absent or -"),
  Args.optional
)

/** The options of `run` beside the shared ones (`serve` takes some of them as its sessions' defaults). */
export const runOptions = {
  model: Options.text("model").pipe(
    Options.withDescription(`The model (default: ANTHROPIC_MODEL, else the settings' model, else ${defaultModel})`),
    Options.optional
  ),
  maxTurns: Options.integer("max-turns").pipe(
    Options.withDescription(`Most model requests in this run (default ${AgentLoop.defaultMaxTurns})`),
    Options.withDefault(AgentLoop.defaultMaxTurns)
  ),
  maxTokens: Options.integer("max-tokens").pipe(
    Options.withDescription(`max_tokens of each model request (default ${defaultMaxTokens})`),
    Options.withDefault(defaultMaxTokens)
  ),
  maxRetries: Options.integer("max-retries").pipe(
    Options.withDescription(
      `Retries of a failed model request (default ${defaultRetryPolicy.maxAttempts - 1}; an unreachable server: 2)`
    ),
    Options.optional
  ),
  appendSystemPrompt: Options.text("append-system-prompt").pipe(
    Options.withDescription("Text appended to the system prompt"),
    Options.optional
  ),
  output: Options.choice("output", ["text", "json", "stream-json"]).pipe(
    Options.withDescription("text, json (the result object) or stream-json (JSON Lines: init, messages, result)"),
    Options.withDefault("text" as const)
  ),
  toolLoading: ToolLoading.option,
  resume: Options.text("resume").pipe(
    Options.withDescription("Continue the session with this id (its transcript is reloaded)"),
    Options.optional
  ),
  compactThreshold: Options.integer("compact-threshold").pipe(
    Options.withDescription(
      "Compact the conversation (summarize it and continue from the summary) when a turn's input tokens pass this " +
        "many (default: the settings' autoCompactThreshold, else 80 % of the context window; 0: never)"
    ),
    Options.optional
  ),
  durable: Options.boolean("durable").pipe(
    Options.withDescription(
      "Durable session: each model turn and tool call is persisted (SQLite under .armature/); `armature resume ID` " +
        "continues it after a crash"
    )
  ),
  database: Options.text("database").pipe(
    Options.withDescription("Keep durable sessions in this PostgreSQL database (postgres://…; implies --durable)"),
    Options.optional
  ),
  timeline: Options.text("timeline").pipe(
    Options.withDescription(
      "Write a self-contained HTML picture of each turn: the model's stream and the calls over time, by outcome"
    ),
    Options.optional
  )
}

/** `armature run`. */
export const command = Command.make("run", { prompt, ...runOptions, ...resultOptions, ...engineOptions }, (args) =>
  Effect.gen(function* () {
    const text = yield* readPrompt(args.prompt)
    const runArgs: RunArgs = { ...(args as Omit<RunArgs, "prompt">), prompt: text }
    if (Option.isSome(runArgs.compactThreshold) && runArgs.compactThreshold.value < 0) {
      return yield* new InvalidInputError({
        message: `--compact-threshold: expected a number of tokens (0 or more), got ${runArgs.compactThreshold.value}`
      })
    }
    if (runArgs.durable || Option.isSome(runArgs.database)) {
      // the workflow engine, the cluster and the SQL drivers load only for durable runs
      const durable = yield* loadDurable
      return yield* durable.runDurable(runArgs)
    }
    yield* checkResume(runArgs)
    const audit = Audit.make()
    yield* runAgent(runArgs, audit).pipe(
      Effect.provide(
        runLayer(
          args as EngineOptions,
          Option.getOrUndefined(args.resume),
          retryOf(args.maxRetries),
          args,
          modelOf(args.model),
          Audit.onDecision(audit)
        )
      ),
      // spans and metrics over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set (flushed when the run ends)
      Effect.provide(OtlpExport.layerFromEnv())
    )
  }).pipe(ExitCode.onInvalidInput)
).pipe(
  Command.withDescription(
    "Run the agent loop over the Anthropic API (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL): tools start while the model streams"
  )
)
