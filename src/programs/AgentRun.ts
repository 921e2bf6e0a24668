/**
 * The agent run shared by `run`, `resume` (durable sessions) and `serve`: its options, its engine, its printers and
 * `runAgent`, which drives the agent loop and prints its output. The commands that parse a command line into these
 * options live in RunCommand and SessionsCommand.
 */
import { Clock, Console, Effect, Either, Option, Ref, Stream } from "effect"
import { contentText, type ToolResult } from "../domain/Blocks.js"
import { InvalidInputError } from "../domain/Errors.js"
import type { ExecutorEvent } from "../domain/ExecutorEvent.js"
import type { PermissionDecision } from "../domain/Permission.js"
import * as WebSearch from "../domain/WebSearch.js"
import * as AgentLoop from "../layers/agent/AgentLoop.js"
import * as LiveAgents from "../layers/agent/LiveAgents.js"
import * as CallLog from "../layers/observability/CallLog.js"
import {
  type AssistantContent,
  defaultModel,
  defaultRetryPolicy,
  type Message,
  type ModelEvent,
  type RetryPolicy,
  type UserContent
} from "../services/LanguageModel.js"
import { PermissionPolicy, type PermissionRequest } from "../services/PermissionPolicy.js"
import { Session } from "../services/Session.js"
import { Settings } from "../services/Settings.js"
import { Transcript } from "../services/Transcript.js"
import * as Audit from "./Audit.js"
import * as Plural from "./Plural.js"
import { type EngineOptions, engineLayer, type ResultOptions } from "./Runtime.js"
import * as Signals from "./Signals.js"
import * as ToolLoading from "./ToolLoading.js"

/** The output formats of `run`. */
export type OutputFormat = "text" | "json" | "stream-json"

/** The parsed options of `run`. */
export interface RunArgs extends EngineOptions {
  readonly prompt: string
  readonly model: Option.Option<string>
  readonly maxTurns: number
  readonly maxTokens: number
  readonly maxRetries: Option.Option<number>
  readonly appendSystemPrompt: Option.Option<string>
  readonly output: OutputFormat
  readonly resume: Option.Option<string>
  readonly toolLoading: ToolLoading.ToolLoading
  readonly timeline: Option.Option<string>
  readonly compactThreshold: Option.Option<number>
  /** Keep the session in a durable store (SQLite under the state directory, or `database`). */
  readonly durable: boolean
  /** A PostgreSQL URL for durable sessions (implies `durable`). */
  readonly database: Option.Option<string>
}

/**
 * Everything `run` needs: the engine of `exec` (settings, permissions, hooks, approver, result store, built-in
 * tools, executor) for a session with a given id, plus the transcript and the Anthropic model from the environment.
 * The terminal approver is used on a TTY, the headless one otherwise.
 */
export const runLayer = (
  options: EngineOptions,
  sessionId: string | undefined,
  retry?: RetryPolicy,
  results?: ResultOptions,
  model?: string | undefined,
  onDecision?: (request: PermissionRequest, decision: PermissionDecision) => Effect.Effect<void>
) =>
  engineLayer(options, {
    sessionId,
    model: "anthropic",
    transcript: true,
    modelRetry: retry,
    results,
    samplingModel: model,
    onDecision
  })

/**
 * Ctrl-C as a stream (see `Signals.listen`): the first two signals are emitted (interrupt, then abort) and a third
 * one hands over to the listeners that were there before (the runtime's).
 */
const sigints: Effect.Effect<Stream.Stream<void>> = Effect.map(
  Signals.listen({
    signals: ["SIGINT"],
    note: (_, n) => (n === 1 ? "\n[interrupting: Ctrl-C again to abort]\n" : "\n[aborting]\n")
  }),
  Stream.map((): void => undefined)
)

const oneLine = (text: string, width: number): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > width ? `${flat.slice(0, width - 1)}…` : flat
}

type Block = AssistantContent | UserContent

const blocksOf = (message: Message): ReadonlyArray<Block> =>
  typeof message.content === "string" ? [] : (message.content as ReadonlyArray<Block>)

const write = (text: string) => Effect.sync(() => void process.stdout.write(text))

/**
 * What text output remembers within a run: the run's own calls announced on stderr, and the results already printed
 * live (as the executor yielded them), so the `user` event that answers the turn does not print them again.
 */
export interface TextMemory {
  readonly announced: Set<string>
  readonly printed: Set<string>
}

/** An empty memory for one run's text output. */
const textMemory = (): TextMemory => ({ announced: new Set(), printed: new Set() })

/**
 * Text output as the model streams: text deltas on stdout as they arrive, each tool call on stderr when its block
 * completes (with its id), before it is started — so an approval prompt always follows the call it concerns.
 */
const modelPrinter =
  (output: OutputFormat, memory: TextMemory = textMemory()) =>
  (event: ModelEvent): Effect.Effect<void> => {
    if (output !== "text") return Effect.void
    if (event.type === "text_delta") return write(event.text)
    if (event.type !== "content_block") return Effect.void
    const block = event.block
    if (block.type === "text") return write("\n")
    if (block.type === "tool_use" && "name" in block) {
      memory.announced.add(String(block.id))
      return Console.error(`● ${String(block.name)}(${oneLine(JSON.stringify(block.input), 100)}) ${String(block.id)}`)
    }
    return Effect.void
  }

