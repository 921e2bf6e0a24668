/**
 * The session a set of calls belongs to: its id, directories, working-directory context and shared state.
 */
import * as Crypto from "node:crypto"
import * as Path from "node:path"
import { Context, Effect, Layer, Ref } from "effect"
import * as Tool from "../domain/Tool.js"

/** The port. */
export class Session extends Context.Tag("armature/Session")<
  Session,
  {
    readonly id: string
    /** The project root: where `.claude/settings.json` is looked for and `/p` rules are anchored. */
    readonly projectDir: string
    /** Where Armature keeps its files (persisted results, transcripts, background output). */
    readonly stateDir: string
    /** The working directory and anything else context modifiers change (SPEC §4.9). */
    readonly context: Ref.Ref<Tool.SessionContext>
    readonly state: Tool.SessionState
    readonly transcriptPath: string
  }
>() {}

/** Options for a session. */
export interface SessionOptions {
  readonly cwd: string
  readonly id?: string | undefined
  readonly projectDir?: string | undefined
  /** Defaults to `$ARMATURE_STATE_DIR`, else `<projectDir>/.armature`. */
  readonly stateDir?: string | undefined
}

/** Makes a session. */
export const make = (options: SessionOptions) =>
  Effect.gen(function* () {
    const cwd = Path.resolve(options.cwd)
    const projectDir = Path.resolve(options.projectDir ?? cwd)
    const stateDir = Path.resolve(
      options.stateDir ?? process.env.ARMATURE_STATE_DIR ?? Path.join(projectDir, ".armature")
    )
    const id = options.id ?? Crypto.randomUUID()
    return Session.of({
      id,
      projectDir,
      stateDir,
      context: yield* Ref.make<Tool.SessionContext>({ cwd }),
      state: yield* Tool.makeSessionState,
      transcriptPath: Path.join(stateDir, "transcripts", `${id}.jsonl`)
    })
  })

/** A session as a layer. */
export const layer = (options: SessionOptions) => Layer.effect(Session, make(options))
