/**
 * Tables of the search tools: `grep` (and `egrep`, `fgrep`) and ripgrep. Their first operand is a pattern unless a
 * pattern option is given; the others are paths read. ripgrep without `--pre` and `--hostname-bin`, which run
 * programs.
 */
import type { CommandTable, View } from "../CommandTable.js"

/** The number of path operands once the pattern (when it is an operand) is set aside. */
const pathCount = (view: View, patternOptions: ReadonlyArray<string>): number =>
  patternOptions.some(view.has) ? view.operands.length : Math.max(0, view.operands.length - 1)

const grepPatternOptions = ["-e", "-f"]

export const grep: CommandTable = {
  options: [
    "-E, --extended-regexp",
    "-F, --fixed-strings",
    "-G, --basic-regexp",
    "-P, --perl-regexp",
    "-e, --regexp=PATTERN",
    "-f, --file=FILE",
    "-i, -y, --ignore-case",
    "--no-ignore-case",
    "-w, --word-regexp",
    "-x, --line-regexp",
    "-z, --null-data",
    "-s, --no-messages",
    "-v, --invert-match",
    "-V, --version",
    "--help",
    "-m, --max-count=N",
    "-b, --byte-offset",
    "-n, --line-number",
    "--line-buffered",
    "-H, --with-filename",
    "-h, --no-filename",
    "--label=TEXT",
    "-o, --only-matching",
    "-q, --quiet, --silent",
    "--binary-files=TYPE",
    "-a, --text",
    "-I",
    "-d, --directories=WORD",
    "-D, --devices=WORD",
    "-r, --recursive",
    "-R, --dereference-recursive",
    "--include=PATTERN",
    "--exclude=PATTERN",
    "--exclude-from=FILE",
    "--exclude-dir=PATTERN",
    "-L, --files-without-match",
    "-l, --files-with-matches",
    "-c, --count",
    "-T, --initial-tab",
    "-Z, --null",
    "-B, --before-context=N",
    "-A, --after-context=N",
    "-C, --context=N",
    "--color, --colour[=WHEN]",
    "-U, --binary"
  ],
  operands: { leading: ["text"], leadingUnless: grepPatternOptions, rest: "read" },
  numeric: true,
  inert: true,
  implicitRead: (view) => (view.has("-r") || view.has("-R")) && pathCount(view, grepPatternOptions) === 0
}

const rgPatternOptions = ["-e", "-f", "--files", "--type-list"]

