/**
 * Child processes that never outlive their call (see docs/processes.md). Each child is spawned with
 * `detached: true`, so it leads a new session and process group, and with a unique tag in its environment
 * (`ARMATURE_CALL=<id>`), which every descendant inherits, including the ones that leave the group with `setsid`,
 * `setsid -f`, `nohup … &` or a double fork. Killing a child means: SIGTERM to its group and to every tagged
 * process, a grace period, then SIGKILL rounds until neither the group nor any tagged process is left (bounded).
 *
 * The tag is looked for in `/proc/<pid>/environ` only when something has to be killed — a timeout, an
 * interruption, a scope closed while the child runs, or a child whose group or output pipes are still held after
 * it exited — never on the path of a call that ends cleanly, so a call costs the same whatever the process table.
 *
 * Node's `child_process` is used directly rather than @effect/platform's CommandExecutor: the platform command
 * cannot hand the child a file descriptor as stdout/stderr (background shells write straight to their log file),
 * and its kill signals only the leader and waits for it, without SIGKILL escalation or descendants outside the
 * group.
 */
import * as ChildProcess from "node:child_process"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import type { Readable, Writable } from "node:stream"
import { Deferred, Duration, Effect, FiberRef, HashSet, Layer, Schedule, type Scope } from "effect"
import { onWallClock, wallSleep } from "../../domain/WallClock.js"
import * as Processes from "../../services/Processes.js"
import * as SpawnRecord from "./SpawnRecord.js"

/** The environment variable that tags every process started for one call. */
export const tagVariable = "ARMATURE_CALL"

/**
 * The environment of a child: the given one, the call's tag, and git told to use a bare repository only when it is
 * named explicitly (`--git-dir`, `GIT_DIR`). A directory in the project that looks like a bare repository could
 * otherwise carry its own config (`core.fsmonitor`, hooks, aliases) and run code when a read-only `git` command
 * is run in it. The setting is appended after any `GIT_CONFIG_*` entries already present.
 */
export const childEnvironment = (base: NodeJS.ProcessEnv, tag: string): NodeJS.ProcessEnv => {
  const given = Number.parseInt(base.GIT_CONFIG_COUNT ?? "", 10)
  const index = Number.isInteger(given) && given > 0 ? given : 0
  return {
    ...base,
    [tagVariable]: tag,
    GIT_CONFIG_COUNT: String(index + 1),
    [`GIT_CONFIG_KEY_${index}`]: "safe.bareRepository",
    [`GIT_CONFIG_VALUE_${index}`]: "explicit"
  }
}

/** A running child (Processes.Handle) with Node's ChildProcess object. */
export interface Handle extends Processes.Handle {
  readonly child: ChildProcess.ChildProcess
}

/** The time between SIGTERM and SIGKILL by default. */
export const defaultKillGraceMs = 2_000

/** How long the SIGKILL rounds may go on before the kill gives up on processes it cannot see die. */
const killRoundsMs = 2_000

const pollMs = 20

/** The fields of `/proc/<pid>/stat` after the command name: state, ppid, pgrp, … */
const statFields = (pid: string): ReadonlyArray<string> | undefined => {
  try {
    const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  } catch {
    return undefined
  }
}

const hasTag = (pid: string, needle: Buffer): boolean => {
  try {
    return Fs.readFileSync(`/proc/${pid}/environ`).includes(needle)
  } catch {
    return false
  }
}

/**
 * Clock ticks since boot, a little in the past: processes that started before it cannot descend from a child
 * spawned now. Linux counts process start times in ticks of 1/100 s (USER_HZ, fixed at 100 on every common build).
 */
const ticksNow = (): number => Math.floor((Os.uptime() - 2) * 100)

/**
 * The live (non-zombie) processes that are members of group `pgid` or carry `tag` in their environment; only
 * processes that started at or after `sinceTicks` (see `ticksNow`) can carry it. Reads `/proc`: only ever called
 * when something is being killed.
 */
export const findDescendants = (pgid: number, tag: string | undefined, sinceTicks = 0): ReadonlyArray<number> => {
  const needle = tag === undefined ? undefined : Buffer.from(`${tagVariable}=${tag}\0`)
  let entries: ReadonlyArray<string>
  try {
    entries = Fs.readdirSync("/proc")
  } catch {
    return []
  }
  const found: Array<number> = []
  for (const entry of entries) {
    const code = entry.charCodeAt(0)
    if (code < 48 || code > 57) continue
    const fields = statFields(entry)
    if (fields === undefined || fields[0] === "Z" || fields[0] === "X") continue
    if (Number(fields[2]) === pgid) found.push(Number(entry))
    else if (needle !== undefined && Number(fields[19]) >= sinceTicks && hasTag(entry, needle))
      found.push(Number(entry))
  }
  return found
}

/**
 * True while a process group has a member that is not a zombie. Where an init process is slow to reap orphans
 * (containers, micro-VMs), dead members linger as zombies that `kill(-pgid, 0)` still counts; on Linux `/proc`
 * tells them apart.
 */
