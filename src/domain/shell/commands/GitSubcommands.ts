/**
 * The tables of git's read-only subcommands (`status`, `log`, `show`, `diff`, `blame`, `ls-files`, `grep`,
 * `describe`, `rev-parse` …): each lists the options that neither write a file nor run a program, and what its
 * operands are. Subcommands that list in one form and change things in another are in GitListing.
 */
import type { CommandTable, View } from "../CommandTable.js"
import { diffOptions, helpOptions, printsContent, refusedDiffOptions, revisionOptions } from "./GitOptions.js"

/** A format that verifies signatures (`%G?`, `%GS`, …) runs the signature program. */
const signatureFormat = (view: View): string | undefined =>
  view.options.some(
    (option) => (option.name === "--format" || option.name === "--pretty") && /%G/.test(option.value ?? "")
  )
    ? "a format with %G runs the signature program"
    : undefined

/** Revisions and paths after them; a path is read, and `REV:PATH` reads PATH from the repository. */
const revisionsAndPaths = { rest: "read" } as const

/** Directories read by a subcommand that reads the whole repository's content when no path is named. */
const wholeRepository = (view: View): boolean => view.operands.length === 0

/**
 * True when every operand follows a literal `--`, so none can be a revision: the operands are then only pathspecs,
 * checked as reads of those paths.
 */
const onlyPathspecs = (view: View): boolean => {
  const separator = view.args.findIndex((word) => word.literal && word.value === "--")
  return separator >= 0 && view.operands.every((operand) => operand.index > separator)
}

/**
 * The repository's history (every committed version of every file) is read whenever a command can print the
 * content of committed objects for revisions it does not name as paths: an implicit read of the whole repository,
 * which any Read deny or ask rule inside it matches.
 */
const historyWith =
  (prints: (view: View) => boolean) =>
  (view: View): boolean =>
    wholeRepository(view) || (prints(view) && !(onlyPathspecs(view) && !view.has("--full-diff")))

/** Options after which a diff prints only names and statistics (unless a content option is given too). */
const namesOptions = [
  "--stat",
  "--numstat",
  "--shortstat",
  "--name-only",
  "--name-status",
  "--raw",
  "--summary",
  "--compact-summary",
  "--dirstat",
  "--dirstat-by-file",
  "-s"
]

/** True when a diff prints only the names and statistics of the files it compares. */
export const namesOnlyDiff = (view: View): boolean =>
  namesOptions.some((name) => view.has(name)) && !printsContent(view)

const log: CommandTable = {
  options: [...diffOptions, ...revisionOptions, ...helpOptions],
  refused: refusedDiffOptions,
  operands: revisionsAndPaths,
  numeric: true,
  check: signatureFormat,
  implicitRead: historyWith(printsContent),
  // Without a patch, a log prints commit metadata, messages and file names: no file's contents.
  names: (view) => !printsContent(view)
}

