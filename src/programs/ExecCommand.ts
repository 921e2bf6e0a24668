/**
 * `armature exec [FILE|-]`: runs tool calls through the full pipeline and executor (docs/cli.md).
 */
import * as Fs from "node:fs"
import * as Readline from "node:readline"
import { Args, Command, Options } from "@effect/cli"
import { Clock, Console, Deferred, Effect, Option, Stream } from "effect"
import { contentText, type ToolUse } from "../domain/Blocks.js"
import { InvalidInputError } from "../domain/Errors.js"
import { type ExecutorEvent, type ResultEvent, toToolResult } from "../domain/ExecutorEvent.js"
import * as CallLog from "../layers/observability/CallLog.js"
import * as OtlpExport from "../layers/observability/OtlpExport.js"
import { Session } from "../services/Session.js"
import { makeControl, ToolExecutor } from "../services/ToolExecutor.js"
import * as Audit from "./Audit.js"
import { parseLines } from "./ExecInput.js"
import * as ExitCode from "./ExitCode.js"
import * as Plural from "./Plural.js"
import { type EngineOptions, engineLayer, engineOptions, mcpReady, resultOptions, stderrLogger } from "./Runtime.js"
import * as Signals from "./Signals.js"

/** The summary line: calls, errors, wall time and the sum of the calls' executing times. */
export interface Summary {
  readonly type: "summary"
  readonly calls: number
  readonly errors: number
  readonly wall_ms: number
  readonly busy_ms: number
  /** Present when a signal ended the run: which one. */
  readonly interrupted?: Signals.Termination
}

/** Reads lines from a file or stdin as they arrive. */
const inputLines = (source: string): Stream.Stream<string, InvalidInputError> =>
  Stream.suspend(() => {
    if (source !== "-" && !Fs.existsSync(source)) {
      return Stream.fail(new InvalidInputError({ message: `${source}: no such file` }))
    }
    const input = source === "-" ? process.stdin : Fs.createReadStream(source, { encoding: "utf8" })
    return Stream.fromAsyncIterable(
      Readline.createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY }),
      (e) => new InvalidInputError({ message: `${source === "-" ? "stdin" : source}: ${String(e)}` })
    )
  })

/** Keeps the running totals of a run for the summary. */
const makeTally = () => {
  const started = new Map<string, number>()
  let busy = 0
  let calls = 0
  let errors = 0
  return {
    see: (event: ExecutorEvent) => {
      if (event.type === "state" && event.state === "executing") started.set(event.tool_use_id, event.t_ms)
      if (event.type === "state" && event.state === "completed" && started.has(event.tool_use_id)) {
        busy += event.t_ms - (started.get(event.tool_use_id) ?? event.t_ms)
      }
      if (event.type === "tool_result") {
        calls++
        if (event.is_error) errors++
      }
    },
    summary: (wall: number, signal: Signals.Termination | undefined): Summary => ({
      type: "summary",
      calls,
      errors,
      wall_ms: wall,
      busy_ms: busy,
      ...(signal === undefined ? {} : { interrupted: signal })
    })
  }
}

/** Live progress for a terminal: one status line redrawn in place, with each running call's id and elapsed time. */
const makeLiveView = (names: Map<string, string>) => {
  const running = new Map<string, number>()
  const waiting = new Set<string>()
  const isTty = process.stderr.isTTY === true
  let timer: ReturnType<typeof setInterval> | undefined
  const label = (id: string) => `${id} ${names.get(id) ?? "?"}`
  const draw = () => {
    if (!isTty) return
    const now = Date.now()
    const run = [...running].map(([id, since]) => `${label(id)} ${((now - since) / 1000).toFixed(1)}s`).join(", ")
    const wait = [...waiting].map(label).join(", ")
    const line = `running: ${run || "-"}  waiting: ${wait || "-"}`
    const columns = process.stderr.columns ?? 100
    process.stderr.write(`\r\x1b[2K${line.length > columns - 1 ? `${line.slice(0, columns - 2)}…` : line}`)
  }
  return {
    see: (event: ExecutorEvent) => {
      if (event.type !== "state") return
      if (isTty && timer === undefined) timer = setInterval(draw, 500)
      if (event.state === "queued") waiting.add(event.tool_use_id)
      if (event.state === "executing") {
        waiting.delete(event.tool_use_id)
        running.set(event.tool_use_id, Date.now())
      }
      if (event.state === "completed") {
        waiting.delete(event.tool_use_id)
        running.delete(event.tool_use_id)
      }
      draw()
    },
    clear: () => {
      if (timer !== undefined) clearInterval(timer)
      timer = undefined
      if (isTty) process.stderr.write("\r\x1b[2K")
    }
  }
}

const oneLine = (text: string, width: number): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > width ? `${flat.slice(0, width - 1)}…` : flat
}