export const groupExists = (pgid: number): boolean => {
  if (!Number.isInteger(pgid) || pgid <= 1) return false
  // Asked once per call on its clean end, where the answer is nearly always "no": the ESRCH error needs no stack.
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    process.kill(-pgid, 0)
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  } finally {
    Error.stackTraceLimit = limit
  }
  if (process.platform !== "linux") return true
  return findDescendants(pgid, undefined).length > 0
}

const signal = (target: number, name: NodeJS.Signals): void => {
  try {
    process.kill(target, name)
  } catch {
    // ESRCH: already gone.
  }
}

/** What is left of a call's processes: the group's live members and the tagged processes. */
const remaining = (pgid: number, tag: string | undefined, sinceTicks: number): ReadonlyArray<number> =>
  process.platform === "linux" ? findDescendants(pgid, tag, sinceTicks) : groupExists(pgid) ? [pgid] : []

/**
 * Signals the group and the listed processes. Only a real group id (above 1) is signalled as a group: `-0` would be
 * this process's own group (the engine and whatever started it), a negative id a single unrelated process.
 */
const signalAll = (pgid: number, pids: ReadonlyArray<number>, name: NodeJS.Signals): void => {
  if (Number.isInteger(pgid) && pgid > 1) signal(-pgid, name)
  for (const pid of pids) if (Number.isInteger(pid) && pid > 1 && pid !== process.pid) signal(pid, name)
}

/** Polls (real time) until the scan finds nothing, for at most `ms`; returns what is left then. */
const waitGone = (scan: () => ReadonlyArray<number>, ms: number): Effect.Effect<ReadonlyArray<number>> =>
  Effect.suspend(() => Effect.succeed(scan())).pipe(
    Effect.repeat({ until: (left) => left.length === 0, schedule: Schedule.spaced(Duration.millis(pollMs)) }),
    // The kill runs uninterruptibly; only this wait may be cut short by its own timeout.
    Effect.interruptible,
    Effect.timeoutOption(Duration.millis(ms)),
    Effect.map(() => scan()),
    onWallClock
  )

/**
 * Kills a process group and every process carrying `tag`: SIGTERM, up to `graceMs` for them to go, then rounds
 * of SIGKILL (each one re-reading `/proc`, so that processes forked in between are caught) until none is left or
 * about two seconds have passed. Uninterruptible, so an interrupted caller still leaves no process behind.
 */
export const killAll = (
  pgid: number,
  tag: string | undefined,
  graceMs: number = defaultKillGraceMs,
  sinceTicks = 0
): Effect.Effect<void> => killAllWith(() => remaining(pgid, tag, sinceTicks), pgid, graceMs)

/**
 * `killAll` over a given scan of what is left (`scan` lists the pids to signal besides the group). An empty scan is
 * trusted only when a second one, one poll interval later, is empty too: a descendant in the middle of `exec` has
 * no readable environment for a moment, so a single scan may miss it.
 */
export const killAllWith = (
  scan: () => ReadonlyArray<number>,
  pgid: number,
  graceMs: number = defaultKillGraceMs
): Effect.Effect<void> =>
  Effect.uninterruptible(
    Effect.gen(function* () {
      const confirmed = Effect.gen(function* () {
        const first = scan()
        if (first.length > 0) return first
        yield* wallSleep(pollMs)
        return scan()
      })
      let left = yield* confirmed
      if (left.length === 0) return
      signalAll(pgid, left, "SIGTERM")
      left = yield* waitGone(scan, graceMs)
      if (left.length === 0) left = yield* confirmed
      const deadline = Date.now() + killRoundsMs
      while (left.length > 0 && Date.now() < deadline) {
        signalAll(pgid, left, "SIGKILL")
        left = yield* waitGone(scan, 200)
        if (left.length === 0) left = yield* confirmed
      }
    })
  )

const maxCanaryBytes = 4096

/** The recorder each recorded child was started under, told when its group is gone. */
const recorders = new WeakMap<Handle, SpawnRecord.Recorder>()

const newTag = (): string => Crypto.randomBytes(9).toString("base64url")

const spawnFailure = (options: Processes.SpawnOptions, error: Error): Processes.SpawnError =>
  new Processes.SpawnError({
    command: options.file,
    // Node reports a missing working directory as a missing program (`spawn /bin/sh ENOENT`): say which it is.
    reason: Fs.existsSync(options.cwd) ? error.message : `working directory ${options.cwd} does not exist`
  })

/**
 * Spawns a process as the leader of a new session and process group, tagged for the kill. When the scope closes,
 * a child that is still running — or that left something behind (see `onRelease`) — is killed with everything it
 * started, and the release waits until they are gone. Under a recorder (SpawnRecord: durable sessions) the child is
 * started behind a gate and recorded before it runs anything, and its record goes when the group is gone.
 */
