/**
 * The sandbox's filesystem and network policy, derived from the permission rules the way Claude Code derives it:
 * the working directories and the paths of `Edit(...)` allow rules are writable, `Edit(...)` deny rules and the
 * protected paths (src/domain/ProtectedPaths.ts) below each writable directory are not,
 * `Read(...)` deny rules are unreadable, and `WebFetch(domain:…)` rules are the allowed and denied hosts; the
 * `sandbox.filesystem` and `sandbox.network` lists add to them. See docs/sandbox.md.
 */
import * as Path from "node:path"
import * as PermissionRule from "./PermissionRule.js"
import * as ProtectedPaths from "./ProtectedPaths.js"
import type * as Sandbox from "./Sandbox.js"
import type { Policy } from "./Sandbox.js"
import type * as Settings from "./Settings.js"

/** Where the policy is derived from. */
export interface PolicyInput {
  readonly permissions: Settings.Permissions
  readonly section: Sandbox.SandboxSection
  readonly cwd: string
  readonly home: string
  /** Directories no sandboxed command may write even inside a writable one (settings, Armature's state). */
  readonly protectedDirs: ReadonlyArray<string>
  /**
   * True for a path that exists and is not a directory: a protected path below it cannot exist (`.git/hooks` when
   * `.git` is a worktree's file), and a bind mount there would stop the sandbox from starting. Default: none.
   */
  readonly isFile?: ((path: string) => boolean) | undefined
}

/**
 * The protected paths (src/domain/ProtectedPaths.ts) below each writable directory, minus those below an
 * existing file.
 */
export const protectedWrites = (
  roots: ReadonlyArray<string>,
  isFile: (path: string) => boolean = () => false
): ReadonlyArray<string> =>
  roots.flatMap((root) =>
    ProtectedPaths.sandboxDenyWrites(root).filter((target) => {
      for (let dir = Path.dirname(target); dir.length > root.length; dir = Path.dirname(dir)) {
        if (isFile(dir)) return false
      }
      return true
    })
  )

const globChars = /[*?[\]{}!]/

/** A rule's path: a literal absolute path, or a glob (absolute) when the pattern has wildcards. */
const rulePath = (
  rule: PermissionRule.Rule,
  bases: PermissionRule.PathBases
): { readonly path: string; readonly glob: boolean } => {
  const { anchor, pattern } = PermissionRule.pathPattern(rule, bases)
  if (pattern === "") return { path: anchor, glob: false }
  const anchored = pattern.startsWith("/")
  const rest = pattern
    .replace(/^\/+/, "")
    .replace(/\/+$/, "")
    .replace(/\/\*\*$/, "")
  // A bare name without a slash matches at any depth, as in gitignore.
  const full = anchored ? rest : `**/${rest}`
  return { path: Path.join(anchor, full), glob: globChars.test(full) }
}

/** A path from the `sandbox.filesystem` lists: `~` is the home directory, relative paths are under `cwd`. */
const settingPath = (path: string, cwd: string, home: string): string =>
  path === "~" ? home : path.startsWith("~/") ? Path.join(home, path.slice(2)) : Path.resolve(cwd, path)

const unique = (items: ReadonlyArray<string>): ReadonlyArray<string> => [...new Set(items)]

const isDomainRule = (rule: PermissionRule.Rule): boolean =>
  rule.tool === "WebFetch" && rule.content !== undefined && rule.content.startsWith("domain:")

const isEditRule = (rule: PermissionRule.Rule): boolean =>
  rule.content !== undefined && PermissionRule.editTools.has(rule.tool)

/** Derives the policy (pure: no file system access). */
export const derive = (input: PolicyInput): Policy => {
  const { cwd, home, permissions, section } = input
  const bases = { cwd, home }
  const warnings: Array<string> = []
  const literal = (rule: PermissionRule.Rule, what: string): ReadonlyArray<string> => {
    const { glob, path } = rulePath(rule, bases)
    if (!glob) return [path]
    warnings.push(
      `${rule.text} in ${rule.source}: a pattern with wildcards cannot be ${what} in the sandbox on Linux (it needs a literal path); the file tools still apply the rule`
    )
    return []
  }
  const fs = section.filesystem
  const network = section.network
  const fromSettings = (list: ReadonlyArray<string> | undefined) => (list ?? []).map((p) => settingPath(p, cwd, home))
  const allowWrite = unique([
    cwd,
    ...permissions.additionalDirectories,
    ...permissions.allow.filter(isEditRule).flatMap((r) => literal(r, "made writable")),
    ...fromSettings(fs?.allowWrite)
  ])
  return {
    allowWrite,
    denyWrite: unique([
      ...input.protectedDirs,
      ...protectedWrites(allowWrite, input.isFile),
      ...permissions.deny.filter(isEditRule).flatMap((r) => literal(r, "made read-only")),
      ...fromSettings(fs?.denyWrite)
    ]),
    denyRead: unique([
      ...permissions.deny
        .filter((r) => r.content !== undefined && (r.tool === "Read" || PermissionRule.readTools.has(r.tool)))
        .map((r) => rulePath(r, bases).path),
      ...fromSettings(fs?.denyRead)
    ]),
    allowRead: unique(fromSettings(fs?.allowRead)),
    allowedDomains: unique([
      ...permissions.allow.filter(isDomainRule).map((r) => r.content!.slice("domain:".length)),
      ...(network?.allowedDomains ?? [])
    ]),
    deniedDomains: unique([
      ...permissions.deny.filter(isDomainRule).map((r) => r.content!.slice("domain:".length)),
      ...(network?.deniedDomains ?? [])
    ]),
    allowUnixSockets: network?.allowUnixSockets ?? [],
    allowAllUnixSockets: network?.allowAllUnixSockets ?? false,
    allowLocalBinding: network?.allowLocalBinding ?? false,
    enableWeakerNestedSandbox: section.enableWeakerNestedSandbox ?? false,
    warnings
  }
}
