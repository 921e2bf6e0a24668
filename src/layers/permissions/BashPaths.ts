/**
 * The paths of a Bash command checked like the file tools' paths: every path the line reads (resolved as the shell
 * and the OS would: braces, `~`, known variables, globs, redirections, `cd`, option values, symlinks) against Read
 * deny and ask rules, every path it writes against Edit and Write deny and ask rules. A glob that could match a
 * denied path is denied even when no such file exists yet; a directory whose contents are read (`grep -r`, `cp -r`)
 * and that holds a denied path needs approval; a path that cannot be known without running the line needs approval
 * when such rules exist. See docs/bash-paths.md.
 */
import * as Os from "node:os"
import type { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import type { TraceStep } from "../../domain/Permission.js"
import * as PermissionRule from "../../domain/PermissionRule.js"
import * as SecretFiles from "../../domain/SecretFiles.js"
import { mayOverlap, pathSegments, ruleCoverage } from "../../domain/shell/PathGlob.js"
import * as ShellPaths from "../shell/ShellPaths.js"
import { commandAllowRule } from "./AllowStages.js"
import type { BashPathCheck, CheckedPath, PathRule } from "./BashPathCheck.js"
import * as GitStored from "./GitStored.js"
import { type Prepared, type PreparedPath, pass, type Stage, where } from "./Prepared.js"
import { realpathLoose } from "./PreparePaths.js"
import * as TreeReach from "./TreeReach.js"

export type { BashPathCheck, CheckedPath } from "./BashPathCheck.js"

const currentUser = (): string | undefined => {
  try {
    return Os.userInfo().username
  } catch {
    return undefined
  }
}

const accessOf = (rule: PermissionRule.Rule): "read" | "write" | undefined =>
  rule.tool === "Read" ? "read" : rule.tool === "Edit" || rule.tool === "Write" ? "write" : undefined

/** Resolves a Bash call's paths and the Read/Edit deny and ask rules that apply to them. */
export const prepareBash = (options: {
  readonly steps: ReadonlyArray<import("../../services/ShellAnalyzer.js").PathStep>
  readonly cwd: string
  readonly home: string
  readonly deny: ReadonlyArray<PermissionRule.Rule>
  readonly ask: ReadonlyArray<PermissionRule.Rule>
  /** Every command of the line is known and read-only (it sets no variable, creates no repository). */
  readonly readOnly?: boolean | undefined
}): Effect.Effect<
  { readonly paths: ReadonlyArray<PreparedPath>; readonly check: BashPathCheck },
  never,
  FileSystem.FileSystem
> =>
  Effect.gen(function* () {
    const resolved = yield* ShellPaths.resolve(options.steps, {
      cwd: options.cwd,
      home: options.home,
      user: currentUser()
    })
    const rules: Array<PathRule> = []
    for (const rule of [...options.deny, ...options.ask]) {
      const access = accessOf(rule)
      if (access === undefined || rule.content === undefined) continue
      const { anchor, pattern } = PermissionRule.pathPattern(rule, { cwd: options.cwd, home: options.home })
      const resolved = yield* realpathLoose(anchor)
      const coverage = ruleCoverage(resolved, pattern, true)
      rules.push({ rule, anchor: resolved, pattern, access, coverage, lowerAnchor: resolved.toLowerCase() })
    }
    // A program's own configuration files (implicit reads) are checked against Read rules only.
    const paths = resolved.paths
      .filter((p) => p.implicit !== true)
      .map((p) => ({
        given: p.given,
        forms: p.forms,
        ...(p.access === "write" && p.redirect !== true ? { deviceOk: false } : {})
      }))
    // git is asked what it stores only when a Read rule could apply to what a git command prints.
    const storedByDir = new Map<string, ReadonlyArray<string> | undefined>()
    const readRules = rules.filter((r) => r.access === "read")
    // A tree is walked only when nothing in the line writes into it, above it or somewhere unknown (such a write
    // may create or move in what the walk would miss); `cp -r src out` writes only beside the tree it reads.
    const writes =
      resolved.paths.some((p) => p.access === "write") || resolved.unresolved.some((u) => u.access === "write")
    const writtenForms = resolved.paths.filter((p) => p.access === "write").flatMap((p) => p.forms)
    const unknownWrite = resolved.unresolved.some((u) => u.access === "write")
    const within = (path: string, dir: string) => path === dir || path.startsWith(dir.endsWith("/") ? dir : `${dir}/`)
    const writtenAround = (tree: string) => writtenForms.some((w) => within(w, tree) || within(tree, w))
    const budget: TreeReach.Budget = { left: TreeReach.maxEntries }
    const covered = (path: string) => readRules.some((rule) => covers(rule, path))
    const checked =
      readRules.length > 0
        ? resolved.paths.map((p): CheckedPath => {
            if (p.access !== "read") return p
            if (p.tracked === true) {
              // A pathspec outside any repository (`:/secrets`, git's magic for the top, read as `/secrets`) is
              // still one of the repository the command runs in: what that one stores counts.
              const named = GitStored.nearestDirectory(p.forms[0] ?? p.given)
              // `git grep` run outside any repository fails before reading anything (a read-only line cannot
              // create one first); git itself says whether its directory is outside one and it would not fall back.
              if (
                p.repositoryOnly !== undefined &&
                options.readOnly === true &&
                GitStored.failsOutsideRepository(GitStored.nearestDirectory(p.repositoryOnly))
              )
                return { ...p, stored: [] }
              const dir = GitStored.topLevel(named) === undefined ? options.cwd : named
              if (!storedByDir.has(dir)) storedByDir.set(dir, GitStored.storedPaths(dir))
              const stored = storedByDir.get(dir)
              return { ...p, stored: p.listed === undefined ? stored : listedStored(p.listed, dir, stored) }
            }
            if (!p.recursive || unknownWrite || p.forms.length !== 1 || writtenAround(p.forms[0])) return p
            // Links inside the tree are kept as links unless a configuration file the line or the process may
            // name adds an option that follows them (`RIPGREP_CONFIG_PATH`).
            const kept =
              p.keepsLinks !== undefined &&
              (p.keepsLinks.config === undefined ||
                (options.readOnly === true && process.env[p.keepsLinks.config] === undefined))
            return {
              ...p,
              present: TreeReach.reachable(p.forms[0], p.skips, covered, budget, p.listed?.split === true, !kept)
            }
          })
        : resolved.paths
    return {
      paths,
      check: {
        paths: checked,
        unresolved: resolved.unresolved,
        rules,
        changesTree: writes,
        afterChange: resolved.afterChange,
        readAfterChange: resolved.readAfterChange
      }
    }
  })

/** A name xargs splits or unquotes: it may stand for other names (`a .env` gives `a` and `.env`). */
const splits = /[\s'"\\]/

/**
 * What git stores, as names a lister prints for xargs: unknown when xargs would split one of them into other names,
 * or when the names are relative to the repository's top and the command runs elsewhere.
 */
const listedStored = (
  listed: ShellPaths.Listed,
  dir: string,
  stored: ReadonlyArray<string> | undefined
): ReadonlyArray<string> | undefined => {
  if (stored === undefined) return undefined
  if (listed.split && stored.some((path) => splits.test(path))) return undefined
  if (listed.fromTop && GitStored.topLevel(dir) !== dir) return undefined
  return stored
}

/** True when the lower-cased path is above or below the rule's anchor (else no check can match). */
const related = (rule: PathRule, form: string): boolean => {
  const lower = form.toLowerCase()
  return lower.startsWith(rule.lowerAnchor) || rule.lowerAnchor.startsWith(lower)
}

/** True when the rule covers an existing path (whatever its case). */
const covers = (rule: PathRule, path: string): boolean =>
  related(rule, path) &&
  (PermissionRule.matchesPath(rule.anchor, rule.pattern, path, rule.rule.behavior) ||
    mayOverlap(pathSegments(path), rule.coverage, { ignoreCase: true, below: false }))

/** True when a path git stores lies in what the rule covers. */
const storesRulePath = (rule: PathRule, stored: ReadonlyArray<string>): boolean =>
  stored.some((path) => covers(rule, path))

/** Why a rule applies to a path (a match, a glob that could match, a directory read that holds a match). */
const hit = (
  rule: PathRule,
  path: CheckedPath,
  changesTree: boolean
): "match" | "glob" | "inside" | "stored" | undefined => {
  if (path.tracked === true && path.access === "read" && path.stored !== undefined) {
    // git prints only what it stores: nothing of the rule when it stores none of its paths, whatever the pathspec
    // says; else the path as named, or (pathspecs with git's magic, revisions) what the repository holds. When git
    // cannot tell (not a repository, too slow), the paths are checked as named.
    if (!storesRulePath(rule, path.stored)) return undefined
    return pathHit(rule, path, changesTree) ?? "stored"
  }
  return pathHit(rule, path, changesTree)
}

const pathHit = (rule: PathRule, path: CheckedPath, changesTree: boolean): "match" | "glob" | "inside" | undefined => {
  const behavior = rule.rule.behavior
  // A glob is expanded against the tree as it is when the line runs: when nothing on the line writes first, the
  // names it matches now (each checked below as a path of its own) are all it can match. A line that writes may
  // create a name the glob then matches: every path it could match counts.
  if (
    changesTree &&
    path.glob !== undefined &&
    mayOverlap(path.glob, rule.coverage, { ignoreCase: true, below: path.recursive })
  ) {
    return "glob"
  }
  const forms = path.forms.filter((form) => related(rule, form))
  if (forms.length === 0) return undefined
  if (forms.some((form) => PermissionRule.matchesPath(rule.anchor, rule.pattern, form, behavior))) return "match"
  // Deny and ask rules match whatever the case (`SECRETS/key.pem` on a case-insensitive file system).
  const segments = forms.map(pathSegments)
  if (segments.some((s) => mayOverlap(s, rule.coverage, { ignoreCase: true, below: false }))) return "match"
  if (path.recursive && segments.some((s) => mayOverlap(s, rule.coverage, { ignoreCase: true, below: true }))) {
    // Walked: only a protected path the command really reaches counts.
    if (path.present !== undefined && !path.present.some((p) => covers(rule, p))) return undefined
    return "inside"
  }
  return undefined
}

const verb = (access: ShellPaths.Access) => (access === "read" ? "reading" : access === "names" ? "listing" : "writing")

/** A rule of the built-in secret protection (it asks only where a secret's contents can really be read). */
const builtIn = (rule: PathRule): boolean => rule.rule.source === SecretFiles.source

/**
 * True when allow rules that name commands (`Bash(git status)`, `Bash(npm run test:*)`) cover every command of
 * the line: the user's allow then wins over what is only a guess about the paths a program reads.
 */
const allowNamesLine = (call: Prepared): boolean => {
  const analysis = call.analysis
  if (analysis === undefined || !analysis.parsed || analysis.dangers.length > 0 || analysis.commands.length === 0)
    return false
  return analysis.commands.every((command) => commandAllowRule(call, command)?.rule.content !== undefined)
}

/** Bash paths against Read (reads) and Edit/Write (writes) deny and ask rules. */
export const bashPathRules: Stage = (call) => {
  const check = call.bash
  if (check === undefined) return { step: "bashPaths", outcome: "skip", reason: "not a Bash command" }
  if (check.rules.length === 0) return pass("bashPaths", "no Read or Edit deny or ask rule applies to Bash paths")
  const allowed = allowNamesLine(call)
  let ask: TraceStep | undefined
  for (const rule of check.rules) {
    for (const path of check.paths) {
      if (path.access !== rule.access) continue
      const found = hit(rule, path, check.changesTree)
      if (found === undefined) continue
      // What a program no table describes does with a directory is a guess: an ask rule (the built-in secret
      // protection among them) does not override the user's allow rule for that program on a guess, and the
      // built-in protection asks only about a secret file the line names or really reaches.
      if (path.guessed === true && found === "inside" && rule.rule.behavior === "ask" && (allowed || builtIn(rule)))
        continue
      const denied = rule.rule.behavior === "deny" && found !== "inside" && found !== "stored"
      const how =
        found === "match"
          ? `${verb(path.access)} ${path.given}`
          : found === "glob"
            ? `a glob that can match a path of the rule (${path.given})`
            : found === "stored"
              ? `git printing what it stores under ${path.given}, where the repository holds paths of the rule`
              : path.access === "write"
                ? `writing anywhere below ${path.given}, which holds paths of the rule`
                : `reading the contents of ${path.given}, which holds paths of the rule`
      const step: TraceStep = {
        step: "bashPaths",
        outcome: denied ? "deny" : "ask",
        reason: denied
          ? `Bash ${how} is denied by rule ${where(rule.rule)}`
          : `Rule ${where(rule.rule)} requires approval for Bash ${how}`,
        rule: rule.rule.text,
        source: rule.rule.source
      }
      if (denied) return step
      ask ??= step
    }
  }
  if (ask !== undefined) return ask
  // A read through what an earlier command of the line may have replaced (a link it copied, moved or made) may
  // lead anywhere: the user's Read rules cannot be checked.
  const changed = check.readAfterChange[0]
  if (changed !== undefined && check.rules.some((r) => r.access === "read" && !builtIn(r))) {
    return {
      step: "bashPaths",
      outcome: "ask",
      reason: `Bash reading ${changed.given} needs approval: ${changed.by} earlier on the line may have replaced what it names (with a link that leads anywhere), so the Read rules cannot be checked`
    }
  }
  // A path only known at run time is checked against the user's rules; the built-in secret protection asks only
  // about secret files the line names or reaches, and the user's allow rules win over a guessed operand.
  const unknown = check.unresolved.find((u) =>
    check.rules.some(
      (r) => r.access === u.access && !builtIn(r) && !(allowed && u.guessed === true && r.rule.behavior === "ask")
    )
  )
  if (unknown !== undefined) {
    return {
      step: "bashPaths",
      outcome: "ask",
      reason: `Bash ${verb(unknown.access)} ${unknown.given} needs approval: ${unknown.reason}, so the Read and Edit rules cannot be checked`
    }
  }
  return pass("bashPaths", "no Bash path matches a Read or Edit deny or ask rule")
}
