/**
 * `armature run PROMPT`: the agent loop over the Anthropic Messages API, with streaming tool execution.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Option, Queue, Stream } from "effect"
import { contentText } from "../domain/Blocks.js"
import { InvalidInputError } from "../domain/Errors.js"
import * as AgentLoop from "../layers/agent/AgentLoop.js"
import {
  type AssistantContent,
  defaultMaxTokens,
  defaultModel,
  type Message,
  type UserContent
} from "../services/LanguageModel.js"
import * as ExitCode from "./ExitCode.js"
import { type EngineOptions, engineLayer, engineOptions } from "./Runtime.js"

/** The output formats of `run`. */
export type OutputFormat = "text" | "json" | "stream-json"

/** The parsed options of `run`. */
export interface RunArgs extends EngineOptions {
  readonly prompt: string
  readonly model: string
  readonly maxTurns: number
  readonly maxTokens: number
  readonly output: OutputFormat
  readonly resume: Option.Option<string>
}

/**
 * Everything `run` needs: the engine of `exec` (settings, permissions, hooks, approver, result store, built-in
 * tools, executor) for a session with a given id, plus the transcript and the Anthropic model from the environment.
 * The terminal approver is used on a TTY, the headless one otherwise.
 */
export const runLayer = (options: EngineOptions, sessionId: string | undefined) =>
  engineLayer(options, { sessionId, model: "anthropic", transcript: true })

/**
 * Ctrl-C as a stream, listening from the moment this effect runs (not from the stream's first pull, so no signal is
 * lost to a fiber that has not started yet): SIGINT no longer ends the process; the first two signals are emitted
 * (interrupt, then abort) and a third one hands over to the listeners that were there before (the runtime's).
 */
export const sigints: Effect.Effect<Stream.Stream<void>> = Effect.gen(function* () {
  const signals = yield* Queue.unbounded<void>()
  // The listener stays for the rest of the process: a second Ctrl-C that lands while the run is already winding
  // down must not kill the process by default action mid-teardown; a third still reaches the runtime's handler.
  yield* Effect.sync(() => {
    const previous = process.listeners("SIGINT")
    let count = 0
    const onSigint = (signal: NodeJS.Signals) => {
      count++
      if (count <= 2) {
        if (process.stderr.isTTY === true) {
          process.stderr.write(count === 1 ? "\n[interrupting: Ctrl-C again to abort]\n" : "\n[aborting]\n")
        }
        Queue.unsafeOffer(signals, undefined)
      } else {
        for (const listener of previous) listener(signal)
      }
    }
    for (const listener of previous) process.removeListener("SIGINT", listener)
    process.on("SIGINT", onSigint)
  })
  return Stream.fromQueue(signals)
})

const oneLine = (text: string, width: number): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > width ? `${flat.slice(0, width - 1)}…` : flat
}

type Block = AssistantContent | UserContent

const blocksOf = (message: Message): ReadonlyArray<Block> =>
  typeof message.content === "string" ? [] : (message.content as ReadonlyArray<Block>)

const printBlock = (block: Block): Effect.Effect<void> => {
  switch (block.type) {
    case "text":
      return "text" in block ? Console.log(String(block.text)) : Effect.void
    case "tool_use":
      return "name" in block
        ? Console.error(`● ${String(block.name)}(${oneLine(JSON.stringify(block.input), 100)})`)
        : Effect.void
    case "tool_result":
      return "tool_use_id" in block
        ? Console.error(`  ⎿ ${block.is_error === true ? "error: " : ""}${oneLine(contentText(block.content), 100)}`)
        : Effect.void
    default:
      return Effect.void
  }
}

