/**
 * Bash: runs a command with `/bin/bash -c` in the session's working directory, through ProcessGroup (a new
 * session and process group, every process tagged with the call), streaming stdout and stderr (interleaved in
 * arrival order) through a bounded spill, so memory stays flat whatever the output size; output over 30,000
 * characters is saved whole and shown as a `<persisted-output>` preview. Timeout and interruption kill everything
 * the command started, inside its group or not (see docs/processes.md). A `cd` persists: the final directory is
 * written by an EXIT trap to the call's canary pipe (fd 3, see ProcessGroup) and returned as a context modifier. `run_in_background` hands the
 * command to the BackgroundShells service.
 */
import * as Path from "node:path"
import type { Readable } from "node:stream"
import { FileSystem } from "@effect/platform"
import { Clock, Duration, Effect, Fiber, Layer, Option, Schema, Stream } from "effect"
import * as HeadTail from "../../domain/HeadTail.js"
import * as PersistedOutput from "../../domain/PersistedOutput.js"
import type * as SandboxDomain from "../../domain/Sandbox.js"
import * as Tool from "../../domain/Tool.js"
import { wallSleep } from "../../domain/WallClock.js"
import { BackgroundShells, ShellLogFailed, UnknownShell } from "../../services/BackgroundShells.js"
import { Processes, SpawnError } from "../../services/Processes.js"
import { ResultStore, ResultStoreError, type Spilled } from "../../services/ResultStore.js"
import * as SandboxPort from "../../services/Sandbox.js"
import { Session } from "../../services/Session.js"
import { analysisOf, ShellAnalyzer } from "../../services/ShellAnalyzer.js"
import * as NodePlatform from "../platform/NodePlatform.js"
import * as ProcessBackgroundShells from "../process/ProcessBackgroundShells.js"
import * as SpawnRecord from "../process/SpawnRecord.js"
import * as ToolRegistryLive from "../registry/ToolRegistryLive.js"
import * as FsResultStore from "../results/FsResultStore.js"
import * as BashOutput from "./BashOutput.js"
import * as KillShell from "./KillShell.js"

/** The default time limit of a command. */
export const defaultTimeoutMs = 120_000

/** The largest time limit a call may ask for. */
export const maxTimeoutMs = 600_000

/**
 * The most output characters a result shows; longer output is saved whole to a file and the result is a
 * `<persisted-output>` block with its first 2,000 characters and the file's path.
 */
export const maxOutputChars = 30_000

/** Characters of the end of the output kept in memory while it runs, for progress reports. */
const progressTailChars = 2_000

/** Bytes of stdout and of stderr kept (head and tail each) for a failed command's error. */
const errorStreamBytes = 5_000

/** How long output may keep arriving after the shell exits before leftover processes are killed. */
const drainGraceMs = 200

/** The command ran and failed: a non-zero exit code (other than a lenient one) or a signal. */
export class CommandFailed extends Schema.TaggedError<CommandFailed>()("CommandFailed", {
  message: Schema.String,
  /** The exit code; `null` when a signal ended the command. */
  code: Schema.NullOr(Schema.Number),
  signal: Schema.NullOr(Schema.String),
  stderr: Schema.String,
  stdout: Schema.String
}) {}

/** The time limit passed; the command and everything it started were killed. */
export class CommandTimedOut extends Schema.TaggedError<CommandTimedOut>()("CommandTimedOut", {
  message: Schema.String,
  timeoutMs: Schema.Number,
  stderr: Schema.String,
  stdout: Schema.String
}) {}

/** The sandbox refused to run the command as asked (the message says why and what to do). */
export class SandboxRefused extends Schema.TaggedError<SandboxRefused>()("SandboxRefused", {
  message: Schema.String
}) {}

/** The command's output pipe failed while it was being read. */
export class OutputUnreadable extends Schema.TaggedError<OutputUnreadable>()("OutputUnreadable", {
  message: Schema.String
}) {}

/**
 * What Bash fails with: its own errors, a command that could not start, a sandbox that could not wrap it, output
 * that could not be saved, and the background shells' failures. None is transient: a retry policy does not repeat a
 * command.
 */
export const Failure = Schema.Union(
  CommandFailed,
  CommandTimedOut,
  SandboxRefused,
  OutputUnreadable,
  SpawnError,
  SandboxPort.SandboxError,
  ResultStoreError,
  ShellLogFailed,
  UnknownShell
)

/** What Bash fails with. */
export type Failure = typeof Failure.Type

