/**
 * The git subcommands that list in one form and change the repository in another: `branch` and `tag` (listing
 * only: no operand unless a listing option says the operands are patterns), `remote` (`-v`, `get-url`),
 * `config` (reading actions only), `stash list|show`, `reflog [show|exists]`, `worktree list`.
 */

import type { ArgWord, CommandTable, View } from "../CommandTable.js"
import type { CommandEffect } from "../FileEffect.js"
import * as TableInterpreter from "../TableInterpreter.js"
import { diffOptions, helpOptions, printsContent, refusedDiffOptions, revisionOptions } from "./GitOptions.js"

/** Operands are patterns only with one of these options; otherwise an operand names a ref to create. */
const listingWith =
  (listing: ReadonlyArray<string>, what: string) =>
  (view: View): string | undefined =>
    view.operands.length === 0 || listing.some(view.has) ? undefined : `git ${what} with an operand creates ${what}`

const filters = [
  "--contains[=REV]",
  "--no-contains[=REV]",
  "--merged[=REV]",
  "--no-merged[=REV]",
  "--points-at=REV",
  "--sort=KEY",
  "--format=FORMAT",
  "--color[=WHEN]",
  "--no-color",
  "--column[=TEXT]",
  "--no-column",
  "-i, --ignore-case",
  "--omit-empty"
]

const listingFilters = ["--contains", "--no-contains", "--merged", "--no-merged", "--points-at"]

/** `git branch` listing: no option that creates, deletes, renames, copies or configures a branch. */
export const branch: CommandTable = {
  refused: [
    "-d, --delete",
    "-D",
    "-m, --move",
    "-M",
    "-c, --copy",
    "-C",
    "-f, --force",
    "-u, --set-upstream-to=TEXT",
    "--set-upstream",
    "--unset-upstream",
    "--edit-description",
    "-t, --track[=WORD]",
    "--no-track",
    "--create-reflog",
    "--recurse-submodules"
  ],
  options: [
    "-l, --list",
    "-a, --all",
    "-r, --remotes",
    "-v, --verbose",
    "-q, --quiet",
    "--abbrev=N",
    "--no-abbrev",
    "--show-current",
    ...filters,
    ...helpOptions
  ],
  operands: { rest: "text" },
  names: true,
  check: listingWith(["-l", ...listingFilters], "branch")
}

/** `git tag` listing: no option that creates, deletes, signs or verifies a tag. */
export const tag: CommandTable = {
  refused: [
    "-a, --annotate",
    "-s, --sign",
    "--no-sign",
    "-u, --local-user=TEXT",
    "-f, --force",
    "-d, --delete",
    "-v, --verify",
    "-m, --message=TEXT",
    "-F, --file=FILE",
    "-e, --edit",
    "--cleanup=MODE",
    "--create-reflog"
  ],
  options: ["-l, --list", "-n[N]", ...filters, ...helpOptions],
  operands: { rest: "text" },
  names: true,
  check: listingWith(["-l", ...listingFilters], "tag")
}

const remote: CommandTable = { names: true, options: ["-v, --verbose", ...helpOptions], operands: { rest: "none" } }

const remoteGetUrl: CommandTable = {
  names: true,
  options: ["--push", "--all"],
  operands: { leading: ["text"], rest: "none" }
}

/**
 * `git remote show -n NAME…`: what the configuration says of the remotes, without contacting them (without `-n`
 * it asks the remote over the network, which no read-only command does here).
 */
const remoteShowOffline: CommandTable = {
  names: true,
  options: ["-n", ...helpOptions],
  operands: { rest: "text" },
  check: (view) => (view.has("-n") ? undefined : "git remote show contacts the remote unless given -n")
}

/** `git submodule` / `git submodule status`: the recorded commit of each submodule, by path. */
const submoduleStatus: CommandTable = {
  names: true,
  options: ["--cached", "--recursive", "-q, --quiet", ...helpOptions],
  operands: { rest: "read" }
}

