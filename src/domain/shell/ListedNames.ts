/**
 * The commands whose output is a list of paths and nothing else, as `xargs` consumes it (`find … | xargs wc -l`,
 * `git ls-files | xargs wc -l`): which paths the names they print can stand for, so the command `xargs` runs is
 * checked as reading those paths. A lister prints only names under its starting points (`find`, with its name
 * filter), names git tracks under its pathspecs (`git ls-files`), or names git tracks relative to the repository's
 * top (`git diff --name-only`). Line filters between the lister and `xargs` (`grep PATTERN`, `head`, `sort`) keep
 * only some of the lines as they are. Anything else (`ls -l`, `find -printf`, `git ls-files --others`, `uniq -c`)
 * prints other words too, or names git does not track: not a lister.
 */
import * as CommandEffect from "./CommandEffect.js"
import type { ArgWord, PathOperand, Skips } from "./FileEffect.js"

/** The paths the names a lister prints lie under. */
export interface Listing {
  /** Words of the lister naming its starting points (indices in its argv); empty: its own directory. */
  readonly roots: ReadonlyArray<PathOperand>
  /** Only paths git tracks (the index or history) are printed. */
  readonly tracked: boolean
  /** The names are relative to the repository's top, not to the directory the command runs in. */
  readonly fromTop: boolean
  /** The lister's name filter (`find -name '*.js'`). */
  readonly skips?: Skips | undefined
}

const plain = (argv: ReadonlyArray<ArgWord>): boolean => argv.every((word) => word.literal && !word.glob)

/** find primaries that print more than the names. */
const findPrinters = new Set(["-printf", "-ls", "-fprint", "-fprint0", "-fprintf", "-fls"])

/** `git ls-files` options that print other files than the tracked ones, or more than their names. */
const lsFilesOthers =
  /^(?:-o|--others|-i|--ignored|-s|--stage|-t|-v|-f|-u|--unmerged|-k|--killed|--directory|--eol|--debug|--format.*|--full-name|--with-tree.*|--recurse-submodules|-X|--exclude-from.*)$/

/** `git diff` options that keep the output to names (and leave the work tree out of it). */
const diffNames = /^(?:--name-only|--cached|--staged|-z|--relative|--no-renames|--diff-filter=.*|-M|-C|--merge-base)$/

/** What the names a command prints stand for; undefined when it is not a lister. */
export const listing = (argv: ReadonlyArray<ArgWord>): Listing | undefined => {
  const effect = CommandEffect.describeWords(argv)
  if (!effect.known || !effect.readOnly || !plain(argv)) return undefined
  const values = argv.map((word) => word.value)
  if (values[0] === "find") {
    if (values.some((value) => findPrinters.has(value))) return undefined
    // The starting points: the operands before the expression (a primary's file, `-newer F`, is not one).
    const roots = effect.reads.filter((read) => !(values[read.index - 1] ?? "").startsWith("-"))
    return { roots, tracked: false, fromTop: false, skips: effect.skips }
  }
  if (values[0] !== "git") return undefined
  const args = values.slice(2)
  if (values[1] === "ls-files") {
    if (args.some((arg) => lsFilesOthers.test(arg) || (/^-[a-zA-Z]{2,}$/.test(arg) && /[oistvfukX]/.test(arg))))
      return undefined
    return { roots: effect.reads, tracked: true, fromTop: false }
  }
  if (values[1] === "diff") {
    const options = args.filter((arg) => arg.startsWith("-") && arg !== "--")
    if (!options.includes("--name-only") || !options.every((arg) => diffNames.test(arg))) return undefined
    // With `--relative` the names are relative to the directory; revisions and pathspecs only narrow the list.
    return { roots: [], tracked: true, fromTop: !options.includes("--relative") }
  }
  return undefined
}

/** `head`/`tail` options that only choose lines. */
const lineCount = /^(?:-n|--lines=\d+|-n\d+|-\d+)$/

/**
 * True when a command between the lister and `xargs` passes some of its input lines through unchanged and reads
 * nothing else: `grep [-v|-i|-E|-F|-w|-x] PATTERN`, `head`/`tail` with a line count, `sort` with ordering options,
 * `uniq` alone.
 */
export const isLineFilter = (argv: ReadonlyArray<ArgWord>): boolean => {
  if (!plain(argv)) return false
  const [name, ...args] = argv.map((word) => word.value)
  switch (name) {
    case "grep":
    case "egrep":
    case "fgrep": {
      let patterns = 0
      for (let at = 0; at < args.length; at++) {
        const arg = args[at]
        if (arg === "-e") {
          patterns++
          at++
        } else if (/^-[viEFwx]+$/.test(arg)) continue
        else if (arg.startsWith("-")) return false
        else patterns++
      }
      // One pattern and no file: the input is filtered (a second operand would be a file).
      return (
        patterns === 1 ||
        (patterns > 1 && args.includes("-e") && !args.some((a, i) => !a.startsWith("-") && args[i - 1] !== "-e"))
      )
    }
    case "head":
    case "tail":
      return args.every((arg, at) => lineCount.test(arg) || (args[at - 1] === "-n" && /^\d+$/.test(arg)))
    case "sort":
      return args.every((arg) => /^-[rnuVf]+$/.test(arg))
    case "uniq":
      return args.length === 0
    default:
      return false
  }
}
