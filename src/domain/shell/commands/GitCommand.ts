/**
 * `git` as a read-only command: global options from a small table (`-C DIR`, `--no-pager`, pathspec modes),
 * then the subcommand from a table of read-only subcommands, each with its own option table and checks.
 *
 * Chosen on purpose:
 * - `-c NAME=VALUE`, `--config-env`, `--exec-path=DIR`, `--git-dir`, `--work-tree`, `--namespace` and
 *   `-p/--paginate` are not accepted: configuration given on the command line can name a pager, an external diff,
 *   a textconv or fsmonitor program, an alias to a shell command; the others pick another repository or program
 *   directory. `GIT_*` assignments before the command are refused by the analyzer for the same reason.
 * - Options that run a program named by configuration (`--ext-diff`, `--textconv`, `--show-signature`, `%G`
 *   signature placeholders in formats, `grep -O`) or write a file (`--output`) are not in any table.
 * - The repository's own configuration (`core.pager`, `diff.external`, `core.fsmonitor`, filters) is trusted as
 *   the user's: `.git/` is a protected path that no tool call edits without asking. What remains open is a
 *   directory that merely looks like a repository (`HEAD`, `objects/`, `refs/`, `config`) written inside the
 *   project and entered with `cd`/`-C`; the documentation of the read-only tables says how to close it.
 */
import type { ArgWord, CommandTable, CustomCommand } from "../CommandTable.js"
import * as TableInterpreter from "../TableInterpreter.js"
import { gitListing } from "./GitListing.js"
import { subcommands } from "./GitSubcommands.js"

/** The global options accepted before the subcommand. */
const globalTable: CommandTable = {
  refused: [
    "-c TEXT",
    "--config-env=TEXT",
    "--exec-path[=DIR]",
    "--git-dir=DIR",
    "--work-tree=DIR",
    "--namespace=TEXT",
    "--bare",
    "-p, --paginate",
    "--super-prefix=TEXT",
    "--html-path",
    "--man-path",
    "--info-path",
    "--list-cmds=LIST",
    "--attr-source=REV"
  ],
  options: [
    "-C PATH",
    "--no-pager",
    "-P",
    "--no-optional-locks",
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
    "--no-replace-objects",
    "--version",
    "--help"
  ],
  operands: { rest: "text" },
  stopAtOperand: true
}

/** The subcommands that print file contents only from what git stores: the index, the work tree's tracked files and
 * committed objects. */
const storedContent = new Set([
  "diff",
  "show",
  "log",
  "whatchanged",
  "reflog",
  "stash",
  "diff-tree",
  "blame",
  "annotate",
  "grep",
  "cat-file",
  "format-patch"
])

/** Interprets a subcommand's words with its table, or with the listing rules of `branch`, `tag`, `remote` … */
const interpretSubcommand = (name: string, args: ReadonlyArray<ArgWord>) => {
  // `git annotate` is `git blame` with another output layout and the same options.
  const table = subcommands[name === "annotate" ? "blame" : name]
  if (table !== undefined) return TableInterpreter.interpret(table, args)
  return gitListing(name, args) ?? TableInterpreter.notKnown(`git ${name} is not a read-only git command`)
}

/** The directory `-C` options move to (each relative to the previous one), undefined without `-C`. */
const chdir = (paths: ReadonlyArray<string>): string | undefined =>
  paths.length === 0
    ? undefined
    : paths.reduce((base, path) => (path.startsWith("/") || base === "." ? path : `${base}/${path}`), ".")

/** Subcommands that, in the forms that are not read-only, write the repository's configuration file. */
const configWriters = new Set(["config", "remote", "submodule", "branch", "worktree", "sparse-checkout", "init", "lfs"])

/**
 * The configuration files a git subcommand that is not read-only writes: `git config` the repository's
 * `.git/config` (or `~/.gitconfig` with `--global`; `--file F` names its file as an operand), `git remote add`,
 * `git submodule`, `git branch -u` and `git worktree add` the repository's `.git/config`.
 */
const configWrites = (
  name: string,
  args: ReadonlyArray<ArgWord>,
  directory: string | undefined
): ReadonlyArray<string> => {
  const values = args.map((word) => word.value)
  // `git maintenance register`/`start` add the repository to the global configuration (and schedule jobs)
  if (name === "maintenance") return ["~/.gitconfig", "~/.config/git/config"]
  if (!configWriters.has(name)) return []
  const local = `${directory ?? "."}/.git/config`
  // `git init --template=DIR` copies DIR's hooks into `.git/hooks`; `git lfs install` writes hooks and the global
  // configuration (unless `--local`)
  if (name === "init")
    return values.some((value) => /^--te/.test(value)) ? [local, `${directory ?? "."}/.git/hooks`] : []
  if (name === "lfs") {
    return values[0] === "install" || values[0] === "update"
      ? [local, `${directory ?? "."}/.git/hooks`, ...(values.includes("--local") ? [] : ["~/.gitconfig"])]
      : []
  }
  if (name !== "config") return [local]
  if (values.some((value) => /^--gl/.test(value))) return ["~/.gitconfig", "~/.config/git/config"]
  if (values.some((value) => /^--sy/.test(value))) return ["/etc/gitconfig"]
  return [local]
}

/** `git [global options] SUBCOMMAND [arguments]`. */
export const git: CustomCommand = {
  interpret: (args) => {
    const global = TableInterpreter.interpret(globalTable, args)
    if (!global.known) return global
    const at = TableInterpreter.firstOperandIndex(globalTable, args)
    if (at === undefined) {
      const asks = args.some((word) => word.value === "--version" || word.value === "--help")
      return asks ? global : TableInterpreter.notKnown("git without a subcommand")
    }
    const word = args[at]
    if (!word.literal || word.glob)
      return TableInterpreter.notKnown("the git subcommand is only known when the shell runs")
    const effect = TableInterpreter.shift(interpretSubcommand(word.value, args.slice(at + 1)), at + 1)
    const directory = chdir(global.reads.map((read) => read.value))
    const writes = effect.readOnly ? [] : configWrites(word.value, args.slice(at + 1), directory)
    const implicitWrites = writes.length === 0 ? {} : { implicitWrites: writes }
    if (!effect.known) return { ...effect, ...implicitWrites }
    // `REV:PATH` reads PATH as stored in the repository (relative to its top, or to here with `./`).
    const paths = effect.reads.map((read) => {
      const stored = /^[^:/]*:(.+)$/.exec(read.value)
      return stored === null ? read : { ...read, value: stored[1] }
    })
    // A content command prints only what git stores (tracked files, history), unless told to read files beside
    // the repository (`--no-index`, `--untracked`; any abbreviation of them counts).
    const beside = args.some((word) => !word.literal || /^--(?:no-i|unt|rec)/.test(word.value))
    const tracked = effect.known && effect.names !== true && !beside && storedContent.has(word.value)
    // With `-C DIR` the repository may reach above DIR (its history holds every file): "." is read as well.
    const implicitReads = effect.implicitReads?.flatMap((path) =>
      directory === undefined ? [path] : [directory, path]
    )
    return {
      ...effect,
      // `-C DIR` only moves git there: a path of the command, not an option's file.
      reads: [...global.reads.map((read) => ({ index: read.index, value: read.value })), ...paths],
      ...(implicitReads === undefined ? {} : { implicitReads }),
      ...(tracked ? { tracked } : {}),
      // `git grep` outside a repository stops with "not a git repository" (unless configured to fall back).
      ...(tracked && word.value === "grep" ? { repositoryOnly: directory ?? "." } : {}),
      ...implicitWrites
    }
  }
}