const resultLine = (indent: string, id: string, content: ToolResult["content"], isError: boolean): string =>
  `${indent}  ⎿ ${id} ${isError ? "error: " : ""}${oneLine(contentText(content), 100)}`

const printResult =
  (indent: string, memory: TextMemory) =>
  (block: Block): Effect.Effect<void> =>
    block.type === "tool_result" && "tool_use_id" in block && !memory.printed.has(block.tool_use_id)
      ? Console.error(resultLine(indent, block.tool_use_id, block.content, block.is_error === true))
      : Effect.void

/**
 * Text output of the executor: a result of one of the run's own calls is printed as soon as it is yielded, while
 * the model may still be streaming (a sub-agent's results wait for its `user` events, to stay under its call).
 */
const executorPrinter =
  (output: OutputFormat, memory: TextMemory) =>
  (event: ExecutorEvent): Effect.Effect<void> => {
    if (output !== "text" || event.type !== "tool_result") return Effect.void
    if (!memory.announced.has(event.tool_use_id) || memory.printed.has(event.tool_use_id)) return Effect.void
    memory.printed.add(event.tool_use_id)
    return Console.error(resultLine("", event.tool_use_id, event.content, event.is_error === true))
  }

/** A sub-agent's assistant message, indented under its Agent call: its calls and the first line of its text. */
const printNested =
  (indent: string) =>
  (block: Block): Effect.Effect<void> => {
    if (block.type === "tool_use" && "name" in block) {
      return Console.error(
        `${indent}● ${String(block.name)}(${oneLine(JSON.stringify(block.input), 80)}) ${String(block.id)}`
      )
    }
    if (block.type === "text" && "text" in block && block.text.trim() !== "") {
      return Console.error(`${indent}${oneLine(block.text, 100)}`)
    }
    return Effect.void
  }

const indentOf = (event: AgentLoop.AgentEvent): string => (event.parent_tool_use_id === undefined ? "" : "    ")

/** Prints one agent event in the chosen format (text: what `modelPrinter` did not print already). */
export const printer =
  (output: OutputFormat, memory: TextMemory = textMemory()) =>
  (event: AgentLoop.AgentEvent): Effect.Effect<void> => {
    if (output === "stream-json") return Console.log(JSON.stringify(event))
    if (output === "json") return Effect.void
    switch (event.type) {
      case "assistant":
        // the run's own messages were printed as they streamed (modelPrinter); a sub-agent's are printed whole
        return event.parent_tool_use_id === undefined
          ? Effect.void
          : Effect.forEach(blocksOf(event.message), printNested(indentOf(event)), { discard: true })
      case "user":
        return Effect.forEach(blocksOf(event.message), printResult(indentOf(event), memory), { discard: true })
      case "system":
        switch (event.subtype) {
          case "init":
            return Effect.void
          case "retry":
            return Console.error(
              `${indentOf(event)}[model stream failed (${event.error}); retrying, attempt ${event.attempt + 1}]`
            )
          case "hook":
            return Console.error(`${indentOf(event)}[hook] ${event.message}`)
          case "compact_boundary":
            return Console.error(
              `${indentOf(event)}[context compacted: ${event.compact_metadata.pre_tokens} input tokens summarized]`
            )
        }
        return Effect.void
      case "result":
        return Effect.void
    }
  }

/** The model: `--model`, else `ANTHROPIC_MODEL`, else the settings' `model`, else the default (Claude Code's order). */
export const modelOf = (flag: Option.Option<string>, fromSettings?: string): string =>
  Option.getOrElse(flag, () => {
    const env = process.env.ANTHROPIC_MODEL?.trim()
    if (env !== undefined && env !== "") return env
    const configured = fromSettings?.trim()
    return configured !== undefined && configured !== "" ? configured : defaultModel
  })

/**
 * Records the call log of a run (state changes, decisions, the model's stream) in its transcript and in `audit`,
 * which also keeps the messages, for the timeline.
 */
const recorder = (audit: Audit.Audit) =>
  Effect.gen(function* () {
    const transcript = yield* Transcript
    audit.sessionId = (yield* Session).id
    audit.sink = (line) => Effect.ignore(transcript.append(line))
    const now = Clock.currentTimeMillis
    return {
      onEvent: (event: AgentLoop.AgentEvent) =>
        event.type === "assistant" || event.type === "user" ? Audit.keep(audit, event) : Effect.void,
      onExecutorEvent: (event: ExecutorEvent) =>
        event.type === "state"
          ? Effect.flatMap(now, (at) =>
              Audit.add(audit, {
                type: "tool_state",
                tool_use_id: event.tool_use_id,
                state: event.state,
                at,
                ...(event.version === undefined ? {} : { version: event.version })
              })
            )
          : event.type === "policy"
            ? Effect.flatMap(now, (at) => Audit.add(audit, CallLog.policyRecord(event, at)))
            : Effect.void,
      onModelEvent: (event: ModelEvent) =>
        event.type === "message_start" || event.type === "message_stop"
          ? Effect.flatMap(now, (at) =>
              Audit.add(audit, {
                type: "model_stream",
                phase: event.type === "message_start" ? "start" : "end",
                model: event.type === "message_start" ? event.model : "",
                at
              } satisfies CallLog.ModelRecord)
            )
          : Effect.void
    }
  })