/** ripgrep without `--pre` (runs a program on every file) and `--hostname-bin` (runs a program). */
export const rg: CommandTable = {
  refused: ["--pre=PROGRAM", "--hostname-bin=PROGRAM"],
  options: [
    "-A, --after-context=N",
    "--auto-hybrid-regex",
    "--no-auto-hybrid-regex",
    "-B, --before-context=N",
    "--binary",
    "--no-binary",
    "--block-buffered",
    "--no-block-buffered",
    "-b, --byte-offset",
    "--no-byte-offset",
    "-s, --case-sensitive",
    "--color=WHEN",
    "--colors=TEXT",
    "--column",
    "--no-column",
    "-C, --context=N",
    "--context-separator=SEP",
    "--no-context-separator",
    "-c, --count",
    "--count-matches",
    "--crlf",
    "--no-crlf",
    "--debug",
    "--trace",
    "--dfa-size-limit=SIZE",
    "-E, --encoding=TEXT",
    "--no-encoding",
    "--engine=WORD",
    "--field-context-separator=SEP",
    "--field-match-separator=SEP",
    "-f, --file=FILE",
    "--files",
    "-l, --files-with-matches",
    "--files-without-match",
    "-F, --fixed-strings",
    "--no-fixed-strings",
    "-L, --follow",
    "--no-follow",
    "--generate=WORD",
    "-g, --glob=PATTERN",
    "--glob-case-insensitive",
    "--no-glob-case-insensitive",
    "-h, --help",
    "--heading",
    "--no-heading",
    "-., --hidden",
    "--no-hidden",
    "--hyperlink-format=TEXT",
    "--iglob=PATTERN",
    "-i, --ignore-case",
    "--ignore-file=FILE",
    "--ignore-file-case-insensitive",
    "--no-ignore-file-case-insensitive",
    "--include-zero",
    "--no-include-zero",
    "-v, --invert-match",
    "--no-invert-match",
    "--json",
    "--no-json",
    "--line-buffered",
    "--no-line-buffered",
    "-n, --line-number",
    "-N, --no-line-number",
    "-x, --line-regexp",
    "-M, --max-columns=N",
    "--max-columns-preview",
    "--no-max-columns-preview",
    "-m, --max-count=N",
    "-d, --max-depth, --maxdepth=N",
    "--max-filesize=SIZE",
    "--mmap",
    "--no-mmap",
    "-U, --multiline",
    "--no-multiline",
    "--multiline-dotall",
    "--no-multiline-dotall",
    "--no-config",
    "-I, --no-filename",
    "-H, --with-filename",
    "--no-ignore",
    "--ignore",
    "--no-ignore-dot",
    "--no-ignore-exclude",
    "--no-ignore-files",
    "--no-ignore-global",
    "--no-ignore-messages",
    "--no-ignore-parent",
    "--no-ignore-vcs",
    "--no-messages",
    "--messages",
    "--no-pcre2-unicode",
    "--no-require-git",
    "--no-unicode",
    "--unicode",
    "-0, --null",
    "--null-data",
    "--one-file-system",
    "--no-one-file-system",
    "-o, --only-matching",
    "--passthru, --passthrough",
    "--path-separator=SEP",
    "-P, --pcre2",
    "--no-pcre2",
    "--pcre2-version",
    "-p, --pretty",
    "-q, --quiet",
    "--regex-size-limit=SIZE",
    "-e, --regexp=PATTERN",
    "-r, --replace=TEXT",
    "-z, --search-zip",
    "--no-search-zip",
    "-S, --smart-case",
    "--sort=WORD",
    "--sortr=WORD",
    "--sort-files",
    "--no-sort-files",
    "--stats",
    "--no-stats",
    "-a, --text",
    "--no-text",
    "-j, --threads=N",
    "--trim",
    "--no-trim",
    "-t, --type=TYPE",
    "--type-add=TEXT",
    "--type-clear=TYPE",
    "--type-list",
    "-T, --type-not=TYPE",
    "-u, --unrestricted",
    "-V, --version",
    "--vimgrep",
    "-w, --word-regexp"
  ],
  operands: { leading: ["text"], leadingUnless: rgPatternOptions, rest: "read" },
  implicitRead: (view) => !view.has("--type-list") && pathCount(view, rgPatternOptions) === 0,
  // `--files` lists the names rg would search.
  names: (view) => view.has("--files") && !view.has("--pre"),
  // rg leaves hidden and ignored files out unless -u (ignored), -uu (hidden too), --hidden, --no-ignore say
  // otherwise. A positive glob (`-g '*.js'`) overrides those rules for the files it matches and leaves every other
  // file out: the files searched are then those its globs pass, hidden or ignored or not. A negated glob (`!x`)
  // only leaves files out.
  skips: (view) => {
    const unrestricted = view.options.filter((option) => option.name === "-u").length
    const globs = view.options.filter((option) => option.name === "-g" || option.name === "--iglob")
    const positive = globs.flatMap((option) =>
      option.value === undefined || option.value.startsWith("!") ? [] : [option.value]
    )
    // A glob the shell may expand or change first is not known as written.
    const unknownGlob = globs.some((option) => {
      const word = option.valueIndex === undefined ? undefined : view.args[option.valueIndex]
      return word === undefined || !word.literal || word.glob
    })
    if (positive.length > 0 && !unknownGlob) return { hidden: false, ignored: false, only: positive }
    const overrides = unknownGlob || positive.length > 0
    return {
      hidden: !(overrides || unrestricted >= 2 || view.has("--hidden")),
      ignored: !(overrides || unrestricted >= 1 || view.has("--no-ignore") || view.has("--no-ignore-vcs"))
    }
  }
}

/**
 * `fd PATTERN [PATH…]` lists the names that match: names only, like `find -name` (Read rules protect contents).
 * `-x/--exec` and `-X/--exec-batch` run a command for each match, so they are not in the table; an ignore file
 * named by `--ignore-file` is read for its contents.
 */
export const fd: CommandTable = {
  refused: ["-x, --exec=PROGRAM", "-X, --exec-batch=PROGRAM", "--batch-size=N"],
  options: [
    "-H, --hidden",
    "-I, --no-ignore",
    "--no-ignore-vcs",
    "--no-ignore-parent",
    "-u, --unrestricted",
    "-s, --case-sensitive",
    "-i, --ignore-case",
    "-g, --glob",
    "--regex",
    "-F, --fixed-strings",
    "--and=PATTERN",
    "-a, --absolute-path",
    "-l, --list-details",
    "-L, --follow",
    "-p, --full-path",
    "-0, --print0",
    "-d, --max-depth=N",
    "--min-depth=N",
    "--exact-depth=N",
    "--prune",
    "-t, --type=TYPE",
    "-e, --extension=TEXT",
    "-E, --exclude=PATTERN",
    "--ignore-file=FILE",
    "-c, --color=WHEN",
    "-j, --threads=N",
    "-S, --size=SIZE",
    "--changed-within=TIME",
    "--changed-before=TIME",
    "-o, --owner=TEXT",
    "--format=FORMAT",
    "--max-results=N",
    "-1",
    "-q, --quiet",
    "--show-errors",
    "--strip-cwd-prefix[=WHEN]",
    "--one-file-system",
    "--base-directory=PATH",
    "--search-path=PATH",
    "--path-separator=SEP",
    "-h, --help",
    "-V, --version"
  ],
  operands: { leading: ["text"], rest: "read" },
  implicitRead: (view) => view.operands.length <= 1 && !view.has("--search-path"),
  names: (view) => !view.has("-x") && !view.has("-X")
}
