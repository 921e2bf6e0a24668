/**
 * The session a set of calls belongs to, built from options: its id, directories, working-directory context and
 * shared state. The state directory comes from the options, else `ARMATURE_STATE_DIR`, else `<project>/.armature`
 * (domain/StatePaths.ts).
 */
import * as Crypto from "node:crypto"
import * as Path from "node:path"
import { Effect, Layer, SubscriptionRef } from "effect"
import * as StatePaths from "../../domain/StatePaths.js"
import * as Tool from "../../domain/Tool.js"
import { Session } from "../../services/Session.js"

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
    const paths = yield* StatePaths.load(projectDir, options.stateDir)
    const id = options.id ?? Crypto.randomUUID()
    return Session.of({
      id,
      projectDir,
      stateDir: paths.root,
      context: yield* SubscriptionRef.make<Tool.SessionContext>({ cwd }),
      state: yield* Tool.makeSessionState,
      transcriptPath: StatePaths.transcriptOf(paths, id)
    })
  })

/** A session as a layer. */
export const layer = (options: SessionOptions) => Layer.effect(Session, make(options))