const readingActions = ["--get", "--get-all", "--get-regexp", "--get-urlmatch", "-l", "--get-color", "--get-colorbool"]

const configLocation = [
  "--global",
  "--system",
  "--local",
  "--worktree",
  "-f, --file=FILE",
  // `--blob=REV:PATH` reads PATH as the repository stores it (a read of PATH).
  "--blob=FILE",
  "--show-origin",
  "--show-scope",
  "-z, --null",
  "--name-only",
  "--includes",
  "--no-includes",
  "--type=TYPE",
  "--bool",
  "--int",
  "--bool-or-int",
  "--path",
  "--expiry-date",
  "--no-type",
  "--default=TEXT",
  "--fixed-value",
  ...helpOptions
]

/** `git config` with a reading action (`--get`, `--list` …): without one it sets a value. */
export const config: CommandTable = {
  refused: ["--add", "--unset", "--unset-all", "--replace-all", "--rename-section", "--remove-section", "-e, --edit"],
  options: [
    "--get",
    "--get-all",
    "--get-regexp",
    "--get-urlmatch",
    "-l, --list",
    "--get-color",
    "--get-colorbool",
    ...configLocation
  ],
  operands: { rest: "text" },
  // `git config NAME` (one operand, no action) prints a value; `git config NAME VALUE` sets it.
  check: (view) =>
    readingActions.some(view.has) || (view.operands.length === 1 && !view.operands[0].value.startsWith("-"))
      ? undefined
      : "git config without a reading action sets a value"
}

/** `git config get|list` (the subcommand form of newer git). */
const configGet: CommandTable = {
  options: ["--all", "--regexp", "--url=TEXT", "--value=PATTERN", ...configLocation],
  operands: { rest: "text" }
}

const log: CommandTable = {
  options: [...diffOptions, ...revisionOptions, ...helpOptions],
  refused: refusedDiffOptions,
  operands: { rest: "text" },
  numeric: true,
  // `git stash show -p`, `git reflog -p` print committed content: an implicit read of the repository's history.
  implicitRead: printsContent,
  names: (view) => !printsContent(view)
}

const gitVar: CommandTable = {
  names: true,
  options: ["-l", ...helpOptions],
  operands: { rest: "text" }
}

const worktreeList: CommandTable = {
  names: true,
  options: ["--porcelain", "-v, --verbose", "--expire=TEXT", "-z", ...helpOptions],
  operands: { rest: "none" }
}

/**
 * The configuration files `git config` prints from: the repository's, the user's (`~/.gitconfig`, the XDG one) and
 * the system's, unless `--file`/`--blob` name the only source. They are read for their contents (a Read rule on
 * `~/.gitconfig` applies to `git config -l`); being git's own files, they do not take the command outside the
 * working directories.
 */
const withConfigFiles = (effect: CommandEffect, args: ReadonlyArray<ArgWord>): CommandEffect => {
  const named = args.some((word) => /^(?:-f|--file|--blob)(?:=|$)/.test(word.value) || /^-[a-z]*f/.test(word.value))
  if (named) return effect
  const only = (flag: string) => args.some((word) => word.value === flag)
  const files = only("--global")
    ? ["~/.gitconfig", "~/.config/git/config"]
    : only("--system")
      ? ["/etc/gitconfig"]
      : only("--local") || only("--worktree")
        ? [".git/config", ".git/config.worktree"]
        : ["~/.gitconfig", "~/.config/git/config", "/etc/gitconfig", ".git/config", ".git/config.worktree"]
  return { ...effect, implicitFiles: files }
}