/** The commands whose exit code 1 means "nothing found / differs / false", not an error. */
export const lenientCommands: ReadonlySet<string> = new Set([
  "grep",
  "egrep",
  "fgrep",
  "rg",
  "find",
  "diff",
  "test",
  "["
])

const InputFields = {
  command: Schema.String.pipe(Schema.minLength(1)).annotations({
    description: "The command line to run with /bin/bash -c."
  }),
  timeout: Schema.optional(
    Schema.Number.pipe(Schema.int(), Schema.between(1, maxTimeoutMs)).annotations({
      description: `Time limit in milliseconds (default ${defaultTimeoutMs}, at most ${maxTimeoutMs}).`
    })
  ),
  description: Schema.optional(
    Schema.String.annotations({
      description: 'What the command does, in 5-10 words, in active voice (e.g. "List files in src").'
    })
  ),
  run_in_background: Schema.optional(
    Schema.Boolean.annotations({
      description: "Start the command and return at once with a shell ID; read its output later with BashOutput."
    })
  )
}

/** The input without the sandbox (the sandbox is off). */
const PlainInput = Schema.Struct(InputFields)

/** The input when the sandbox is on: Claude Code's escape hatch is one more field. */
const SandboxedInput = Schema.Struct({
  ...InputFields,
  dangerouslyDisableSandbox: Schema.optional(
    Schema.Boolean.annotations({
      description:
        "Run this command outside the OS sandbox. Only after a command failed because the sandbox refused a path or host it really needs; the user is always asked to approve it."
    })
  )
})

/** The decoded input. */
export type Input = typeof SandboxedInput.Type

const description = `Runs a shell command with /bin/bash -c in the session's working directory and returns its output.

Use it for what only a shell can do: building, testing, running scripts, git, package managers, starting
processes. Do not use it to read, search or edit files when a dedicated tool exists: use Read instead of
cat/head/tail, Grep instead of grep/rg, Glob instead of find/ls for file patterns, Edit/Write instead of sed, awk
or echo redirection. Those tools are faster, safer and need fewer permissions.

Parameters:
- command: the command line. Chain dependent steps with && (\`npm ci && npm test\`); use ; only when a step may
  fail. Quote paths containing spaces with double quotes (\`cd "My Documents"\`).
- timeout: milliseconds before the command is killed; default ${defaultTimeoutMs} (2 minutes), at most
  ${maxTimeoutMs} (10 minutes).
- description: a clear 5-10 word summary of what the command does, shown to the user.
- run_in_background: true to start a long-running process (dev server, watcher, long build) and return at once
  with a shell ID; read its output with BashOutput and stop it with KillShell. You do not need "&" at the end.

Behaviour:
- stdout and stderr are returned together, in the order they were written. Output above ${maxOutputChars}
  characters is saved whole to a file: the result then shows its first 2,000 characters and the file's path,
  which you can Read (with offset/limit) or Grep.
- A non-zero exit status makes the call fail with "Exit code N", then stderr, then stdout. Exit status 1 of
  grep, rg, find, diff and test (the last command of a pipeline) is not a failure: it means "no match" or
  "different", and the result ends with the line "Exit code 1".
- The working directory persists between calls: after \`cd sub\`, the next command runs in sub. Prefer absolute
  paths over cd when you can.
- Processes the command leaves running when it ends are killed, as is everything it started when it times out or
  is interrupted. Use run_in_background for anything that must keep running.
- Commands that need input cannot get any (stdin is closed): pass flags such as --yes or -y, and never start
  interactive programs (editors, pagers, REPLs, \`git rebase -i\`, \`git add -p\`).

Examples of misuse: \`cat src/a.ts\` (use Read), \`grep -r foo .\` (use Grep), \`find . -name "*.ts"\` (use
Glob), \`sleep 60 && check\` (poll with a real condition or use Sleep), \`npm run dev\` without
run_in_background (it never ends and times out).`

const sandboxDescription = `Sandbox: commands run in an OS sandbox. They may write only inside the working directories
(and paths the settings allow) and reach only the allowed hosts, through a proxy. When a command fails because the
sandbox refused a path or host, the result says which; if the command really needs it, retry it with
dangerouslyDisableSandbox: true, which asks the user for approval.`

const Progress = Schema.Struct({
  elapsed_ms: Schema.Number,
  total_chars: Schema.Number,
  /** The latest lines of output. */
  output: Schema.String
})

/** The first word of the last simple command of a pipeline, as a bare name (`/usr/bin/grep` → `grep`). */
export const lastCommandName = (argv: ReadonlyArray<string> | undefined): string | undefined =>
  argv === undefined || argv.length === 0 ? undefined : Path.basename(argv[0])

