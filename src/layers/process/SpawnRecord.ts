/**
 * A call's processes as a durable session records them, so that a process left running by a crash can be found and
 * killed when the session is taken up again. While a recorder is set (a FiberRef: durable sessions set it around
 * their agent loop), `ProcessGroup.spawn` starts each child behind a gate: the child is created blocked reading a
 * pipe, its group leader's pid and start time are recorded, and only then is the gate opened and the command run.
 * If the engine dies before opening it, the pipe's end closes and the child exits without running anything. So a
 * record exists before the process does any work, with the pid known (which it is not before the spawn).
 *
 * Killing a recorded group later checks the leader's start time (from `/proc/PID/stat`) and the boot, so that a pid
 * reused by another process is never signalled; the call's tag (`ARMATURE_CALL`) finds the processes that left
 * the group.
 */
import * as Fs from "node:fs"
import { Effect, FiberRef } from "effect"

/** A started group as recorded. */
export interface Spawned {
  /** The call's tag (ARMATURE_CALL) in the environment of every process of the group. */
  readonly tag: string
  /** The group leader's pid, which is also the group id. */
  readonly pid: number
  /** The leader's start time, in clock ticks after boot (field 22 of /proc/PID/stat). */
  readonly startTicks: number
  /** The boot the start time counts from (/proc/sys/kernel/random/boot_id). */
  readonly bootId: string
  /**
   * The tool call (its tool_use_id) whose effects the group is, when a tool started it as its work (not a hook):
   * once such a group is past its gate, the call may have run.
   */
  readonly call?: string | undefined
}

/** What is told of the processes a call starts. */
export interface Recorder {
  /** A group was started and is blocked at its gate: recorded before the gate opens. */
  readonly started: (spawned: Spawned) => Effect.Effect<void>
  /** The group is gone (it ended, or was killed): its record may go. */
  readonly ended: (tag: string) => Effect.Effect<void>
  /**
   * The group was recorded but its gate stays shut (the call was interrupted while its start was being recorded): its
   * record goes, and the call's start mark too when this record put it in, so that whoever takes the session up knows
   * the call never started and runs it. Fenced as `started` is: a mark is only withdrawn while the session is still
   * leased here (otherwise it stays, and the call counts as one that may have run).
   */
  readonly withdrawn: (spawned: Spawned) => Effect.Effect<void>
}

/** The recorder of the calls of the fiber (none outside durable sessions). */
export const currentRecorder: FiberRef.FiberRef<Recorder | undefined> = FiberRef.unsafeMake<Recorder | undefined>(
  undefined
)

/** The tool call whose work the fiber's processes are (set by a tool around its body; hooks run outside it). */
export const currentCall: FiberRef.FiberRef<string | undefined> = FiberRef.unsafeMake<string | undefined>(undefined)

/** Runs `effect` (a tool's body) with the processes it starts marked as the work of the call `toolUseId`. */
export const forCall =
  (toolUseId: string) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.locally(effect, currentCall, toolUseId)

/** The start time of a process in clock ticks after boot, or `undefined` when there is no such process. */
export const startTicksOf = (pid: number): number | undefined => {
  try {
    const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    // fields[0] is field 3 (state): the start time, field 22, is fields[19]
    return Number(fields[19])
  } catch {
    return undefined
  }
}

/** This boot's id (empty where /proc does not say). */
export const bootId = (): string => {
  try {
    return Fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()
  } catch {
    return ""
  }
}

/**
 * The command line that runs `file args` once a line (or anything) is written on file descriptor `fd`, and exits
 * 125 without running it when the pipe closes first. `exec` keeps the pid, so the recorded pid is the command's.
 */
export const gated = (
  file: string,
  args: ReadonlyArray<string>,
  fd: number
): { readonly file: string; readonly args: ReadonlyArray<string> } => ({
  file: "/bin/sh",
  args: ["-c", `IFS= read -r _ <&${fd} || exit 125; exec ${fd}<&-; exec "$@"`, "armature-gate", file, ...args]
})

/** Runs `effect` with `recorder` told of the processes its calls start. */
export const recording =
  (recorder: Recorder) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.locally(effect, currentRecorder, recorder)
