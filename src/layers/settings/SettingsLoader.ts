/**
 * Reads the settings sources (docs/permissions.md) with the FileSystem service and merges them:
 * `~/.claude/settings.json`, `<project>/.claude/settings.json`, `<project>/.claude/settings.local.json`, `--settings`
 * files, then CLI flags.
 */
import * as Os from "node:os"
import * as Path from "node:path"
import { FileSystem } from "@effect/platform"
import { Effect, Either, Layer, Option, Ref, Schema } from "effect"
import type { PermissionMode } from "../../domain/Permission.js"
import * as PermissionRule from "../../domain/PermissionRule.js"
import * as SettingsDomain from "../../domain/Settings.js"
import * as SettingsKeys from "../../domain/SettingsKeys.js"
import { Settings } from "../../services/Settings.js"

/** What to read. */
export interface LoadOptions {
  readonly projectDir: string
  /** Defaults to `$HOME`, then the OS home directory. */
  readonly home?: string | undefined
  /** Which of user/project/local are read (`--setting-sources`); all three by default. */
  readonly settingSources?: ReadonlyArray<SettingsDomain.SettingSourceKind> | undefined
  /** `--settings` files, in order; relative paths are resolved against `cwd`. */
  readonly settingsFiles?: ReadonlyArray<string> | undefined
  /** `--allowed-tools` values (each a comma or space separated rule list). */
  readonly allowedTools?: ReadonlyArray<string> | undefined
  /** `--disallowed-tools` values. */
  readonly disallowedTools?: ReadonlyArray<string> | undefined
  readonly permissionMode?: PermissionMode | undefined
  /** Where relative `--settings` paths are resolved; defaults to the project directory. */
  readonly cwd?: string | undefined
  /**
   * Whether a rule naming no built-in or MCP tool is warned about (the default). An application that registers tools
   * of its own turns it off: their names are not known before the registry is built, and a rule naming one is right.
   */
  readonly warnUnknownTools?: boolean | undefined
}

/** A `--setting-sources` value that names an unknown source. */
export class SettingSourcesError extends Schema.TaggedError<SettingSourcesError>()("SettingSourcesError", {
  value: Schema.String
}) {
  override get message(): string {
    return `Invalid --setting-sources ${JSON.stringify(this.value)}: expected a comma separated list of user, project, local`
  }
}

/** Parses `--setting-sources user,project,local`. */
export const parseSettingSources = (
  value: string
): Either.Either<ReadonlyArray<SettingsDomain.SettingSourceKind>, SettingSourcesError> => {
  const parts = value
    .split(/[,\s]+/)
    .map((s) => s.trim())
    .filter((s) => s !== "")
  const kinds: Array<SettingsDomain.SettingSourceKind> = []
  for (const part of parts) {
    if (part !== "user" && part !== "project" && part !== "local")
      return Either.left(new SettingSourcesError({ value }))
    if (!kinds.includes(part)) kinds.push(part)
  }
  return Either.right(kinds)
}

/** The home directory: `$HOME`, else the OS's. */
export const defaultHome = (): string => process.env.HOME ?? Os.homedir()

/** A rule for a tool no one may register would match nothing: each is named once, with where it came from. */
const unknownToolWarnings = (file: string, rules: ReadonlyArray<string>, warn: boolean): ReadonlyArray<string> =>
  warn ? rules.flatMap((rule) => PermissionRule.unknownToolWarning(file, rule) ?? []) : []

/** An allow rule spelt so that it matches next to nothing (`Bash(rm: *)`): each is named, with how to write it. */
const allowSpellingWarnings = (file: string, rules: ReadonlyArray<string>): ReadonlyArray<string> =>
  rules.flatMap((rule) => PermissionRule.allowSpellingWarning(file, rule) ?? [])

const readSource = (
  file: string,
  root: string,
  base: string,
  required: boolean,
  warnings: Array<string>,
  warnUnknownTools: boolean
) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(file).pipe(
      Effect.map(Option.some),
      Effect.catchAll((error) =>
        !required && error._tag === "SystemError" && error.reason === "NotFound"
          ? Effect.succeed(Option.none<string>())
          : Effect.fail(new SettingsDomain.SettingsReadError({ file, reason: error.message }))
      )
    )
    if (Option.isNone(text)) return Option.none<SettingsDomain.Source>()
    const settings = yield* SettingsDomain.decode(file, text.value)
    // a misspelt key would be ignored without a word: each unknown one is named, with the key it was likely meant as
    for (const key of SettingsKeys.unknownKeys(settings)) warnings.push(SettingsKeys.warning(file, key))
    const permissions = settings.permissions
    warnings.push(
      ...unknownToolWarnings(
        file,
        [...(permissions?.allow ?? []), ...(permissions?.ask ?? []), ...(permissions?.deny ?? [])],
        warnUnknownTools
      ),
      ...allowSpellingWarnings(file, permissions?.allow ?? [])
    )
    return Option.some<SettingsDomain.Source>({ name: file, root, base, settings })
  })

