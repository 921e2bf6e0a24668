/**
 * Runs one command hook as a real process: `/bin/sh -c command` through the Processes service (a new session and process
 * group, tagged so that descendants outside the group are found too), the hook input as one JSON line on stdin,
 * stdout and stderr collected (capped), and a time limit measured with Effect's Clock. On timeout, on
 * interruption, and when the hook left processes behind after it exited, the service kills everything it
 * started (SIGTERM, then SIGKILL after a grace), so nothing a hook starts survives it. See docs/processes.md.
 */
import { Data, Duration, Effect, Option } from "effect"
import { onWallClock } from "../../domain/WallClock.js"
import { type Handle, Processes } from "../../services/Processes.js"

/** How one hook process ended. */
export type CommandHookResult = Data.TaggedEnum<{
  /** The shell exited with a code. */
  Exited: { readonly code: number; readonly stdout: string; readonly stderr: string }
  /** The shell was killed by a signal it did not get from us. */
  Signaled: { readonly signal: string; readonly stdout: string; readonly stderr: string }
  /** The time limit passed; the process group was killed. */
  TimedOut: { readonly seconds: number; readonly stdout: string; readonly stderr: string }
  /** The shell could not be started. */
  SpawnFailed: { readonly message: string }
}>

/** Constructors and matchers of CommandHookResult. */
export const CommandHookResult = Data.taggedEnum<CommandHookResult>()

/** Everything needed to run one command hook. */
export interface CommandHookOptions {
  readonly command: string
  /** The hook's working directory: the project directory. */
  readonly cwd: string
  /** Variables added to the inherited environment. */
  readonly env: Readonly<Record<string, string>>
  /** Written to stdin, followed by a newline, then stdin is closed. */
  readonly input: string
  /** The time limit in seconds. */
  readonly timeoutSeconds: number
  /** Bytes kept of stdout and of stderr each (default 1 MiB); the rest is read and dropped. */
  readonly maxOutputBytes?: number | undefined
  /** Milliseconds between SIGTERM and SIGKILL (default 1000). */
  readonly killGraceMs?: number | undefined
}

/** The shell hooks run in. */
export const shell = "/bin/sh"

/** Bytes kept of each output stream by default. */
export const defaultMaxOutputBytes = 1024 * 1024

/** Milliseconds between SIGTERM and SIGKILL by default. */
export const defaultKillGraceMs = 1000

class Capture {
  private readonly chunks: Array<Buffer> = []
  private size = 0
  constructor(private readonly cap: number) {}
  add(chunk: Buffer): void {
    if (this.size >= this.cap) return
    const kept = chunk.length <= this.cap - this.size ? chunk : chunk.subarray(0, this.cap - this.size)
    this.chunks.push(kept)
    this.size += kept.length
  }
  text(): string {
    return Buffer.concat(this.chunks).toString("utf8")
  }
}

const spawn = (options: CommandHookOptions) =>
  Effect.gen(function* () {
    const cap = options.maxOutputBytes ?? defaultMaxOutputBytes
    const processes = yield* Processes
    const handle = yield* processes.spawn({
      file: shell,
      args: ["-c", options.command],
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
      canary: true,
      killGraceMs: options.killGraceMs ?? defaultKillGraceMs
    })
    const stdout = new Capture(cap)
    const stderr = new Capture(cap)
    handle.stdout?.on("data", (chunk: Buffer) => stdout.add(chunk))
    handle.stderr?.on("data", (chunk: Buffer) => stderr.add(chunk))
    // A hook that never reads stdin makes the write fail with EPIPE; that is the hook's business.
    handle.stdin?.on("error", () => {})
    handle.stdin?.end(`${options.input}\n`)
    return { handle, stdout, stderr }
  })

/**
 * Waits (real time, bounded by the kill grace) for the output pipes to close after the shell exited; when a
 * leftover process still holds them, kills the group and everything tagged with the call, then waits again.
 */
const drain = (handle: Handle, graceMs: number): Effect.Effect<void> =>
  Effect.gen(function* () {
    const closed = yield* handle.closed.pipe(Effect.timeoutOption(Duration.millis(graceMs)), onWallClock)
    if (Option.isSome(closed)) return
    yield* handle.kill
    yield* handle.closed.pipe(Effect.timeoutOption(Duration.millis(graceMs)), onWallClock)
  })

/**
 * Runs one command hook to completion, timeout or interruption; the process group (and anything the hook started,
 * in the group or not) never outlives the call.
 */
export const run = (options: CommandHookOptions): Effect.Effect<CommandHookResult, never, Processes> => {
  const grace = options.killGraceMs ?? defaultKillGraceMs
  return Effect.scoped(
    Effect.gen(function* () {
      const spawned = yield* Effect.either(spawn(options))
      if (spawned._tag === "Left") return CommandHookResult.SpawnFailed({ message: spawned.left.reason })
      const { handle, stdout, stderr } = spawned.right
      // The time limit is measured with the fiber's Clock (a TestClock in tests); the kill uses real time.
      const ended = yield* Effect.timeoutOption(handle.exited, Duration.seconds(options.timeoutSeconds))
      if (Option.isNone(ended)) yield* handle.kill
      yield* drain(handle, grace)
      const output = { stdout: stdout.text(), stderr: stderr.text() }
      if (Option.isNone(ended)) return CommandHookResult.TimedOut({ seconds: options.timeoutSeconds, ...output })
      const { code, signal } = ended.value
      return code === null
        ? CommandHookResult.Signaled({ signal: signal ?? "unknown", ...output })
        : CommandHookResult.Exited({ code, ...output })
    })
  )
}
