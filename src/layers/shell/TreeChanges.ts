/**
 * Paths are resolved against the tree as it is before the line runs; a command earlier on the line may change what a
 * later path names. `mv sub/hk h && cp evil h/pre-commit` writes `.git/hooks/pre-commit` when `sub/hk` is a link that
 * points there once moved, although `h/pre-commit` names nothing protected today. This finds the writes a line makes
 * after such a change, under what the change may have replaced:
 *
 * - a link maker (`ln`, `link`, `cp -s`/`-l`): every path it names may be a link afterwards;
 * - a mover or copier (`mv`, `cp`, `install`, `rsync`, `scp`): its destination (the last path it names) may be
 *   anything its sources are; when every source is a regular file now (not a link, not a directory) the destination
 *   is a regular file too, and nothing is replaced under it;
 * - an extractor or a command that rewrites the working tree (`tar`, `unzip`, `cpio`, `patch`, `git checkout`,
 *   `git switch`, `git restore`, `git stash`, `git reset`, …): anything may be replaced, every later write counts.
 *
 * `mkdir`, `touch` and `rm` create directories or files, or remove entries: no later path leads through a new link.
 * The caller asks about each write found (in every mode: see SafetyPaths). The reads found the same way
 * (`cp -r tree c && cat c/link/key`, where `tree/link` points into `secrets/`) read wherever such a link leads: the
 * caller treats them as paths only known at run time under Read rules (see BashPaths).
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Expansion from "../../domain/shell/ShellExpansion.js"
import type { PathStep } from "../../services/ShellAnalyzer.js"

/** A write whose target an earlier command of the line may have replaced. */
export interface ChangedWrite {
  readonly given: string
  /** The earlier command, as its program name (`mv`, `tar`). */
  readonly by: string
}

/** The paths of a line as ShellPaths collects them (structural, to keep this file free of a cycle). */
interface StepPath {
  readonly given: string
  readonly access: "read" | "names" | "write"
  readonly forms: ReadonlyArray<string>
  readonly step?: number | undefined
}

const linkMakers = new Set(["ln", "link"])
const movers = new Set(["mv", "cp", "install", "rsync", "scp"])
const extractors = new Set(["tar", "bsdtar", "gtar", "unzip", "cpio", "pax", "7z", "7za", "bunzip2", "ditto", "patch"])
/** git commands that rewrite files of the working tree. */
const gitRewriters = new Set([
  "checkout",
  "switch",
  "restore",
  "stash",
  "reset",
  "pull",
  "merge",
  "rebase",
  "cherry-pick",
  "revert",
  "am",
  "apply",
  "clone",
  "worktree",
  "submodule",
  "read-tree",
  "checkout-index"
])

type Kind = "links" | "moves" | "anything"

/** git's options before the subcommand that take the next word as their value (`git -c a=b checkout`). */
const gitValueOptions = new Set([
  "-C",
  "-c",
  "--git-dir",
  "--work-tree",
  "--namespace",
  "--config-env",
  "--super-prefix"
])

/** Where git's subcommand is: the first word that is neither a global option nor the value of one. */
const gitSubcommandAt = (args: ReadonlyArray<string>): number => {
  let at = 0
  while (at < args.length && args[at].startsWith("-")) at += gitValueOptions.has(args[at]) ? 2 : 1
  return at
}

/**
 * Forms of a rewriting subcommand that touch no file of the working tree: a new branch made where HEAD is
 * (`git checkout -b NAME`, `git switch -c NAME`, with no start point) and the stash's listings. Anything else
 * (a start point, another option, a path) may rewrite files.
 */
const leavesTreeAlone = (sub: string, rest: ReadonlyArray<string>): boolean => {
  if (sub === "checkout" || sub === "switch") {
    const create = sub === "checkout" ? ["-b", "-B"] : ["-c", "-C", "--create", "--force-create"]
    return rest.length === 2 && create.includes(rest[0]) && !rest[1].startsWith("-")
  }
  if (sub === "stash") return rest[0] === "list" || rest[0] === "show"
  return false
}

