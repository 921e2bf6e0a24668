/**
 * Child processes in their own process group: spawned with `detached: true` (so the child leads a new group),
 * scoped (closing the scope kills the whole group), and killed with SIGTERM, then SIGKILL after a grace period,
 * waiting until no member of the group is left.
 *
 * Node's `child_process` is used directly rather than @effect/platform's CommandExecutor: the platform command
 * does spawn detached, but it cannot hand the child a file descriptor as stdout/stderr (background shells write
 * straight to their log file), and its kill signals only the leader and waits for it, without SIGKILL escalation
 * or a check that the rest of the group is gone.
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import { Data, Deferred, Effect, type Scope } from "effect"

/** How the leader of a group ended. */
export interface Exit {
  /** The exit code; `null` when the leader was killed by a signal. */
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

/** The process could not be started (missing binary, missing working directory, …). */
export class SpawnError extends Data.TaggedError("SpawnError")<{
  readonly command: string
  readonly reason: string
}> {
  override get message(): string {
    return `Could not start ${this.command}: ${this.reason}`
  }
}

/** A running process group. */
export interface Handle {
  /** The leader's pid, which is also the group id. */
  readonly pid: number
  readonly child: ChildProcess.ChildProcess
  /** Completes when the leader exits (its stdio may still be open in other members). */
  readonly exited: Effect.Effect<Exit>
  /** Kills the whole group: SIGTERM, then SIGKILL after the grace period; completes when the group is gone. */
  readonly kill: Effect.Effect<void>
  /** True while any member of the group exists. */
  readonly isAlive: () => boolean
}

/** The time between SIGTERM and SIGKILL. */
export const killGraceMs = 2_000

const pollMs = 20

/**
 * Waits on the wall clock, not Effect's Clock: signal escalation is about real processes, and a finalizer that
 * waits for a TestClock nobody advances would hang the test that interrupts it.
 */
export const wallSleep = (ms: number): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    const timer = setTimeout(() => resume(Effect.void), ms)
    return Effect.sync(() => clearTimeout(timer))
  })

const isLiveMemberOf =
  (pgid: number) =>
  (entry: string): boolean => {
    if (!/^\d+$/.test(entry)) return false
    try {
      const stat = Fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      return fields[0] !== "Z" && Number(fields[2]) === pgid
    } catch {
      return false
    }
  }

/**
 * True while a process group has a member that is not a zombie. Where an init process is slow to reap orphans
 * (containers, micro-VMs), dead members linger as zombies that `kill(-pgid, 0)` still counts; on Linux `/proc`
 * tells them apart.
 */
export const groupExists = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0)
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
  if (process.platform !== "linux") return true
  try {
    return Fs.readdirSync("/proc").some(isLiveMemberOf(pgid))
  } catch {
    return true
  }
}

const signalGroup = (pgid: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(-pgid, signal)
  } catch {
    // ESRCH: the group is already gone.
  }
}

const waitGone = (pgid: number, ms: number): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    let waited = 0
    while (groupExists(pgid) && waited < ms) {
      yield* wallSleep(pollMs)
      waited += pollMs
    }
    return !groupExists(pgid)
  })

/**
 * Kills a process group: SIGTERM, up to `graceMs` for it to go, then SIGKILL and up to one more second.
 * Uninterruptible, so an interrupted caller still leaves no process behind.
 */
export const killGroup = (pgid: number, graceMs: number = killGraceMs): Effect.Effect<void> =>
  Effect.uninterruptible(
    Effect.gen(function* () {
      if (!groupExists(pgid)) return
      signalGroup(pgid, "SIGTERM")
      if (yield* waitGone(pgid, graceMs)) return
      signalGroup(pgid, "SIGKILL")
      yield* waitGone(pgid, 1_000)
    })
  )

/** What to start. */
export interface SpawnOptions {
  readonly file: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly env?: NodeJS.ProcessEnv | undefined
  readonly stdio: ChildProcess.StdioOptions
}

/**
 * Spawns a process as the leader of a new process group. When the scope closes, whatever is left of the group is
 * killed (SIGTERM, then SIGKILL after 2 s) and the release waits until it is gone.
 */
export const spawn = (options: SpawnOptions): Effect.Effect<Handle, SpawnError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.gen(function* () {
      const exited = yield* Deferred.make<Exit>()
      const child = yield* Effect.async<ChildProcess.ChildProcess, SpawnError>((resume) => {
        const spawned = ChildProcess.spawn(options.file, [...options.args], {
          cwd: options.cwd,
          env: options.env ?? process.env,
          stdio: options.stdio,
          detached: true
        })
        const onError = (e: Error) => resume(Effect.fail(new SpawnError({ command: options.file, reason: e.message })))
        spawned.once("error", onError)
        spawned.once("spawn", () => {
          spawned.off("error", onError)
          resume(Effect.succeed(spawned))
        })
        spawned.once("exit", (code, signal) => {
          Deferred.unsafeDone(exited, Effect.succeed({ code, signal }))
        })
      })
      // Errors after spawn (e.g. EPIPE on a closed stream) must not crash the process.
      child.on("error", () => {})
      const pid = child.pid ?? 0
      return {
        pid,
        child,
        exited: Deferred.await(exited),
        kill: killGroup(pid),
        isAlive: () => groupExists(pid)
      } satisfies Handle
    }),
    (handle) => handle.kill
  )
