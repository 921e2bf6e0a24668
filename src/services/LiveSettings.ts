/**
 * Settings that follow their files (docs/library.md, "Live configuration"): the merged settings as they are now,
 * and what each reload did. Readers take `current` at every use, so an edit applies from the next call. Without
 * this service the Settings service's values, read at start, hold for the whole session.
 */
import { Context, Effect, Option, type Queue, type Scope } from "effect"
import type { HooksConfig } from "../domain/HookConfig.js"
import type * as SettingsDomain from "../domain/Settings.js"
import { Settings } from "./Settings.js"

/** The merged settings at one moment. */
export interface Snapshot {
  readonly permissions: SettingsDomain.Permissions
  readonly hooks: HooksConfig
  /** Every merged top-level key, unknown ones kept. */
  readonly settings: SettingsDomain.SettingsFile
  /** The sources that were read, lowest precedence first. */
  readonly sources: ReadonlyArray<string>
}

/** What a reload did: a changed file's settings took effect, or a broken file was refused. */
export type SettingsEvent =
  | {
      readonly _tag: "Applied"
      /** The file whose change started the reload. */
      readonly file: string
      readonly sources: ReadonlyArray<string>
    }
  | {
      readonly _tag: "Rejected"
      /** The file that is broken, when the error names one. */
      readonly file: string
      /** The validation error, naming the file and the line (JSON) or the key path (shape). */
      readonly message: string
    }

/** The port. */
export class LiveSettings extends Context.Tag("armature/LiveSettings")<
  LiveSettings,
  {
    /** The last good settings. */
    readonly current: Effect.Effect<Snapshot>
    /** The same, for a synchronous reader (the pool's whole-tool deny filter, `PermissionPolicy.isToolDenied`). */
    readonly latest: () => Snapshot
    /** A queue of the reload events from now on, for the life of the scope. */
    readonly subscribe: Effect.Effect<Queue.Dequeue<SettingsEvent>, never, Scope.Scope>
    /** Reads the files now, as if `file` had changed (the watcher calls this after each quiet period). */
    readonly reload: (file: string) => Effect.Effect<void>
    /**
     * Adds a step run at each reload that changes the settings, with the new settings, before they are put in
     * force and announced: a part that needs time to follow them (the sandbox starting its runtime) is ready by
     * the next call. The step is removed when the scope closes.
     */
    readonly beforeApply: (step: (next: Snapshot) => Effect.Effect<void>) => Effect.Effect<void, never, Scope.Scope>
  }
>() {}

/** The snapshot part of the Settings service. */
export const snapshotOf = (settings: Settings["Type"]): Snapshot => ({
  permissions: settings.permissions,
  hooks: settings.hooks,
  settings: settings.settings,
  sources: settings.sources
})

/**
 * The settings now: the live ones when they are watched, else those the Settings service read at start. Resolve
 * it once (when a layer is built) and run the returned effect at every use.
 */
export const reader: Effect.Effect<Effect.Effect<Snapshot>, never, Settings> = Effect.gen(function* () {
  const settings = yield* Settings
  const live = yield* Effect.serviceOption(LiveSettings)
  return Option.match(live, {
    onNone: () => Effect.succeed(snapshotOf(settings)),
    onSome: (l) => l.current
  })
})