export const subcommands: Readonly<Record<string, CommandTable>> = {
  status: {
    options: [
      "-s, --short",
      "-b, --branch",
      "--show-stash",
      "--porcelain[=WORD]",
      "--long",
      "-v, --verbose",
      "-u, --untracked-files[=MODE]",
      "--ignore-submodules[=WHEN]",
      "--ignored[=MODE]",
      "-z",
      "--column[=TEXT]",
      "--no-column",
      "--ahead-behind",
      "--no-ahead-behind",
      "--renames",
      "--no-renames",
      "--find-renames[=N]",
      ...helpOptions
    ],
    operands: { rest: "read" },
    implicitRead: wholeRepository,
    names: true
  },
  log,
  // `git show` prints a blob, a tree or a commit's patch whatever its options: it always reads the history.
  show: {
    ...log,
    implicitRead: () => true,
    names: (view) => namesOnlyDiff(view) && view.operands.every((operand) => !operand.value.includes(":"))
  },
  whatchanged: log,
  "rev-list": {
    names: true,
    ...log,
    options: [
      ...log.options,
      "--count",
      "--objects",
      "--objects-edge",
      "--no-object-names",
      "--object-names",
      "--unpacked",
      "--disk-usage[=WORD]",
      "--header",
      "--timestamp",
      "--max-age=TEXT",
      "--min-age=TEXT"
    ]
  },
  shortlog: {
    names: true,
    refused: ["--show-signature"],
    options: [
      "-n, --numbered",
      "-s, --summary",
      "-e, --email",
      "-c, --committer",
      "--format=FORMAT",
      "--group=TEXT",
      "-w[TEXT]",
      // shortlog parses its own -n/-s/-e/-c, --committer (a flag here) and --format before the revision options
      ...revisionOptions.filter((entry) => !/^-[nsec]\b/.test(entry) && !/^--(committer|format)\b/.test(entry)),
      ...helpOptions
    ],
    operands: revisionsAndPaths,
    check: signatureFormat
  },
  diff: {
    refused: refusedDiffOptions,
    options: [
      ...diffOptions,
      "--cached, --staged",
      "--merge-base",
      "--no-index",
      "-1, --base",
      "-2, --ours",
      "-3, --theirs",
      "-0",
      ...helpOptions
    ],
    operands: revisionsAndPaths,
    // Any operand may be a revision (`git diff HEAD~1`) unless `--no-index` or `--` says they are paths.
    implicitRead: (view) => !view.has("--no-index") && (wholeRepository(view) || !onlyPathspecs(view)),
    names: (view) => namesOnlyDiff(view) && !view.has("--no-index")
  },
  "diff-tree": {
    refused: refusedDiffOptions,
    options: [
      ...diffOptions,
      "-r",
      "-t",
      "--root",
      "--stdin",
      "-m",
      "-c",
      "--cc",
      "--no-commit-id",
      "-s",
      "-v",
      "--always",
      ...helpOptions
    ],
    operands: revisionsAndPaths,
    implicitRead: (view) => printsContent(view),
    names: (view) => !printsContent(view)
  },
  // `git diff-index TREE [PATH…]`: the tree against the index and the working tree (with -p, their contents).
  "diff-index": {
    refused: refusedDiffOptions,
    options: [...diffOptions, "--cached", "--merge-base", "-m", ...helpOptions],
    operands: revisionsAndPaths,
    implicitRead: (view) => printsContent(view),
    names: (view) => !printsContent(view)
  },
  blame: {
    refused: ["--textconv"],
    options: [
      "-b",
      "--root",
      "--show-stats",
      "-L TEXT",
      "-l",
      "-t",
      "-S FILE",
      "--reverse=REV",
      "--first-parent",
      "-p, --porcelain",
      "--line-porcelain",
      "--incremental",
      "--encoding=TEXT",
      "--contents=FILE",
      "--date=FORMAT",
      "--progress",
      "--no-progress",
      "-M[N]",
      "-C[N]",
      "--ignore-rev=REV",
      "--ignore-revs-file=FILE",
      "--color-lines",
      "--color-by-age",
      "--minimal",
      "-s",
      "-e, --show-email",
      "-f, --show-name",
      "-n, --show-number",
      "-w",
      "--abbrev[=N]",
      "-c",
      "--score-debug",
      "--no-textconv",
      ...helpOptions
    ],
    operands: revisionsAndPaths,
    // `git blame FILE` prints FILE as it is; with a revision or another source it prints committed content.
    implicitRead: (view) =>
      view.operands.length !== 1 || ["--contents", "--reverse", "-C", "-M", "-S"].some((name) => view.has(name))
  },
  "ls-files": {
    names: true,
    options: [
      "-c, --cached",
      "-d, --deleted",
      "-m, --modified",
      "-o, --others",
      "-i, --ignored",
      "-s, --stage",
      "-u, --unmerged",
      "-k, --killed",
      "-z",
      "-t",
      "-v",
      "-f",
      "--directory",
      "--no-empty-directory",
      "--eol",
      "--deduplicate",
      "-x, --exclude=PATTERN",
      "-X, --exclude-from=FILE",
      "--exclude-per-directory=TEXT",
      "--exclude-standard",
      "--error-unmatch",
      "--with-tree=REV",
      "--full-name",
      "--recurse-submodules",
      "--abbrev[=N]",
      "--debug",
      "--sparse",
      "--format=FORMAT",
      ...helpOptions
    ],
    operands: { rest: "read" }
  },
  "ls-tree": {
    names: true,
    options: [
      "-d",
      "-r",
      "-t",
      "-l, --long",
      "-z",
      "--name-only, --name-status",
      "--object-only",
      "--full-name",
      "--full-tree",
      "--abbrev[=N]",
      "--format=FORMAT",
      ...helpOptions
    ],
    operands: { rest: "text" }
  },
  grep: {
    refused: ["-O, --open-files-in-pager[=PROGRAM]", "--textconv"],
    options: [
      "--cached",
      "--untracked",
      "--no-index",
      "--index",
      "--exclude-standard",
      "--no-exclude-standard",
      "--recurse-submodules",
      "-a, --text",
      "--no-textconv",
      "-i, --ignore-case",
      "-I",
      "--max-depth=N",
      "-r, --recursive",
      "--no-recursive",
      "-w, --word-regexp",
      "-v, --invert-match",
      "-h",
      "-H",
      "--full-name",
      "-E, --extended-regexp",
      "-G, --basic-regexp",
      "-F, --fixed-strings",
      "-P, --perl-regexp",
      "-n, --line-number",
      "--column",
      "-l, --files-with-matches, --name-only",
      "-L, --files-without-match",
      "-z, --null",
      "-o, --only-matching",
      "-c, --count",
      "--color[=WHEN]",
      "--no-color",
      "--break",
      "--heading",
      "-p, --show-function",
      "-C, --context=N",
      "-A, --after-context=N",
      "-B, --before-context=N",
      "-W, --function-context",
      "-m, --max-count=N",
      "--threads=N",
      "-f FILE",
      "-e PATTERN",
      "--and",
      "--or",
      "--not",
      "--all-match",
      "-q, --quiet"
    ],
    operands: { leading: ["text"], leadingUnless: ["-e", "-f"], rest: "read" },
    numeric: true,
    // With no path, `--cached`, or an operand that may be a revision (`git grep SECRET HEAD`), it reads the index
    // or the history of the whole repository.
    implicitRead: (view) => {
      const patterns = view.has("-e") || view.has("-f") ? 0 : 1
      if (view.operands.length <= patterns) return true
      if (view.has("--cached")) return true
      if (view.has("--no-index") || view.has("--untracked")) return false
      const separator = view.args.findIndex((word) => word.literal && word.value === "--")
      return view.operands.slice(patterns).some((operand) => separator < 0 || operand.index < separator)
    }
  },
  describe: {
    names: true,
    options: [
      "--all",
      "--tags",
      "--contains",
      "--abbrev=N",
      "--candidates=N",
      "--exact-match",
      "--debug",
      "--long",
      "--match=PATTERN",
      "--exclude=PATTERN",
      "--always",
      "--first-parent",
      "--dirty[=TEXT]",
      "--broken[=TEXT]",
      ...helpOptions
    ],
    operands: { rest: "text" }
  },
  "rev-parse": {
    names: true,
    options: [
      "--abbrev-ref[=WORD]",
      "--short[=N]",
      "--verify",
      "-q, --quiet",
      "--symbolic",
      "--symbolic-full-name",
      "--all",
      "--branches[=PATTERN]",
      "--tags[=PATTERN]",
      "--remotes[=PATTERN]",
      "--glob=PATTERN",
      "--exclude=PATTERN",
      "--exclude-hidden=WORD",
      "--disambiguate=TEXT",
      "--show-toplevel",
      "--show-prefix",
      "--show-cdup",
      "--git-dir",
      "--git-common-dir",
      "--absolute-git-dir",
      "--is-inside-git-dir",
      "--is-inside-work-tree",
      "--is-bare-repository",
      "--is-shallow-repository",
      "--show-superproject-working-tree",
      "--shared-index-path",
      "--show-object-format[=WORD]",
      "--show-ref-format",
      "--local-env-vars",
      "--path-format=WORD",
      "--git-path=TEXT",
      "--resolve-git-dir=PATH",
      "--since, --after=TEXT",
      "--until, --before=TEXT",
      "--default=REV",
      "--prefix=TEXT",
      "--revs-only",
      "--no-revs",
      "--flags",
      "--no-flags",
      "--sq",
      "--sq-quote",
      "--not",
      "--keep-dashdash",
      "--stop-at-non-option"
    ],
    operands: { rest: "text" }
  },
  "merge-base": {
    names: true,
    options: ["-a, --all", "--octopus", "--independent", "--is-ancestor", "--fork-point", ...helpOptions],
    operands: { rest: "text" }
  },
  "cat-file": {
    options: [
      "-t",
      "-s",
      "-e",
      "-p",
      "--allow-unknown-type",
      "--mailmap, --use-mailmap",
      "--no-mailmap",
      "--batch[=FORMAT]",
      "--batch-check[=FORMAT]",
      "--batch-command[=FORMAT]",
      "--batch-all-objects",
      "--buffer",
      "--unordered",
      "--follow-symlinks",
      "-z",
      "-Z",
      ...helpOptions
    ],
    operands: { rest: "text" },
    // Only -t, -s, -e and --batch-check (names, types, sizes) print no content; `git cat-file -p`, `git cat-file
    // blob SHA` and `--batch`/`--batch-command` (object names from the input, any of them) print objects.
    implicitRead: (view) => !catFileNames(view),
    names: (view) => catFileNames(view),
    // Object names read from the input are not on the line: never read-only (as before these options were known),
    // while the table still records the repository they can print for the Read rules.
    check: (view) =>
      ["--batch", "--batch-check", "--batch-command", "--batch-all-objects"].some((option) => view.has(option))
        ? "git cat-file --batch reads the objects to print from its input"
        : undefined
  },
  "for-each-ref": {
    names: true,
    options: [
      "--count=N",
      "--sort=KEY",
      "--format=FORMAT",
      "--color[=WHEN]",
      "-s, --shell",
      "-p, --perl",
      "--python",
      "--tcl",
      "--points-at=REV",
      "--merged=REV",
      "--no-merged=REV",
      "--contains=REV",
      "--no-contains=REV",
      "--ignore-case",
      "--omit-empty",
      "--exclude=PATTERN",
      ...helpOptions
    ],
    operands: { rest: "text" },
    check: signatureFormat
  },
  "show-ref": {
    names: true,
    options: [
      "--head",
      "--heads",
      "--branches",
      "--tags",
      "-d, --dereference",
      "-s, --hash[=N]",
      "--abbrev[=N]",
      "-q, --quiet",
      "--verify",
      "--exists",
      ...helpOptions
    ],
    operands: { rest: "text" }
  },
  "count-objects": {
    names: true,
    options: ["-v, --verbose", "-H, --human-readable", ...helpOptions],
    operands: { rest: "none" }
  },
  // Whether paths are ignored: names only (the ignore files it reads are git's own).
  "check-ignore": {
    names: true,
    options: ["-q, --quiet", "-v, --verbose", "--stdin", "-z", "-n, --non-matching", "--no-index", ...helpOptions],
    operands: { rest: "read" }
  },
  // The commits of one branch not yet upstream: ids and subjects.
  cherry: {
    names: true,
    options: ["-v", "--abbrev[=N]", ...helpOptions],
    operands: { rest: "text" }
  },
  "show-branch": {
    names: true,
    options: [
      "-a, --all",
      "-r, --remotes",
      "--topo-order",
      "--date-order",
      "--current",
      "--sparse",
      "--more=N",
      "--list",
      "--independent",
      "--merge-base",
      "--no-name",
      "--sha1-name",
      "--topics",
      "-g, --reflog[=TEXT]",
      "--color[=WHEN]",
      "--no-color",
      ...helpOptions
    ],
    operands: { rest: "text" }
  },
  "name-rev": {
    names: true,
    options: [
      "--tags",
      "--refs=PATTERN",
      "--exclude=PATTERN",
      "--all",
      "--annotate-stdin",
      "--name-only",
      "--no-undefined",
      "--always",
      ...helpOptions
    ],
    operands: { rest: "text" }
  }
}

/** `git cat-file` printing only names, types and sizes of objects, not their contents. */
function catFileNames(view: { readonly has: (option: string) => boolean }): boolean {
  if (view.has("--batch") || view.has("--batch-command")) return false
  return view.has("-t") || view.has("-s") || view.has("-e") || view.has("--batch-check")
}