const program = (words: ReadonlyArray<Expansion.Template>): { readonly name: string; readonly args: Array<string> } => {
  const texts = words.map((word) => Expansion.plainText(word))
  let at = 0
  while (texts[at] === "command" || texts[at] === "builtin") at++
  const head = texts[at]
  return {
    name: head === undefined ? "" : Path.basename(head),
    args: texts.slice(at + 1).map((text) => text ?? "")
  }
}

const kindOf = (step: PathStep): { readonly kind: Kind; readonly by: string } | undefined => {
  if (step._tag !== "Command") return undefined
  const { name, args } = program(step.words)
  // `-t DIR` names the destination first: every path counts as one.
  if (movers.has(name) && args.some((a) => /^-[^-]*t/.test(a) || a.startsWith("--t")))
    return { kind: "links", by: name }
  if (linkMakers.has(name)) return { kind: "links", by: name }
  if (name === "cp" && args.some((a) => /^-[^-]*[sl]/.test(a) || a === "--symbolic-link" || a === "--link"))
    return { kind: "links", by: name }
  if (movers.has(name)) return { kind: "moves", by: name }
  if (extractors.has(name)) return { kind: "anything", by: name }
  if (name === "git") {
    const at = gitSubcommandAt(args)
    const sub = args[at]
    if (sub !== undefined && gitRewriters.has(sub) && !leavesTreeAlone(sub, args.slice(at + 1))) {
      return { kind: "anything", by: `git ${sub}` }
    }
  }
  return undefined
}

/** True when the path is a regular file now (a link to one is not: the copy of a link may be a link). */
const regularFile = (path: string): boolean => {
  try {
    return Fs.lstatSync(path).isFile()
  } catch {
    return false
  }
}

const within = (path: string, prefix: string): boolean =>
  path === prefix || path.startsWith(prefix.endsWith("/") ? prefix : `${prefix}/`)

/** The writes of the line made after a command that may replace what they name. */
export const afterChanges = (
  steps: ReadonlyArray<PathStep>,
  paths: ReadonlyArray<StepPath>
): ReadonlyArray<ChangedWrite> => changesOf(steps, paths, "write")

/** The reads of contents the line makes after a command that may replace what they name. */
export const readsAfterChanges = (
  steps: ReadonlyArray<PathStep>,
  paths: ReadonlyArray<StepPath>
): ReadonlyArray<ChangedWrite> => changesOf(steps, paths, "read")

const changesOf = (
  steps: ReadonlyArray<PathStep>,
  paths: ReadonlyArray<StepPath>,
  access: "read" | "write"
): ReadonlyArray<ChangedWrite> => {
  const changed: Array<ChangedWrite> = []
  /** Prefixes an earlier step may have replaced, with the step's program. */
  const replaced: Array<{ readonly prefix: string; readonly by: string }> = []
  let anything: string | undefined
  /** What the last command changes: it takes effect from the next command on (its own redirections open before). */
  let pending: () => void = () => {}
  steps.forEach((step, index) => {
    if (step._tag === "Command") {
      pending()
      pending = () => {}
    }
    const own = paths.filter((p) => p.step === index)
    for (const path of own) {
      if (path.access !== access) continue
      const by = anything ?? replaced.find((r) => path.forms.some((form) => within(form, r.prefix)))?.by
      if (by !== undefined) changed.push({ given: path.given, by })
    }
    const kind = kindOf(step)
    if (kind === undefined) return
    if (kind.kind === "anything") {
      pending = () => {
        anything ??= kind.by
      }
      return
    }
    if (kind.kind === "links") {
      const prefixes = own.flatMap((path) => path.forms)
      pending = () => {
        for (const prefix of prefixes) replaced.push({ prefix, by: kind.by })
      }
      return
    }
    const named = own.filter((p) => p.access !== "names")
    const destination = named[named.length - 1]
    if (destination === undefined) return
    const sources = named.slice(0, -1)
    // A source an earlier command may have replaced is unknown too.
    const known = sources.every(
      (s) =>
        s.forms.every((form) => regularFile(form)) &&
        !s.forms.some((form) => anything !== undefined || replaced.some((r) => within(form, r.prefix)))
    )
    if (known && sources.length > 0) return
    pending = () => {
      for (const prefix of destination.forms) replaced.push({ prefix, by: kind.by })
    }
  })
  return changed
}