// Patches printed to the output (`--stdout`): committed content, like `git log -p`; without `--stdout` it
// writes one file per commit.
const formatPatch: CommandTable = {
  refused: [...refusedDiffOptions, "-o, --output-directory=OUT", "--output=OUT", "--signature-file=FILE"],
  options: [
    ...diffOptions,
    ...revisionOptions.filter((entry) => !entry.startsWith("-n,")),
    "--max-count=N",
    "--stdout",
    "-n, --numbered",
    "-N, --no-numbered",
    "-k, --keep-subject",
    "--cover-letter",
    "--no-cover-letter",
    "--signature=TEXT",
    "--no-signature",
    "--subject-prefix=TEXT",
    "--rfc[=TEXT]",
    "-v, --reroll-count=N",
    "--zero-commit",
    "--base=REV",
    "--no-stat",
    "--start-number=N",
    "--numbered-files",
    "--suffix=TEXT",
    "--no-binary",
    "--from[=TEXT]",
    "--to=TEXT",
    "--cc=TEXT",
    "--add-header=TEXT",
    "--in-reply-to=TEXT",
    "--thread[=WORD]",
    "--no-thread",
    "--ignore-if-in-upstream",
    "--always",
    "--progress",
    "--interdiff=REV",
    "--range-diff=REV",
    "--creation-factor=N",
    "--description-file=FILE",
    ...helpOptions
  ],
  operands: { rest: "read" },
  numeric: true,
  check: (view) =>
    view.has("--stdout")
      ? view.options.some((o) => (o.name === "--format" || o.name === "--pretty") && /%G/.test(o.value ?? ""))
        ? "a format with %G runs the signature program"
        : undefined
      : "git format-patch without --stdout writes files",
  implicitRead: () => true
}

/** Interprets `ARGS` as `SUB REST` where SUB picks a table; indices shifted past SUB. */
const bySubcommand = (
  args: ReadonlyArray<ArgWord>,
  tables: Readonly<Record<string, CommandTable>>,
  otherwise?: CommandTable
): CommandEffect | undefined => {
  const first = args[0]
  if (first?.literal && !first.glob && Object.hasOwn(tables, first.value))
    return TableInterpreter.shift(TableInterpreter.interpret(tables[first.value], args.slice(1)), 1)
  if (otherwise === undefined || (first !== undefined && !first.value.startsWith("-"))) return undefined
  return TableInterpreter.interpret(otherwise, args)
}

/** The effect of a listing-or-changing git subcommand, undefined when it is not one of them. */
export const gitListing = (name: string, args: ReadonlyArray<ArgWord>): CommandEffect | undefined => {
  switch (name) {
    case "branch":
      return TableInterpreter.interpret(branch, args)
    case "tag":
      return TableInterpreter.interpret(tag, args)
    case "remote":
      return bySubcommand(args, { "get-url": remoteGetUrl, show: remoteShowOffline }, remote)
    case "submodule":
      return args.length === 0
        ? TableInterpreter.interpret(submoduleStatus, args)
        : bySubcommand(args, { status: submoduleStatus })
    case "var": {
      // git's logical variables (identity, editor, pager); `-l` also prints every configuration variable, as
      // `git config -l` does (credential helpers, aliases): a read of git's configuration files.
      const effect = TableInterpreter.interpret(gitVar, args)
      return args.some((word) => word.value === "-l" || !word.literal) ? withConfigFiles(effect, args) : effect
    }
    case "config": {
      // `git config NAME` (a dotted name, not a subcommand) prints its value.
      const named = args[0]?.literal === true && /^[A-Za-z][\w-]*\./.test(args[0].value)
      const effect = named
        ? TableInterpreter.interpret(config, args)
        : bySubcommand(args, { get: configGet, list: configGet }, config)
      return effect === undefined ? undefined : withConfigFiles(effect, args)
    }
    case "stash":
      return bySubcommand(args, { list: log, show: log })
    case "reflog":
      return bySubcommand(args, { show: log, exists: { options: [], operands: { rest: "text" } } }, log)
    case "format-patch":
      return TableInterpreter.interpret(formatPatch, args)
    case "worktree":
      return bySubcommand(args, { list: worktreeList })
    default:
      return undefined
  }
}