/**
 * Renders a spill as the output text shown to the model: all of it when it fits in `maxOutputChars`, otherwise
 * the `<persisted-output>` block with a 2,000-character preview and the path of the complete output.
 */
export const renderOutput = (spilled: Spilled): string => {
  if (spilled.omittedChars === 0) return (spilled.head + spilled.tail).replace(/\n+$/, "")
  const preview = PersistedOutput.preview(spilled.head)
  return Option.match(spilled.path, {
    onSome: (path) =>
      PersistedOutput.persistedOutput({ bytes: spilled.bytes, path, preview, savedBytes: spilled.savedBytes }),
    onNone: () =>
      `<persisted-output>\nOutput too large (${PersistedOutput.formatSize(spilled.bytes)}). The full output was not saved.\n\nPreview (first 2KB):\n${preview}\n...\n</persisted-output>`
  })
}

const renderCapture = (snapshot: HeadTail.ByteSnapshot): string =>
  snapshot.omittedBytes === 0
    ? (snapshot.head + snapshot.tail).replace(/\n+$/, "")
    : `${snapshot.head}\n... [${snapshot.omittedBytes} bytes omitted] ...\n${snapshot.tail.replace(/\n+$/, "")}`

/**
 * Prefixed to every command: at exit, bash writes its final directory to fd 3 — if fd 3 is still the canary
 * socket (a command may have closed or reused it) — with no file and no extra process.
 */
const cwdTrap = `trap '[ -S /dev/fd/3 ] && { pwd -P >&3; } 2>/dev/null' EXIT; `

/** The directory the trap reported (its last line), or empty. */
const reportedDir = (text: string): string => text.trimEnd().split("\n").pop() ?? ""

// NodePlatform.fromReadable (Node's NodeStream), not the readable's async iterator: an async generator's `return()` waits for a pending
// `next()`, so interrupting a read of a silent process would hang until it writes again. Chunks stay bytes (off
// the JS heap) on their way to the spill file.
const byteStream = (readable: Readable | null): Stream.Stream<Uint8Array, OutputUnreadable> =>
  readable === null
    ? Stream.empty
    : NodePlatform.fromReadable<OutputUnreadable, Uint8Array>(
        () => readable,
        (e) => new OutputUnreadable({ message: `Could not read the command's output: ${String(e)}` })
      )

/**
 * Makes the Bash tool; the analyzer, result store and sandbox are captured here, while `call` takes Processes,
 * BackgroundShells and FileSystem from the context it runs in (`Requirements`). The ResultStore is optional: without
 * one, output spills to an FsResultStore under the session's state directory.
 */
