/**
 * Runs one command hook as a real process (SPEC §6): `/bin/sh -c command` in its own process group, the hook
 * input as one JSON line on stdin, stdout and stderr collected (capped), a time limit measured with Effect's
 * Clock, and the whole process group killed (SIGTERM, then SIGKILL after a grace) on timeout, on interruption
 * and after the shell exits, so that nothing the hook started survives it.
 *
 * Node's `child_process.spawn` with `detached: true` is used rather than @effect/platform's Command: the
 * platform executor does spawn detached, but its finalizer sends SIGTERM and then waits for the exit with no
 * SIGKILL escalation (a hook that traps TERM would hang the caller), it leaves the group alone when the shell
 * exits 0 (a backgrounded child would survive), and it reports death by signal as a failure to read the code.
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import { Data, Duration, Effect, Option } from "effect"

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

interface Running {
  readonly child: ChildProcess.ChildProcess
  readonly pid: number
  readonly stdout: Capture
  readonly stderr: Capture
  /** Resolves with the shell's exit code and signal. */
  readonly exited: Promise<readonly [number | null, NodeJS.Signals | null]>
  /** Resolves when every holder of the stdout/stderr pipes is gone. */
  readonly closed: Promise<void>
  /** Set once the group has been reaped, so that a second reap never signals a recycled group id. */
  reaped: boolean
}

const signalGroup = (pid: number, signal: NodeJS.Signals): boolean => {
  // process.kill reports a missing group (ESRCH) by throwing; that is the "nothing left" answer, not an error.
  try {
    process.kill(-pid, signal)
    return true
  } catch {
    return false
  }
}

const within = (promise: Promise<unknown>, ms: number): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms)
    promise.then(() => {
      clearTimeout(timer)
      resolve()
    })
  })

/**
 * Kills whatever is left of the process group: SIGTERM, then SIGKILL once the shell has exited and the pipes
 * have closed or the grace has passed; then waits (bounded) for the pipes to close. The grace uses real time:
 * it is about the operating system, not about ordering, and must work under TestClock.
 */
const reap = (running: Running, graceMs: number): Effect.Effect<void> =>
  Effect.promise(async () => {
    if (running.reaped) return
    running.reaped = true
    if (signalGroup(running.pid, "SIGTERM")) {
      await within(Promise.all([running.exited, running.closed]), graceMs)
      signalGroup(running.pid, "SIGKILL")
    }
    await within(running.closed, graceMs)
    running.child.stdout?.destroy()
    running.child.stderr?.destroy()
  })

const spawn = (options: CommandHookOptions): Effect.Effect<Running, string> =>
  Effect.async<Running, string>((resume) => {
    const cap = options.maxOutputBytes ?? defaultMaxOutputBytes
    const child = ChildProcess.spawn(shell, ["-c", options.command], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      detached: true,
      stdio: ["pipe", "pipe", "pipe"]
    })
    const stdout = new Capture(cap)
    const stderr = new Capture(cap)
    child.stdout?.on("data", (chunk: Buffer) => stdout.add(chunk))
    child.stderr?.on("data", (chunk: Buffer) => stderr.add(chunk))
    // A hook that never reads stdin makes the write fail with EPIPE; that is the hook's business.
    child.stdin?.on("error", () => {})
    const exited = new Promise<readonly [number | null, NodeJS.Signals | null]>((resolve) =>
      child.on("exit", (code, signal) => resolve([code, signal]))
    )
    const closed = new Promise<void>((resolve) => child.on("close", () => resolve()))
    child.on("error", (error) => {
      // Node reports a missing working directory as a missing shell (`spawn /bin/sh ENOENT`): say which it is.
      const message = Fs.existsSync(options.cwd) ? error.message : `working directory ${options.cwd} does not exist`
      if (child.pid === undefined) resume(Effect.fail(message))
    })
    child.on("spawn", () => {
      child.stdin?.end(`${options.input}\n`)
      resume(Effect.succeed({ child, pid: child.pid!, stdout, stderr, exited, closed, reaped: false }))
    })
  })

/** Runs one command hook to completion, timeout or interruption; the process group never outlives the call. */
export const run = (options: CommandHookOptions): Effect.Effect<CommandHookResult> => {
  const grace = options.killGraceMs ?? defaultKillGraceMs
  return Effect.acquireUseRelease(
    Effect.either(spawn(options)),
    (spawned): Effect.Effect<CommandHookResult> => {
      if (spawned._tag === "Left") return Effect.succeed(CommandHookResult.SpawnFailed({ message: spawned.left }))
      const running = spawned.right
      return Effect.promise(() => running.exited).pipe(
        Effect.timeout(Duration.seconds(options.timeoutSeconds)),
        Effect.option,
        Effect.tap(() => reap(running, grace)),
        Effect.map(
          Option.match({
            onNone: () =>
              CommandHookResult.TimedOut({
                seconds: options.timeoutSeconds,
                stdout: running.stdout.text(),
                stderr: running.stderr.text()
              }),
            onSome: ([code, signal]) =>
              code === null
                ? CommandHookResult.Signaled({
                    signal: signal ?? "unknown",
                    stdout: running.stdout.text(),
                    stderr: running.stderr.text()
                  })
                : CommandHookResult.Exited({ code, stdout: running.stdout.text(), stderr: running.stderr.text() })
          })
        )
      )
    },
    (spawned) => (spawned._tag === "Right" ? reap(spawned.right, grace) : Effect.void)
  )
}
