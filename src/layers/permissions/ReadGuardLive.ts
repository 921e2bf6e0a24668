/**
 * The ReadGuard built from the deny rules in Settings (files, flags and the session's rules): `Read(...)` rules, and
 * the searching tool's own (`Grep(...)`, `Glob(...)`). For Grep (which prints contents) and MCP resources, ask rules
 * too (the built-in secret protection among them): a search cannot ask in the middle, so it leaves those files out
 * and says so; reading one with Read asks. Glob lists names, which no ask rule protects. Paths are compared in every form they can be opened as: the
 * rule's anchor as written and with symlinks resolved, the visited path as found under the searched root and
 * translated under the root's resolved form. Deny rules match case-insensitively, as in the permission policy.
 */
import * as NodeFs from "node:fs"
import * as Path from "node:path"
import { Effect, Layer, Option, Ref } from "effect"
import ignore, { type Ignore } from "ignore"
import * as PermissionRule from "../../domain/PermissionRule.js"
import { reader } from "../../services/LiveSettings.js"
import { type Check, ReadGuard, type SearchScope } from "../../services/ReadGuard.js"
import { Settings } from "../../services/Settings.js"

/** Resolves symlinks in the longest existing prefix of an absolute path; the rest is appended as written. */
export const realpathLoose = (path: string): string => {
  try {
    return NodeFs.realpathSync(path)
  } catch {
    const parent = Path.dirname(path)
    return parent === path ? path : Path.join(realpathLoose(parent), Path.basename(path))
  }
}

interface Compiled {
  readonly label: string
  readonly anchors: ReadonlyArray<string>
  /** undefined: the anchor and everything under it. */
  readonly matcher: Ignore | undefined
}

/** How the note names an ask rule: a file it covers is left out, and reading it with Read asks. */
export const askLabel = (rule: PermissionRule.Rule): string => `${askMark}${rule.text} in ${rule.source}`

/** The mark an ask rule's label starts with (FileWalker.skippedNote tells them apart from deny rules). */
export const askMark = "ask:"

const compileRule = (rule: PermissionRule.Rule, cwd: string, home: string): Compiled => {
  const { anchor, pattern } = PermissionRule.pathPattern(rule, { cwd, home })
  return {
    label: rule.behavior === "ask" ? askLabel(rule) : `${rule.text} in ${rule.source}`,
    anchors: [...new Set([anchor, realpathLoose(anchor)])],
    matcher: pattern === "" ? undefined : ignore({ ignorecase: true }).add(pattern)
  }
}

const matches = (rule: Compiled, path: string, isDirectory: boolean): boolean =>
  rule.anchors.some((anchor) => {
    if (!PermissionRule.isInside(anchor, path)) return false
    if (rule.matcher === undefined) return true
    const rel = Path.relative(anchor, path)
    return rel !== "" && rule.matcher.ignores(isDirectory ? `${rel}/` : rel)
  })

/** Whether a rule can match anything at or below `root` (its anchor is above, at or below the root). */
const concerns = (rule: Compiled, roots: ReadonlyArray<string>): boolean =>
  rule.anchors.some((anchor) =>
    roots.some((root) => PermissionRule.isInside(anchor, root) || PermissionRule.isInside(root, anchor))
  )

/** The check for one search over the given deny rules, or undefined when none can apply under its root. */
export const checkFor = (
  rules: ReadonlyArray<PermissionRule.Rule>,
  scope: SearchScope,
  home: string
): Check | undefined => {
  // Ask rules too, except for Glob (names are free): a search cannot stop to ask, so it leaves such files out.
  const relevant = rules.filter(
    (r) =>
      (r.behavior === "deny" || (r.behavior === "ask" && scope.tool !== "Glob")) &&
      r.content !== undefined &&
      (r.tool === "Read" || r.tool === scope.tool)
  )
  if (relevant.length === 0) return undefined
  const root = Path.resolve(scope.cwd, scope.root)
  const realRoot = realpathLoose(root)
  const roots = realRoot === root ? [root] : [root, realRoot]
  const compiled = relevant
    .filter(
      (r) =>
        // An ask rule naming the searched path itself was asked about before the search ran (the policy matches it).
        r.behavior !== "ask" ||
        !roots.some((form) => {
          const rule = compileRule(r, scope.cwd, home)
          return matches(rule, form, false) || matches(rule, form, true)
        })
    )
    .map((r) => compileRule(r, scope.cwd, home))
    .filter((r) => concerns(r, roots))
  if (compiled.length === 0) return undefined
  const forms = (path: string): ReadonlyArray<string> =>
    realRoot !== root && PermissionRule.isInside(root, path) ? [path, realRoot + path.slice(root.length)] : [path]
  return (path, isDirectory) => {
    const all = forms(path)
    for (const rule of compiled) {
      if (all.some((form) => matches(rule, form, isDirectory))) return rule.label
    }
    return undefined
  }
}

/** Builds the guard from Settings. */
export const make = Effect.gen(function* () {
  const settings = yield* Settings
  // the rules now: live settings apply from the next search
  const current = yield* reader
  return ReadGuard.of({
    forSearch: (scope) =>
      Effect.map(Effect.zip(current, Ref.get(settings.sessionRules)), ([{ permissions }, session]) =>
        checkFor([...permissions.deny, ...permissions.ask, ...session], scope, settings.home)
      )
  })
})

/** The ReadGuard from the session's Settings. */
export const layer = Layer.effect(ReadGuard, make)

/**
 * The guard a search tool uses: the ReadGuard service when one is provided, else one built from Settings when they
 * are, else none (a tool set composed without settings has no deny rules to apply).
 */
export const current: Effect.Effect<ReadGuard["Type"]> = Effect.gen(function* () {
  const given = yield* Effect.serviceOption(ReadGuard)
  if (Option.isSome(given)) return given.value
  const settings = yield* Effect.serviceOption(Settings)
  if (Option.isNone(settings)) return ReadGuard.of({ forSearch: () => Effect.succeed(undefined) })
  return yield* Effect.provideService(make, Settings, settings.value)
})
