/**
 * Where Armature keeps its files: one state directory — the one given, else `ARMATURE_STATE_DIR`, else
 * `<project>/.armature` — and the directories under it. Every part that needs one of them resolves it here.
 */
import * as Path from "node:path"
import { Config, Effect, Option } from "effect"

/** The environment variable that moves the state directory. */
export const variable = "ARMATURE_STATE_DIR"

/** The state directory and the directories under it. */
export interface StatePaths {
  /** The state directory itself (absolute). */
  readonly root: string
  /** Durable sessions' own SQLite files (`<root>/sessions/<id>.db`). */
  readonly sessions: string
  /** Large tool results and output spills (`<root>/tool-results/`). */
  readonly toolResults: string
  /** Session transcripts (`<root>/transcripts/<id>.jsonl`). */
  readonly transcripts: string
}

/** The paths under `given`, else `fromEnv`, else `<projectDir>/.armature`; relative ones from the current directory. */
export const resolve = (projectDir: string, given?: string | undefined, fromEnv?: string | undefined): StatePaths => {
  const root = Path.resolve(given ?? fromEnv ?? Path.join(Path.resolve(projectDir), ".armature"))
  return {
    root,
    sessions: Path.join(root, "sessions"),
    toolResults: Path.join(root, "tool-results"),
    transcripts: Path.join(root, "transcripts")
  }
}

/** The transcript file of a session. */
export const transcriptOf = (paths: StatePaths, sessionId: string): string =>
  Path.join(paths.transcripts, `${sessionId}.jsonl`)

/** `resolve` with `ARMATURE_STATE_DIR` read through Effect's Config (the process environment by default). */
export const load = (projectDir: string, given?: string | undefined): Effect.Effect<StatePaths> =>
  Config.option(Config.string(variable)).pipe(
    Effect.orElseSucceed(() => Option.none<string>()),
    Effect.map((fromEnv) => resolve(projectDir, given, Option.getOrUndefined(fromEnv)))
  )

/** `resolve` with `ARMATURE_STATE_DIR` read from the process environment, for code outside an Effect. */
export const fromProcessEnv = (projectDir: string, given?: string | undefined): StatePaths =>
  resolve(projectDir, given, process.env[variable])