/** The final table of the text output. */
const textTable = (
  results: ReadonlyArray<ResultEvent>,
  names: ReadonlyMap<string, string>,
  timings: ReadonlyMap<string, { start?: number; end?: number }>,
  resultWidth = 100
): string => {
  const rows = results.map((r) => {
    const t = timings.get(r.tool_use_id)
    const ms = t?.start !== undefined && t.end !== undefined ? `${t.end - t.start}` : "-"
    return [
      r.tool_use_id,
      names.get(r.tool_use_id) ?? "?",
      r.is_error ? "error" : "ok",
      ms,
      oneLine(contentText(r.content), resultWidth)
    ]
  })
  const header = ["ID", "TOOL", "STATUS", "MS", "RESULT"]
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)))
  return [header, ...rows]
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i]))
        .join("  ")
        .trimEnd()
    )
    .join("\n")
}

/**
 * Takes over SIGINT and SIGTERM for the run: the first SIGINT interrupts (calls whose tool cancels on interrupt
 * stop, the others finish), a second one or a SIGTERM aborts every call; in both cases no more input is read.
 * Returns the first signal received, once the run is over.
 */
const onSignals = (control: ExecuteControl) =>
  Effect.gen(function* () {
    const signals = yield* Signals.listen({
      signals: ["SIGINT", "SIGTERM"],
      note: (signal, n) =>
        signal === "SIGINT" && n === 1 ? "\n[interrupting: Ctrl-C again to abort]\n" : "\n[aborting]\n"
    })
    let first: Signals.Termination | undefined
    yield* Effect.forkScoped(
      Stream.runForEach(signals, (signal) =>
        Effect.suspend(() => {
          const isFirst = first === undefined
          first ??= signal
          return isFirst && signal === "SIGINT" ? control.interrupt : control.abort
        })
      )
    )
    return () => first
  })

type ExecuteControl = Effect.Effect.Success<typeof makeControl>

/**
 * How wide the RESULT column of the table is: unlimited with `--wide`, the rest of the terminal's width on a
 * terminal, 100 characters otherwise.
 */
const resultWidth = (wide: boolean, results: ReadonlyArray<ResultEvent>, names: ReadonlyMap<string, string>) => {
  if (wide) return Number.POSITIVE_INFINITY
  const columns = process.stdout.isTTY === true ? process.stdout.columns : undefined
  if (columns === undefined) return 100
  const ids = Math.max(2, ...results.map((r) => r.tool_use_id.length))
  const tools = Math.max(4, ...results.map((r) => (names.get(r.tool_use_id) ?? "?").length))
  return Math.max(20, columns - ids - tools - 6 - 6 - 8)
}

/** Where `exec` writes its audit trail: a transcript (JSON Lines) and a timeline page, each when asked for. */
export interface AuditOptions {
  readonly transcript: Option.Option<string>
  readonly timeline: Option.Option<string>
  readonly audit: Audit.Audit
}

/**
 * Runs `exec` and prints in the chosen format; fails with InvalidInputError on unusable input (then stdout gets no
 * summary). On SIGINT/SIGTERM the calls in flight are interrupted, each gets its result, the summary names the
 * signal and the exit status is 130/143.
 */