/** How a run is driven when it is not the process's only run (`armature serve`). */
export interface AgentDriving {
  /** The user's interrupts (default: Ctrl-C of this process). */
  readonly interrupts?: Stream.Stream<void> | undefined
  /** Whether a failed result sets the process's exit status (default: yes). */
  readonly exitCode?: boolean | undefined
}

/**
 * Whether `run` offers WebSearch (Anthropic's server tool), from the `WebSearch` rules, the mode and the settings'
 * `webSearch` limits; a `webSearch` value of the wrong shape is a usage error naming the field.
 */
const webSearchOffer = Effect.gen(function* () {
  const settings = yield* Settings
  const policy = yield* PermissionPolicy
  const raw = (settings.settings as Record<string, unknown>).webSearch
  const config = WebSearch.decodeConfig(raw)
  if (Either.isLeft(config)) {
    return yield* new InvalidInputError({ message: `settings (${settings.sources.join(", ")}): ${config.left}` })
  }
  const session = yield* Ref.get(settings.sessionRules)
  const of = (behavior: "allow" | "ask" | "deny") => [
    ...settings.permissions[behavior],
    ...session.filter((r) => r.behavior === behavior)
  ]
  return WebSearch.offer({
    allow: of("allow"),
    ask: of("ask"),
    deny: of("deny"),
    mode: policy.mode,
    config: config.right,
    configured: raw !== undefined
  })
})

/** Runs `armature run` and prints its output; a failed result sets exit status 1. */
export const runAgent = (args: RunArgs, audit: Audit.Audit = Audit.make(), driving: AgentDriving = {}) =>
  Effect.gen(function* () {
    const record = yield* recorder(audit)
    const memory = textMemory()
    const interrupts = driving.interrupts ?? (yield* sigints)
    const settings = yield* Settings
    yield* ToolLoading.preload(args.toolLoading, args.prompt)
    const session = yield* Session
    // followed while the run lasts: an agent added, changed or removed is offered from the next turn
    const agents = yield* LiveAgents.follow({ projectDir: session.projectDir, home: process.env.HOME })
    const definitions = yield* agents
    const webSearch = yield* webSearchOffer
    if (webSearch.note !== undefined) yield* Console.error(`[${webSearch.note}]`)
    const result = yield* AgentLoop.run({
      prompt: args.prompt,
      model: modelOf(args.model, settings.settings.model),
      maxTurns: args.maxTurns,
      maxTokens: args.maxTokens,
      appendSystemPrompt: Option.getOrUndefined(args.appendSystemPrompt),
      interrupts,
      // stream-json: each content block as it completes, as claude -p --output-format stream-json --verbose
      assistantEvents: args.output === "stream-json" ? "block" : "message",
      onEvent: (event) => Effect.zipRight(record.onEvent(event), printer(args.output, memory)(event)),
      onModelEvent: (event) => Effect.zipRight(record.onModelEvent(event), modelPrinter(args.output, memory)(event)),
      onExecutorEvent: (event) =>
        Effect.zipRight(record.onExecutorEvent(event), executorPrinter(args.output, memory)(event)),
      agents: { definitions, current: agents },
      serverTools: webSearch.tool === undefined ? [] : [webSearch.tool],
      compaction: {
        threshold: Option.getOrElse(args.compactThreshold, () => settings.settings.autoCompactThreshold)
      }
    })
    if (Option.isSome(args.timeline)) {
      yield* Audit.writeTimeline(args.timeline.value, audit.entries, `armature run — session ${result.session_id}`)
    }
    if (args.output === "json") yield* Console.log(JSON.stringify(result, null, 2))
    if (args.output === "text") {
      if (result.is_error) yield* Console.error(`armature: ${result.result}`)
      yield* Console.error(
        `[${Plural.count(result.num_turns, "turn")}, ${result.usage.input_tokens} in / ${result.usage.output_tokens} out tokens, ` +
          `$${result.total_cost_usd.toFixed(4)}, ${(result.duration_ms / 1000).toFixed(1)} s, session ${result.session_id}]`
      )
    }
    if (result.is_error && driving.exitCode !== false) process.exitCode = 1
    return result
  }).pipe(Effect.scoped)

/** The retry policy of `--max-retries` (none: the default policy). */
export const retryOf = (maxRetries: Option.Option<number>): RetryPolicy | undefined =>
  Option.match(maxRetries, {
    onNone: () => undefined,
    onSome: (n) => ({ ...defaultRetryPolicy, maxAttempts: n + 1 })
  })