const flagSource = (
  name: string,
  root: string,
  permissions: SettingsDomain.PermissionsSection
): SettingsDomain.Source => ({ name, root, base: root, settings: { permissions } })

/** The settings files `options` read, lowest precedence first: path, rule root, base directory, whether required. */
export const sourceFiles = (
  options: LoadOptions
): ReadonlyArray<readonly [file: string, root: string, base: string, required: boolean]> => {
  const home = options.home ?? defaultHome()
  const projectDir = Path.resolve(options.projectDir)
  const cwd = Path.resolve(options.cwd ?? projectDir)
  const kinds = options.settingSources ?? ["user", "project", "local"]
  const files: Array<readonly [string, string, string, boolean]> = []
  if (kinds.includes("user")) files.push([Path.join(home, ".claude", "settings.json"), home, home, false])
  if (kinds.includes("project")) {
    files.push([Path.join(projectDir, ".claude", "settings.json"), projectDir, projectDir, false])
  }
  if (kinds.includes("local")) {
    files.push([Path.join(projectDir, ".claude", "settings.local.json"), projectDir, projectDir, false])
  }
  for (const file of options.settingsFiles ?? []) {
    const resolved = Path.resolve(cwd, file)
    files.push([resolved, projectDir, Path.dirname(resolved), true])
  }
  return files
}

/**
 * Reads and merges every source; missing standard files are skipped (a missing `--settings` file fails), malformed ones
 * fail naming the file and JSON path. What deserves a warning (unknown keys) is returned as `warnings`, not logged:
 * the caller decides which it has already said.
 */
export const load = (options: LoadOptions) =>
  Effect.gen(function* () {
    const home = options.home ?? defaultHome()
    const projectDir = Path.resolve(options.projectDir)
    const files = sourceFiles(options)
    const sources: Array<SettingsDomain.Source> = []
    const warnings: Array<string> = []
    const warnUnknownTools = options.warnUnknownTools !== false
    for (const [file, root, base, required] of files) {
      const source = yield* readSource(file, root, base, required, warnings, warnUnknownTools)
      if (Option.isSome(source)) sources.push(source.value)
    }
    const allowed = (options.allowedTools ?? []).flatMap(PermissionRule.splitRuleList)
    const disallowed = (options.disallowedTools ?? []).flatMap(PermissionRule.splitRuleList)
    warnings.push(
      ...unknownToolWarnings("--allowed-tools", allowed, warnUnknownTools),
      ...unknownToolWarnings("--disallowed-tools", disallowed, warnUnknownTools),
      ...allowSpellingWarnings("--allowed-tools", allowed)
    )
    if (allowed.length > 0) sources.push(flagSource("--allowed-tools", projectDir, { allow: allowed }))
    if (disallowed.length > 0) sources.push(flagSource("--disallowed-tools", projectDir, { deny: disallowed }))
    if (options.permissionMode !== undefined) {
      sources.push(flagSource("--permission-mode", projectDir, { defaultMode: options.permissionMode }))
    }
    const merged = yield* SettingsDomain.merge(sources)
    return { merged, home, projectDir, warnings: warnings as ReadonlyArray<string> }
  })

/** Makes the Settings service from files and flags. */
export const make = (options: LoadOptions) =>
  Effect.gen(function* () {
    const { home, merged, projectDir, warnings } = yield* load(options)
    for (const warning of warnings) yield* Effect.logWarning(warning)
    return Settings.of({
      permissions: merged.permissions,
      hooks: merged.hooks,
      settings: merged.settings,
      sources: merged.sources,
      home,
      projectDir,
      sessionRules: yield* Ref.make<ReadonlyArray<PermissionRule.Rule>>([]),
      warnings
    })
  })

/** The Settings service, loaded from files and flags. */
export const layer = (options: LoadOptions) => Layer.effect(Settings, make(options))