export const exec = (source: string, output: "text" | "json" | "stream-json", wide = false, audit?: AuditOptions) =>
  Effect.gen(function* () {
    const executor = yield* ToolExecutor
    const sessionId = (yield* Session).id
    const log = audit?.audit
    if (log !== undefined) log.sessionId = sessionId
    if (log !== undefined && audit !== undefined && Option.isSome(audit.transcript)) {
      log.sink = yield* Audit.fileSink(audit.transcript.value, sessionId)
    }
    const uses: Array<ToolUse> = []
    const control = yield* makeControl
    const received = yield* onSignals(control)
    yield* mcpReady
    const tally = makeTally()
    const names = new Map<string, string>()
    const timings = new Map<string, { start?: number; end?: number }>()
    const live = makeLiveView(names)
    const collected: Array<ResultEvent> = []
    const startedAt = yield* Clock.currentTimeMillis
    const calls = parseLines(inputLines(source)).pipe(
      Stream.interruptWhen(Deferred.await(control.interrupted)),
      Stream.tap((use) =>
        Effect.sync(() => {
          names.set(use.id, use.name)
          uses.push({ type: "tool_use", id: use.id, name: use.name, input: use.input })
        })
      )
    )
    const failure = yield* executor.execute(calls, { control }).pipe(
      Stream.runForEach((event) =>
        Effect.suspend(() => {
          tally.see(event)
          const record = log === undefined ? undefined : CallLog.stateRecord(event, startedAt)
          const logged = record === undefined || log === undefined ? Effect.void : Audit.add(log, record)
          if (event.type === "state") {
            const t = timings.get(event.tool_use_id) ?? {}
            if (event.state === "executing") t.start = event.t_ms
            if (event.state === "completed") t.end = event.t_ms
            timings.set(event.tool_use_id, t)
          }
          if (event.type === "tool_result") collected.push(event)
          if (output === "stream-json") {
            const line =
              event.type === "tool_result"
                ? {
                    type: "tool_result",
                    tool_use_id: event.tool_use_id,
                    content: event.content,
                    is_error: event.is_error,
                    t_ms: event.t_ms
                  }
                : event
            return Effect.zipRight(logged, Console.log(JSON.stringify(line)))
          }
          if (output === "text") live.see(event)
          return logged
        })
      ),
      Effect.flip,
      Effect.option
    )
    const wall = (yield* Clock.currentTimeMillis) - startedAt
    const signal = received()
    const summary = tally.summary(wall, signal)
    if (log !== undefined && audit !== undefined) {
      yield* finishAudit(log, audit, uses, collected, summary)
    }
    const table = () => textTable(collected, names, timings, resultWidth(wide, collected, names))
    if (Option.isSome(failure)) {
      live.clear()
      if (output === "text" && collected.length > 0) yield* Console.log(table())
      return yield* Effect.fail(failure.value)
    }
    if (output === "stream-json") yield* Console.log(JSON.stringify(summary))
    if (output === "json") {
      yield* Console.log(
        JSON.stringify(
          {
            results: collected.map((r) => ({
              type: "tool_result",
              tool_use_id: r.tool_use_id,
              content: r.content,
              is_error: r.is_error,
              t_ms: r.t_ms
            })),
            summary
          },
          null,
          2
        )
      )
    }
    if (output === "text") {
      live.clear()
      if (collected.length > 0) yield* Console.log(table())
      const speedup = summary.wall_ms > 0 ? (summary.busy_ms / summary.wall_ms).toFixed(2) : "-"
      yield* Console.log(
        `\n${Plural.count(summary.calls, "call")}, ${Plural.count(summary.errors, "error")}, wall ${summary.wall_ms} ms, busy ${summary.busy_ms} ms (parallelism ×${speedup})`
      )
    }
    if (signal !== undefined) {
      process.exitCode = Signals.exitStatus(signal)
      // stdin may still be open: nothing more is read, and it must not keep the process alive
      if (source === "-") process.stdin.destroy()
    }
  }).pipe(Effect.scoped)

/** The calls and results as the assistant and user messages `run` records, the summary, then the timeline page. */
const finishAudit = (
  log: Audit.Audit,
  options: AuditOptions,
  uses: ReadonlyArray<ToolUse>,
  results: ReadonlyArray<ResultEvent>,
  summary: Summary
) =>
  Effect.gen(function* () {
    yield* Audit.add(log, { type: "assistant", message: { role: "assistant", content: uses } })
    const content = results.map((r) => toToolResult(r))
    yield* Audit.add(log, { type: "user", message: { role: "user", content } })
    yield* Audit.add(log, summary)
    if (Option.isSome(options.timeline)) {
      yield* Audit.writeTimeline(options.timeline.value, log.entries, `armature exec — ${uses.length} calls`)
    }
  })

const source = Args.text({ name: "FILE" }).pipe(
  Args.withDescription("A JSON array of tool_use blocks, an assistant message, or JSON Lines; - for stdin"),
  Args.withDefault("-")
)

const wide = Options.boolean("wide").pipe(
  Options.withDescription(
    "Text output: show each result in full (on one line) instead of fitting the table to the screen"
  )
)

const output = Options.choice("output", ["text", "json", "stream-json"]).pipe(
  Options.withDescription("Output format: text (human, live progress on a TTY), json, or stream-json (JSON Lines)"),
  Options.withDefault("text" as const)
)

const transcript = Options.text("transcript").pipe(
  Options.withDescription(
    "Write an audit trail as JSON Lines: state changes, permission decisions with their traces, the calls and results"
  ),
  Options.optional
)

/** `--timeline FILE.html` of `exec` and `run`. */
export const timeline = Options.text("timeline").pipe(
  Options.withDescription("Write a self-contained HTML picture of the calls over time (queued, executing, outcome)"),
  Options.optional
)

/** `armature exec`. */
export const command = Command.make(
  "exec",
  { source, output, wide, transcript, timeline, ...resultOptions, ...engineOptions },
  (args) => {
    const audit =
      Option.isSome(args.transcript) || Option.isSome(args.timeline)
        ? { transcript: args.transcript, timeline: args.timeline, audit: Audit.make() }
        : undefined
    return exec(args.source, args.output, args.wide, audit).pipe(
      // calls read from stdin leave no terminal to ask on: asks are then answered headlessly
      Effect.provide(
        engineLayer(args as EngineOptions, {
          approver: args.source === "-" ? "headless" : "auto",
          results: args,
          onDecision: audit === undefined ? undefined : Audit.onDecision(audit.audit)
        })
      ),
      // spans and metrics over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set (flushed when the command ends)
      Effect.provide(OtlpExport.layerFromEnv()),
      ExitCode.onInvalidInput,
      Effect.provide(stderrLogger)
    )
  }
).pipe(
  Command.withDescription(
    "Run tool calls through the permission pipeline, hooks and the streaming executor; stdin lines start as they arrive"
  )
)
