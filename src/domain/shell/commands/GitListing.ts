/**
 * The git subcommands that list in one form and change the repository in another: `branch` and `tag` (listing
 * only: no operand unless a listing option says the operands are patterns), `remote` (`-v`, `get-url`),
 * `config` (reading actions only), `stash list|show`, `reflog [show|exists]`, `worktree list`.
 */
import type { CommandEffect } from "../CommandEffect.js"
import type { ArgWord, CommandTable, View } from "../CommandTable.js"
import * as TableInterpreter from "../TableInterpreter.js"
import { diffOptions, helpOptions, printsContent, refusedDiffOptions, revisionOptions } from "./GitOptions.js"

/** Operands are patterns only with one of these options; otherwise an operand names a ref to create. */
const listingWith =
  (listing: ReadonlyArray<string>, what: string) =>
  (view: View): string | undefined =>
    view.operands.length === 0 || listing.some(view.has) ? undefined : `git ${what} with an operand creates ${what}`

const filters = [
  "--contains=REV",
  "--no-contains=REV",
  "--merged=REV",
  "--no-merged=REV",
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

const readingActions = ["--get", "--get-all", "--get-regexp", "--get-urlmatch", "-l", "--get-color", "--get-colorbool"]

const configLocation = [
  "--global",
  "--system",
  "--local",
  "--worktree",
  "-f, --file=FILE",
  "--blob=REV",
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
  check: (view) => (readingActions.some(view.has) ? undefined : "git config without a reading action sets a value")
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

const worktreeList: CommandTable = {
  names: true,
  options: ["--porcelain", "-v, --verbose", "--expire=TEXT", "-z", ...helpOptions],
  operands: { rest: "none" }
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
      return bySubcommand(args, { "get-url": remoteGetUrl }, remote)
    case "config":
      return bySubcommand(args, { get: configGet, list: configGet }, config)
    case "stash":
      return bySubcommand(args, { list: log, show: log })
    case "reflog":
      return bySubcommand(args, { show: log, exists: { options: [], operands: { rest: "text" } } }, log)
    case "worktree":
      return bySubcommand(args, { list: worktreeList })
    default:
      return undefined
  }
}
