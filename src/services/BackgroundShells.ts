/**
 * Shell commands started with `run_in_background`: started, read incrementally and killed by id (the Bash,
 * BashOutput and KillShell tools; docs/tools.md). Every shell still running is killed when the service's scope closes.
 */
import { Context, type Effect, Schema, type Scope } from "effect"
import type { SpawnError } from "./Processes.js"

/** No background shell has this id. */
export class UnknownShell extends Schema.TaggedError<UnknownShell>()("UnknownShell", {
  message: Schema.String,
  id: Schema.String
}) {}

/** A shell's log (or the folder of logs) could not be created, opened or read. */
export class ShellLogFailed extends Schema.TaggedError<ShellLogFailed>()("ShellLogFailed", {
  message: Schema.String,
  path: Schema.String
}) {}

/** What the service fails with: an unknown id, a log it could not use, or a shell that could not be started. */
export type ShellFailure = UnknownShell | ShellLogFailed | SpawnError

/** Where a background shell is. */
export type ShellStatus =
  | { readonly _tag: "running" }
  | { readonly _tag: "completed"; readonly exitCode: number | null; readonly signal: string | null }
  | { readonly _tag: "killed" }

/** A background shell as the tools see it. */
export interface ShellInfo {
  readonly id: string
  readonly command: string
  readonly cwd: string
  readonly pid: number
  /** `<state dir>/bash/{id}.log`: stdout and stderr, interleaved as written. */
  readonly logPath: string
  readonly status: ShellStatus
}

/** Output read from a background shell. */
export interface ShellOutput {
  readonly info: ShellInfo
  /** New output since the previous read (filtered, when a filter was given). */
  readonly text: string
  /** Bytes of new output skipped because there was more than one read may return. */
  readonly skippedBytes: number
  /** Lines dropped by the filter. */
  readonly filteredLines: number
}

/** The port. */
export class BackgroundShells extends Context.Tag("armature/BackgroundShells")<
  BackgroundShells,
  {
    /**
     * Starts a shell. `wrap`, when given, turns the command into the line actually run (the sandbox's); it runs in
     * the shell's own scope, which stays open until the shell is killed or the service ends.
     */
    readonly start: <E = never>(
      command: string,
      cwd: string,
      wrap?: ((command: string) => Effect.Effect<string, E, Scope.Scope>) | undefined
    ) => Effect.Effect<ShellInfo, ShellLogFailed | SpawnError | E>
    /** New output since the last read; with `filter`, only the lines it matches (the others are consumed). */
    readonly read: (id: string, filter?: RegExp) => Effect.Effect<ShellOutput, UnknownShell | ShellLogFailed>
    /**
     * Kills the shell's process group (SIGTERM, SIGKILL after 2 s) and waits until it is gone; fails when the id
     * is unknown. `wasRunning` is false when the command had already completed (leftover children are killed too).
     */
    readonly kill: (
      id: string
    ) => Effect.Effect<{ readonly info: ShellInfo; readonly wasRunning: boolean }, UnknownShell>
    readonly list: Effect.Effect<ReadonlyArray<ShellInfo>>
  }
>() {}
