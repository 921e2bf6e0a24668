/**
 * The effective settings of a session (every settings file and flag merged; see docs/permissions.md) and the
 * session rules added by "always" approvals.
 */
import { Context, Effect, Layer, Ref } from "effect"
import type { HooksConfig } from "../domain/HookConfig.js"
import type { PermissionMode } from "../domain/Permission.js"
import type * as PermissionRule from "../domain/PermissionRule.js"
import type * as SettingsDomain from "../domain/Settings.js"

/** The port. */
export class Settings extends Context.Tag("armature/Settings")<
  Settings,
  {
    /** The merged permission settings (CLI flags included). */
    readonly permissions: SettingsDomain.Permissions
    readonly hooks: HooksConfig
    /** Every merged top-level key, unknown ones kept. */
    readonly settings: SettingsDomain.SettingsFile
    /** The sources that were read, lowest precedence first. */
    readonly sources: ReadonlyArray<string>
    /** The home directory `~/p` rules are anchored at. */
    readonly home: string
    readonly projectDir: string
    /** Rules added during the session ("always" approvals); the policy consults them on every decision. */
    readonly sessionRules: Ref.Ref<ReadonlyArray<PermissionRule.Rule>>
    /**
     * What reading the files found worth a warning (an unknown key, with the key it was likely meant as), already
     * logged once; live settings warn again only about problems that were not there before.
     */
    readonly warnings?: ReadonlyArray<string> | undefined
  }
>() {}

/** Options for settings given directly (tests, embedding applications). */
export interface StaticOptions {
  readonly allow?: ReadonlyArray<PermissionRule.Rule>
  readonly ask?: ReadonlyArray<PermissionRule.Rule>
  readonly deny?: ReadonlyArray<PermissionRule.Rule>
  readonly defaultMode?: PermissionMode
  readonly additionalDirectories?: ReadonlyArray<string>
  readonly home: string
  readonly projectDir: string
}

/** Settings given as values, with no files read. */
export const layerStatic = (options: StaticOptions) =>
  Layer.effect(
    Settings,
    Effect.map(Ref.make<ReadonlyArray<PermissionRule.Rule>>([]), (sessionRules) =>
      Settings.of({
        permissions: {
          allow: options.allow ?? [],
          ask: options.ask ?? [],
          deny: options.deny ?? [],
          defaultMode: options.defaultMode ?? "default",
          additionalDirectories: options.additionalDirectories ?? []
        },
        hooks: {},
        settings: {},
        sources: [],
        home: options.home,
        projectDir: options.projectDir,
        sessionRules
      })
    )
  )

/** Adds rules for the rest of the session. */
export const addSessionRules = (rules: ReadonlyArray<PermissionRule.Rule>) =>
  Effect.flatMap(Settings, (settings) => Ref.update(settings.sessionRules, (existing) => [...existing, ...rules]))
