/**
 * Child processes, as the engine needs them (see docs/processes.md): a command started as the leader of a process
 * group of its own, tagged so that its descendants can be found even when they leave the group; the whole group
 * and every tagged process killed together; and a scan for what is left of a group. Bash, background shells,
 * command hooks and durable sessions start and kill processes only through this service. `Armature.layer` provides
 * the Node implementation (layers/process/ProcessGroup.ts); a test may provide a fake that records what is spawned.
 */
import type { Readable, Writable } from "node:stream"
import { Context, type Effect, Schema, type Scope } from "effect"

/** How the leader of a group ended. */
export interface Exit {
  /** The exit code; `null` when the leader was killed by a signal. */
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

/** The process could not be started (missing binary, missing working directory, …). */
export class SpawnError extends Schema.TaggedError<SpawnError>()("SpawnError", {
  command: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Could not start ${this.command}: ${this.reason}`
  }
}

/** What a standard descriptor of the child is connected to: a pipe, nothing, ours, or an open file descriptor. */
export type Stdio = "pipe" | "ignore" | "inherit" | number

/** What to start. */
export interface SpawnOptions {
  readonly file: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  /** The environment (default: this process's); the tag is added to it. */
  readonly env?: NodeJS.ProcessEnv | undefined
  /** stdin, stdout and stderr (a single value for all three). */
  readonly stdio: "pipe" | "ignore" | "inherit" | ReadonlyArray<Stdio>
  /** Milliseconds between SIGTERM and SIGKILL (default 2000). */
  readonly killGraceMs?: number | undefined
  /**
   * When the scope closes after the child exited on its own: `"leftovers"` (default) kills only when the group
   * still has a member or the stdio pipes are still held — cheap checks, no `/proc` scan on a clean end;
   * `"always"` runs the full kill (for background shells, whose end is never on a hot path).
   */
  readonly onRelease?: "leftovers" | "always" | undefined
  /**
   * Adds an extra pipe as file descriptor 3 (the canary) that the child and its descendants inherit: it closes
   * only when the last of them is gone, so `closed` also waits for descendants that redirected their output away
   * (`nohup cmd >/dev/null 2>&1 &`), and a leftover is noticed without reading `/proc`. The child may write a short
   * report on it (Bash writes its final directory); the first 4 KiB are kept, see `Handle.canaryText`.
   */
  readonly canary?: boolean | undefined
}

/** A running child and everything it started. */
export interface Handle {
  /** The leader's pid, which is also the group id. */
  readonly pid: number
  /** The value of the tag variable in the child's environment and its descendants'. */
  readonly tag: string
  /** The child's standard streams, for those given as `"pipe"`. */
  readonly stdin: Writable | null
  readonly stdout: Readable | null
  readonly stderr: Readable | null
  /** Completes when the leader exits (its stdio may still be open in other processes). */
  readonly exited: Effect.Effect<Exit>
  /** Completes when every stdio pipe of the child is closed, i.e. no process holds them any more. */
  readonly closed: Effect.Effect<void>
  /**
   * Kills the group and every tagged process: SIGTERM, then SIGKILL after the grace period, repeated until none
   * is left (bounded). Uninterruptible; a second kill waits for the first.
   */
  readonly kill: Effect.Effect<void>
  /** True while the leader's group has a live member. */
  readonly isAlive: () => boolean
  /** What the child wrote on the canary (fd 3) so far, at most 4 KiB; empty without a canary. */
  readonly canaryText: () => string
  /** True when the leader has exited, its pipes are closed and its group is empty: nothing is known to be left. */
  readonly endedCleanly: () => boolean
}

/** The process port. */
export interface ProcessesService {
  /**
   * Starts a process as the leader of a new process group, tagged for the kill. When the scope closes, a child
   * still running — or one that left something behind (see `onRelease`) — is killed with everything it started.
   */
  readonly spawn: (options: SpawnOptions) => Effect.Effect<Handle, SpawnError, Scope.Scope>
  /**
   * Kills group `pgid` (when above 1) and every process carrying `tag` started at or after `sinceTicks`: SIGTERM,
   * `graceMs`, then SIGKILL rounds until none is left (bounded). Uninterruptible.
   */
  readonly killAll: (
    pgid: number,
    tag: string | undefined,
    graceMs?: number | undefined,
    sinceTicks?: number | undefined
  ) => Effect.Effect<void>
  /** The live processes that are members of group `pgid` or carry `tag` (started at or after `sinceTicks`). */
  readonly findDescendants: (
    pgid: number,
    tag: string | undefined,
    sinceTicks?: number | undefined
  ) => ReadonlyArray<number>
  /** True while the process group has a live member. */
  readonly groupExists: (pgid: number) => boolean
  /** Milliseconds between SIGTERM and SIGKILL when none is given. */
  readonly defaultKillGraceMs: number
}

/** The process port's tag. */
export class Processes extends Context.Tag("armature/Processes")<Processes, ProcessesService>() {}