/** Prints one agent event in the chosen format. */
export const printer =
  (output: OutputFormat) =>
  (event: AgentLoop.AgentEvent): Effect.Effect<void> => {
    if (output === "stream-json") return Console.log(JSON.stringify(event))
    if (output === "json") return Effect.void
    switch (event.type) {
      case "assistant":
      case "user":
        return Effect.forEach(blocksOf(event.message), printBlock, { discard: true })
      case "system":
        return event.subtype === "init"
          ? Effect.void
          : Console.error(
              event.subtype === "retry"
                ? `[model stream failed (${event.error}); retrying, attempt ${event.attempt + 1}]`
                : `[hook] ${event.message}`
            )
      case "result":
        return Effect.void
    }
  }

/** Runs `armature run` and prints its output; a failed result sets exit status 1. */
export const runAgent = (args: RunArgs) =>
  Effect.gen(function* () {
    const interrupts = yield* sigints
    const result = yield* AgentLoop.run({
      prompt: args.prompt,
      model: args.model,
      maxTurns: args.maxTurns,
      maxTokens: args.maxTokens,
      interrupts,
      onEvent: printer(args.output)
    })
    if (args.output === "json") yield* Console.log(JSON.stringify(result, null, 2))
    if (args.output === "text") {
      if (result.is_error) yield* Console.error(`armature: ${result.result}`)
      yield* Console.error(
        `[${result.num_turns} turns, ${result.usage.input_tokens} in / ${result.usage.output_tokens} out tokens, ` +
          `$${result.total_cost_usd.toFixed(4)}, ${(result.duration_ms / 1000).toFixed(1)} s, session ${result.session_id}]`
      )
    }
    if (result.is_error) process.exitCode = 1
  })

/** Checks that a session to resume exists, before anything starts. */
const checkResume = (args: RunArgs) =>
  Effect.suspend(() => {
    if (Option.isNone(args.resume)) return Effect.void
    const stateDir = Path.resolve(process.env.ARMATURE_STATE_DIR ?? Path.join(Path.resolve(args.cwd), ".armature"))
    const path = Path.join(stateDir, "transcripts", `${args.resume.value}.jsonl`)
    return Fs.existsSync(path)
      ? Effect.void
      : Effect.fail(new InvalidInputError({ message: `--resume: no session ${args.resume.value} (${path} not found)` }))
  })

const prompt = Args.text({ name: "PROMPT" }).pipe(Args.withDescription("The user's message"))

const runOptions = {
  model: Options.text("model").pipe(
    Options.withDescription(`The model (default ${defaultModel})`),
    Options.withDefault(defaultModel)
  ),
  maxTurns: Options.integer("max-turns").pipe(
    Options.withDescription(`Most model requests in this run (default ${AgentLoop.defaultMaxTurns})`),
    Options.withDefault(AgentLoop.defaultMaxTurns)
  ),
  maxTokens: Options.integer("max-tokens").pipe(
    Options.withDescription(`max_tokens of each model request (default ${defaultMaxTokens})`),
    Options.withDefault(defaultMaxTokens)
  ),
  output: Options.choice("output", ["text", "json", "stream-json"]).pipe(
    Options.withDescription(
      "Output format: text, json (the result object), or stream-json (JSON Lines: init, messages, result)"
    ),
    Options.withDefault("text" as const)
  ),
  resume: Options.text("resume").pipe(
    Options.withDescription("Continue the session with this id (its transcript is reloaded)"),
    Options.optional
  )
}

/** `armature run`. */
export const command = Command.make("run", { prompt, ...runOptions, ...engineOptions }, (args) =>
  checkResume(args as RunArgs).pipe(
    Effect.zipRight(
      runAgent(args as RunArgs).pipe(
        Effect.provide(runLayer(args as EngineOptions, Option.getOrUndefined(args.resume)))
      )
    ),
    ExitCode.onInvalidInput,
    Effect.catchTag("ModelError", (e) =>
      Effect.zipRight(
        Console.error(`armature: model request failed: ${e.message}`),
        Effect.sync(() => {
          process.exitCode = 1
        })
      )
    )
  )
).pipe(
  Command.withDescription(
    "Run the agent loop over the Anthropic API (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL): tools start while the model streams"
  )
)
