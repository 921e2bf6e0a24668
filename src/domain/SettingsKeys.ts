/**
 * The keys a settings file may hold, and the ones it holds that nobody knows: a misspelt key (`"permisions"`) is
 * otherwise ignored without a word. Claude Code's own keys are known too (a project's settings.json is shared with
 * it): Armature ignores those it does not use, quietly. Only the top level and the `permissions` and `sandbox`
 * sections are checked; what lies inside other sections (hooks, env) has its own schema or is free-form.
 */

/** Keys of the top level: Armature's, then Claude Code's (documented settings.json keys). */
const topLevelKeys: ReadonlyArray<string> = [
  "permissions",
  "hooks",
  "sandbox",
  "model",
  "autoCompactThreshold",
  "maxSavedOutputBytes",
  "toolPolicies",
  "toolVersions",
  "$schema",
  "apiKeyHelper",
  "attribution",
  "allowManagedHooksOnly",
  "allowManagedPermissionRulesOnly",
  "allowedMcpServers",
  "alwaysThinkingEnabled",
  "autoUpdates",
  "autoUpdatesChannel",
  "awsAuthRefresh",
  "awsCredentialExport",
  "cleanupPeriodDays",
  "companyAnnouncements",
  "deniedMcpServers",
  "disableAllHooks",
  "disabledMcpjsonServers",
  "enableAllProjectMcpServers",
  "enabledMcpjsonServers",
  "enabledPlugins",
  "env",
  "extraKnownMarketplaces",
  "feedbackSurveyRate",
  "fileSuggestion",
  "forceLoginMethod",
  "forceLoginOrgUUID",
  "includeCoAuthoredBy",
  "language",
  "otelHeadersHelper",
  "outputStyle",
  "plansDirectory",
  "respectGitignore",
  "showTurnDuration",
  "spinnerTipsEnabled",
  "spinnerVerbs",
  "statusLine",
  "strictKnownMarketplaces",
  "subagentStatusLine",
  "terminalProgressBarEnabled"
]

/** Keys of the `permissions` section: Armature's, then Claude Code's. */
const permissionsKeys: ReadonlyArray<string> = [
  "allow",
  "ask",
  "deny",
  "defaultMode",
  "additionalDirectories",
  "protectSecrets",
  "disableBypassPermissionsMode"
]

/** Keys of the `sandbox` section (Claude Code's, which Armature reads). */
export const sandboxKeys: ReadonlyArray<string> = [
  "enabled",
  "failIfUnavailable",
  "autoAllowBashIfSandboxed",
  "excludedCommands",
  "allowUnsandboxedCommands",
  "enableWeakerNestedSandbox",
  "ignoreViolations",
  "network",
  "filesystem"
]

/** A key nobody knows, with its JSON path and the known key it was probably meant to be. */
export interface UnknownKey {
  readonly path: string
  readonly suggestion: string | undefined
}

/** The number of single-character edits (insert, delete, replace) that turn `a` into `b`. */
export const editDistance = (a: string, b: string): number => {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1))
      diagonal = above
    }
  }
  return row[b.length]
}

/** The known key nearest to `key`, when it is near enough to be a typo (a third of its letters, at least 2). */
export const suggest = (key: string, known: ReadonlyArray<string>): string | undefined => {
  let best: { key: string; distance: number } | undefined
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase())
    if (best === undefined || distance < best.distance) best = { key: candidate, distance }
  }
  return best !== undefined && best.distance <= Math.max(2, Math.floor(key.length / 3)) ? best.key : undefined
}

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const unknownIn = (section: unknown, known: ReadonlyArray<string>, prefix: string): ReadonlyArray<UnknownKey> =>
  isObject(section)
    ? Object.keys(section)
        .filter((key) => !known.includes(key))
        .map((key) => ({ path: `${prefix}${key}`, suggestion: suggest(key, known) }))
    : []

/** The keys of a settings file's JSON that no known setting has, in file order (top level first). */
export const unknownKeys = (json: unknown): ReadonlyArray<UnknownKey> => {
  if (!isObject(json)) return []
  return [
    ...unknownIn(json, topLevelKeys, ""),
    ...unknownIn(json.permissions, permissionsKeys, "permissions."),
    ...unknownIn(json.sandbox, sandboxKeys, "sandbox.")
  ]
}

/** The warning for one unknown key of `file`: one line naming both, with the likely meant key. */
export const warning = (file: string, key: UnknownKey): string => {
  const dot = key.path.lastIndexOf(".")
  const meant = key.suggestion === undefined ? "" : `${key.path.slice(0, dot + 1)}${key.suggestion}`
  return (
    `settings file ${file}: unknown key "${key.path}" is ignored` + (meant === "" ? "" : ` (did you mean "${meant}"?)`)
  )
}