export const make = Effect.gen(function* () {
  const analyzer = yield* ShellAnalyzer
  // The application's ResultStore when it provides one; otherwise an FsResultStore under the session's state dir.
  const store = yield* Effect.serviceOption(ResultStore).pipe(
    Effect.flatMap(
      Option.match({
        onSome: Effect.succeed,
        onNone: () => Effect.flatMap(Session, (session) => FsResultStore.make({ stateDir: session.stateDir }))
      })
    )
  )
  const sandbox = yield* Effect.serviceOption(SandboxPort.Sandbox).pipe(
    Effect.flatMap(
      Option.match({ onSome: Effect.succeed, onNone: () => SandboxPort.Sandbox.pipe(Effect.provide(SandboxPort.none)) })
    )
  )
  const sandboxOn = sandbox.config.enabled

  /** How the command runs (sandboxed, not, or refused), and the command line to give `/bin/bash -c`. */
  const unsandboxed: SandboxDomain.RunPlan = { _tag: "Unsandboxed", why: "disabled" }
  const planOf = (input: Input) =>
    Effect.suspend(() => {
      // With the sandbox off there is nothing to plan (and no command line to analyse again). Read at each call:
      // with live settings the sandbox follows sandbox.enabled (the description and input stay as at start).
      if (!sandbox.config.enabled) return Effect.succeed(unsandboxed)
      const commands = analysisOf(analyzer, input, input.command).commands.map((c) => c.argv)
      const plan = SandboxPort.planFor(sandbox, commands, input.dangerouslyDisableSandbox === true)
      return plan._tag === "Refused" ? Effect.fail(new SandboxRefused({ message: plan.message })) : Effect.succeed(plan)
    })
  const wrap = (input: Input, ctx: Tool.ToolContext) => (script: string) =>
    sandbox.wrap(script, { id: ctx.toolUseId, commandText: input.command })
  const commandLine = (input: Input, ctx: Tool.ToolContext, script: string) =>
    Effect.gen(function* () {
      const plan = yield* planOf(input)
      return { plan, line: plan._tag === "Sandboxed" ? yield* wrap(input, ctx)(script) : script }
    })

  /** The sandbox's note for a result (what it refused), or the fallback's warning; empty when there is none. */
  const noteFor = (plan: SandboxDomain.RunPlan, ctx: Tool.ToolContext, output: string, failed: boolean): string => {
    if (plan._tag === "Unsandboxed") return plan.warning ?? ""
    if (plan._tag !== "Sandboxed") return ""
    return sandbox.explain(ctx.toolUseId, output, failed) ?? ""
  }

  const isReadOnly = (input: Input): boolean => analysisOf(analyzer, input, input.command).readOnly

  const isLenientExit = (input: Input, code: number | null): boolean => {
    if (code !== 1) return false
    const commands = analysisOf(analyzer, input, input.command).commands
    const name = lastCommandName(commands[commands.length - 1]?.argv)
    return name !== undefined && lenientCommands.has(name)
  }

  const runForeground = (input: Input, ctx: Tool.ToolContext) =>
    Effect.scoped(
      Effect.gen(function* () {
        const timeoutMs = input.timeout ?? defaultTimeoutMs
        const startedAt = yield* Clock.currentTimeMillis
        const spill = yield* store.openSpill({
          toolUseId: ctx.toolUseId,
          headChars: maxOutputChars - progressTailChars,
          tailChars: progressTailChars
        })
        const stdout = HeadTail.makeBytes(errorStreamBytes, errorStreamBytes)
        const stderr = HeadTail.makeBytes(errorStreamBytes, errorStreamBytes)

        const { line, plan } = yield* commandLine(input, ctx, `${cwdTrap}${input.command}`)
        const processes = yield* Processes
        const handle = yield* processes.spawn({
          file: "/bin/bash",
          args: ["-c", line],
          cwd: ctx.cwd,
          stdio: ["ignore", "pipe", "pipe"],
          canary: true
        })

        // Each chunk is captured and written to the spill in the tick it was read, so it is never held across an
        // asynchronous boundary: memory stays bounded by the pipes' buffers whatever the output size.
        const capture = (into: HeadTail.ByteHeadTail) => (bytes: Uint8Array) => Effect.sync(() => into.append(bytes))
        const write = (bytes: Uint8Array) => spill.writeBytes(bytes)
        const pump = yield* Stream.merge(
          Stream.tap(byteStream(handle.stdout), capture(stdout)),
          Stream.tap(byteStream(handle.stderr), capture(stderr))
        ).pipe(Stream.runForEach(write), Effect.forkScoped)

        yield* Effect.gen(function* () {
          yield* Effect.sleep(Duration.seconds(1))
          const now = yield* Clock.currentTimeMillis
          const snapshot = yield* spill.snapshot
          yield* ctx.progress({
            elapsed_ms: now - startedAt,
            total_chars: snapshot.totalChars,
            output: yield* spill.lastLines(5)
          })
        }).pipe(Effect.forever, Effect.forkScoped)

        // Output may still be in flight after the exit, or the pipes (output or canary) held open by a leftover
        // process: give it a moment, then kill everything the call started (leftovers must not outlive the call)
        // and stop reading.
        const drain = Effect.gen(function* () {
          const drained = yield* Fiber.join(pump).pipe(
            Effect.zipRight(handle.closed),
            Effect.as(true),
            Effect.race(wallSleep(drainGraceMs).pipe(Effect.as(false)))
          )
          if (drained) return
          yield* handle.kill
          const closed = yield* Fiber.join(pump).pipe(
            Effect.as(true),
            Effect.race(wallSleep(500).pipe(Effect.as(false)))
          )
          if (!closed) yield* Fiber.interrupt(pump)
        })

        const finished = yield* Effect.raceFirst(handle.exited, Effect.zipRight(Fiber.join(pump), handle.exited)).pipe(
          Effect.zipLeft(drain),
          Effect.timeoutOption(Duration.millis(timeoutMs))
        )

        if (Option.isNone(finished)) {
          yield* handle.kill
          yield* drain
          const spilled = yield* spill.finish
          const saved = Option.match(spilled.path, { onNone: () => "", onSome: (p) => ` Output so far saved to: ${p}` })
          return yield* new CommandTimedOut({
            timeoutMs,
            message: `Command timed out after ${timeoutMs} ms and was killed.${saved} Use run_in_background: true for long-running commands, or a larger timeout (at most ${maxTimeoutMs} ms).`,
            stderr: renderCapture(stderr.snapshot()),
            stdout: renderCapture(stdout.snapshot())
          })
        }
        const exit = finished.value
        const spilled = yield* spill.finish

        const failed = exit.code !== 0 && !isLenientExit(input, exit.code)
        const note = noteFor(
          plan,
          ctx,
          `${renderCapture(stderr.snapshot())}\n${renderCapture(stdout.snapshot())}`,
          failed
        ).replace(/^(?=.)/, "\n")
        if (failed) {
          const saved = Option.match(spilled.path, {
            onNone: () => "",
            onSome: (p) =>
              spilled.savedBytes === undefined
                ? `\nFull output (${PersistedOutput.formatSize(spilled.bytes)}) saved to: ${p}`
                : `\nOutput (${PersistedOutput.formatSize(spilled.bytes)}): ${PersistedOutput.savedTo({ ...spilled, path: p })}`
          })
          return yield* new CommandFailed({
            code: exit.code,
            signal: exit.signal,
            message:
              exit.code === null
                ? `Killed by signal ${exit.signal ?? "unknown"}${saved}${note}`
                : `Exit code ${exit.code}${saved}${note}`,
            stderr: renderCapture(stderr.snapshot()),
            stdout: renderCapture(stdout.snapshot())
          })
        }

        const output = renderOutput(spilled)
        const status =
          exit.code === 0
            ? output
            : output.length === 0
              ? `Exit code ${exit.code}`
              : `${output}\nExit code ${exit.code}`
        const text = note === "" ? status : status === "" ? note.slice(1) : `${status}\n${note}`

        const finalDir = reportedDir(handle.canaryText())
        if (!Path.isAbsolute(finalDir) || finalDir === ctx.cwd) return text
        const fs = yield* FileSystem.FileSystem
        const startDir = yield* fs.realPath(ctx.cwd).pipe(Effect.orElseSucceed(() => ctx.cwd))
        if (finalDir === startDir) return text
        return Tool.withModifier(text, (context) => ({ ...context, cwd: finalDir }))
      })
    )

  const runBackground = (input: Input, ctx: Tool.ToolContext) =>
    Effect.map(
      Effect.zipWith(planOf(input), BackgroundShells, (plan, shells) => ({ plan, shells })).pipe(
        Effect.flatMap(({ plan, shells }) =>
          shells.start(input.command, ctx.cwd, plan._tag === "Sandboxed" ? wrap(input, ctx) : undefined)
        )
      ),
      (info) =>
        `Command running in background with ID: ${info.id}\nOutput is written to ${info.logPath}. Read it with BashOutput (bash_id "${info.id}"); stop the command with KillShell (shell_id "${info.id}").`
    )

  return yield* Tool.make({
    name: "Bash",
    description: sandboxOn ? `${description}\n\n${sandboxDescription}` : description,
    input: (sandboxOn ? SandboxedInput : PlainInput) as typeof SandboxedInput,
    output: Schema.String,
    progress: Progress,
    category: "shell",
    searchHint: "shell command terminal run execute script build test git npm",
    isReadOnly,
    isConcurrencySafe: isReadOnly,
    cancelsSiblingsOnError: true,
    // A user interrupt usually means "stop that command" (a hung build, a server started in the foreground);
    // the process group is killed by the call's finalizers before the result is yielded, so cancelling is safe.
    interruptBehavior: "cancel",
    failure: Failure,
    summarize: (input) => input.command,
    // the processes it starts are this call's effects: in a durable session, starting one marks the call as begun
    call: (input, ctx) =>
      SpawnRecord.forCall(ctx.toolUseId)<string | Tool.WithModifier<string>, Failure, Requirements>(
        input.run_in_background === true ? runBackground(input, ctx) : runForeground(input, ctx)
      )
  })
})

/** The services Bash's `call` takes from the context it runs in. */
export type Requirements = Processes | BackgroundShells | FileSystem.FileSystem

/**
 * Registers Bash. Requires ToolRegistry, ShellAnalyzer, Session and Bash's Requirements (Processes, BackgroundShells,
 * FileSystem); uses the ResultStore and Sandbox when provided.
 */
export const layer = ToolRegistryLive.register(make)

/**
 * Registers Bash, BashOutput and KillShell sharing one BackgroundShells service under the session's state
 * directory. Requires ToolRegistry, ShellAnalyzer, Session and FileSystem; uses the ResultStore when provided.
 */
export const layerWithShells = Layer.mergeAll(layer, BashOutput.layer, KillShell.layer).pipe(
  Layer.provide(ProcessBackgroundShells.layer)
)