export const spawn = (options: Processes.SpawnOptions): Effect.Effect<Handle, Processes.SpawnError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.gen(function* () {
      const recorder = yield* FiberRef.get(SpawnRecord.currentRecorder)
      const call = yield* FiberRef.get(SpawnRecord.currentCall)
      const stdio = options.stdio
      const baseStdio: ChildProcess.StdioOptions =
        typeof stdio === "string" ? stdio : options.canary === true ? [...stdio, "pipe"] : [...stdio]
      // the gate is the descriptor after the others; only a child given an array of descriptors can have one
      const gateFd = recorder !== undefined && Array.isArray(baseStdio) ? baseStdio.length : undefined
      const command =
        gateFd === undefined
          ? { file: options.file, args: options.args }
          : SpawnRecord.gated(options.file, options.args, gateFd)
      const exited = yield* Deferred.make<Processes.Exit>()
      const closed = yield* Deferred.make<void>()
      let hasExited = false
      let hasClosed = false
      const canary: Array<Buffer> = []
      let canaryBytes = 0
      const tag = newTag()
      const sinceTicks = ticksNow()
      const child = yield* Effect.async<ChildProcess.ChildProcess, Processes.SpawnError>((resume) => {
        const spawned = ChildProcess.spawn(command.file, [...command.args], {
          cwd: options.cwd,
          env: childEnvironment(options.env ?? process.env, tag),
          stdio: gateFd === undefined || !Array.isArray(baseStdio) ? baseStdio : [...baseStdio, "pipe"],
          detached: true
        })
        // Flowing from the start, so nothing written is dropped and the stream ends (and "close" fires) when
        // the last holder of the canary is gone.
        if (options.canary === true) {
          spawned.stdio[3]?.on("data", (chunk: Buffer) => {
            if (canaryBytes < maxCanaryBytes) canary.push(chunk.subarray(0, maxCanaryBytes - canaryBytes))
            canaryBytes += chunk.length
          })
        }
        const onError = (e: Error) => resume(Effect.fail(spawnFailure(options, e)))
        spawned.once("error", onError)
        spawned.once("spawn", () => {
          spawned.off("error", onError)
          resume(Effect.succeed(spawned))
        })
        spawned.once("exit", (code, signal) => {
          hasExited = true
          Deferred.unsafeDone(exited, Effect.succeed({ code, signal }))
        })
        spawned.once("close", () => {
          hasClosed = true
          Deferred.unsafeDone(closed, Effect.void)
        })
      })
      // Errors after spawn (e.g. EPIPE on a closed stream) must not crash the process.
      child.on("error", () => {})
      const pid = child.pid ?? 0
      const kill = yield* Effect.cached(killAll(pid, tag, options.killGraceMs ?? defaultKillGraceMs, sinceTicks))
      if (recorder !== undefined && gateFd !== undefined) {
        const gate = child.stdio[gateFd] as Writable | null
        // recorded while the child waits at its gate; were this process to die before the gate opens (or the record
        // fail), the child's end of the pipe would close and it would exit without running the command
        const spawned = { tag, pid, startTicks: SpawnRecord.startTicksOf(pid) ?? 0, bootId: SpawnRecord.bootId(), call }
        yield* recorder.started(spawned).pipe(Effect.onError(() => Effect.sync(() => gate?.destroy())))
        // this acquire is uninterruptible, so an interrupt that came while the start was being recorded waits here:
        // the gate stays shut (the child exits without running the command) and the record is taken back, so the
        // call provably never started and whoever takes its session up runs it, instead of telling the model that a
        // call that ran nothing crashed
        if (HashSet.size((yield* Effect.descriptor).interruptors) > 0) {
          gate?.destroy()
          yield* recorder.withdrawn(spawned)
          return yield* Effect.interrupt
        }
        gate?.on("error", () => {})
        gate?.end("\n")
      }
      const handle: Handle = {
        pid,
        tag,
        child,
        stdin: child.stdin,
        stdout: child.stdout as Readable | null,
        stderr: child.stderr as Readable | null,
        exited: Deferred.await(exited),
        closed: Deferred.await(closed),
        kill: Effect.uninterruptible(kill),
        isAlive: () => groupExists(pid),
        canaryText: () => Buffer.concat(canary).toString("utf8"),
        endedCleanly: () => hasExited && hasClosed && !groupExists(pid)
      }
      if (recorder !== undefined) recorders.set(handle, recorder)
      return handle
    }),
    (handle) =>
      Effect.zipRight(
        options.onRelease !== "always" && handle.endedCleanly() ? Effect.void : handle.kill,
        Effect.suspend(() => recorders.get(handle)?.ended(handle.tag) ?? Effect.void)
      )
  )

/** The Node implementation of the Processes service. */
export const layer: Layer.Layer<Processes.Processes> = Layer.succeed(Processes.Processes, {
  spawn,
  killAll: (pgid, tag, graceMs, sinceTicks) => killAll(pgid, tag, graceMs, sinceTicks),
  findDescendants: (pgid, tag, sinceTicks) => findDescendants(pgid, tag, sinceTicks),
  groupExists,
  defaultKillGraceMs
})
