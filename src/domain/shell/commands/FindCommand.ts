/**
 * `find` as a read-only command. Its arguments are not getopt options but an expression, so it has its own table:
 * every primary that may appear, with the number of words it takes and what they are. Primaries that run programs
 * (`-exec`, `-execdir`, `-ok`, `-okdir`), delete (`-delete`), write files (`-fprint`, `-fprint0`, `-fprintf`,
 * `-fls`) or read a list of paths from a file (`-files0-from`) are not in it, and an unknown primary is not
 * read-only.
 */

import type { ArgWord, CustomCommand, Role } from "../CommandTable.js"
import type { PathOperand } from "../FileEffect.js"
import * as TableInterpreter from "../TableInterpreter.js"

/** Primaries without arguments: tests, actions that print, operators, global options. */
const noArgument = [
  "-depth",
  "-d",
  "-follow",
  "-mount",
  "-xdev",
  "-noleaf",
  "-ignore_readdir_race",
  "-noignore_readdir_race",
  "-daystart",
  "-warn",
  "-nowarn",
  "-empty",
  "-false",
  "-true",
  "-executable",
  "-readable",
  "-writable",
  "-nogroup",
  "-nouser",
  "-print",
  "-print0",
  "-ls",
  "-prune",
  "-quit",
  "-and",
  "-a",
  "-or",
  "-o",
  "-not",
  "!",
  "(",
  ")",
  ",",
  "-help",
  "--help",
  "-version",
  "--version"
]

/** Primaries taking one word of text (a pattern, a number, a type). */
const textArgument = [
  "-amin",
  "-atime",
  "-cmin",
  "-ctime",
  "-mmin",
  "-mtime",
  "-used",
  "-fstype",
  "-gid",
  "-uid",
  "-group",
  "-user",
  "-name",
  "-iname",
  "-path",
  "-ipath",
  "-wholename",
  "-iwholename",
  "-lname",
  "-ilname",
  "-regex",
  "-iregex",
  "-regextype",
  "-inum",
  "-links",
  "-perm",
  "-size",
  "-type",
  "-xtype",
  "-context",
  "-maxdepth",
  "-mindepth",
  "-printf"
]

/** Primaries taking one path, whose metadata is read. */
const pathArgument = ["-anewer", "-cnewer", "-newer", "-samefile"]

/** The primaries of the table, with the role of their argument (undefined: no argument). */
export const primaries: ReadonlyMap<string, Role | undefined> = new Map<string, Role | undefined>([
  ...noArgument.map((name) => [name, undefined] as const),
  ...textArgument.map((name) => [name, "text"] as const),
  ...pathArgument.map((name) => [name, "read"] as const)
])

/** `-newerXY REF`: compares with a file's time, or with a date when Y is `t`. */
const newer = /^-newer[aBcm]([aBcmt])$/

/** The options before the starting points: `-H`, `-L`, `-P`, `-D debugopts`, `-Olevel`. */
const leading = (args: ReadonlyArray<ArgWord>): number => {
  let at = 0
  while (at < args.length && args[at].literal && !args[at].glob) {
    const value = args[at].value
    if (value === "-H" || value === "-L" || value === "-P" || /^-O\d$/.test(value)) at++
    else if (value === "-D" && at + 1 < args.length) at += 2
    else break
  }
  return at
}

/** True when a word starts the expression rather than naming a starting point. */
const startsExpression = (word: ArgWord): boolean =>
  word.literal && (word.value.startsWith("-") || word.value === "(" || word.value === "!")

/**
 * The names an expression lets through (`-name '*.js'`), when it is a plain conjunction: every `-name`/`-iname` not
 * negated must hold. With an `-o`, a `,`, parentheses, or no such test, there is no filter (undefined).
 */
const nameFilter = (expression: ReadonlyArray<ArgWord>): ReadonlyArray<string> | undefined => {
  const words = expression.map((word) => word.value)
  const names: Array<string> = []
  for (let at = 0; at < words.length; at++) {
    const word = words[at]
    if (word === "-o" || word === "-or" || word === "," || word === "(" || word === ")") return undefined
    if ((word === "-name" || word === "-iname") && at + 1 < words.length) {
      const negated = at > 0 && (words[at - 1] === "!" || words[at - 1] === "-not")
      const value = expression[at + 1]
      if (!value.literal || value.glob) return undefined
      if (!negated) names.push(value.value)
      at++
    } else if (primaries.get(word) !== undefined || newer.test(word)) at++
  }
  // Every positive test must hold: the last one is as good a filter as any (each alone is a superset).
  return names.length === 0 ? undefined : [names[names.length - 1]]
}

/** `find [-H|-L|-P] [-D opts] [-Olevel] [starting-point…] [expression]`. */
export const find: CustomCommand = {
  interpret: (args) => {
    const reads: Array<PathOperand> = []
    let at = leading(args)
    let starts = 0
    for (; at < args.length && !startsExpression(args[at]); at++) {
      const word = args[at]
      if (TableInterpreter.mayYieldOption(word) || !TableInterpreter.isSingle(word))
        return TableInterpreter.notKnown(`${word.value} may become a find primary when the shell expands it`)
      reads.push({ index: at + 1, value: word.value })
      starts++
    }
    const expression = args.slice(at)
    for (; at < args.length; at++) {
      const word = args[at]
      if (!word.literal || word.glob) return TableInterpreter.notKnown(`${word.value} may become a find primary`)
      const name = word.value
      const match = newer.exec(name)
      const known = primaries.has(name) || match !== null
      if (!known) return TableInterpreter.notKnown(`find ${name} is not a read-only primary`)
      const role = match !== null ? (match[1] === "t" ? "text" : "read") : primaries.get(name)
      if (role === undefined) continue
      const value = args[at + 1]
      if (value === undefined) return TableInterpreter.notKnown(`find ${name} needs an argument`)
      if (!TableInterpreter.isSingle(value)) return TableInterpreter.notKnown(`${value.value} may become several words`)
      if (role === "read") reads.push({ index: at + 2, value: value.value })
      at++
    }
    // Every primary of the table tests names and metadata: find reads no file's contents.
    const only = nameFilter(expression)
    return {
      known: true,
      readOnly: true,
      reads,
      writes: [],
      names: true,
      ...(starts === 0 ? { implicitReads: ["."] } : {}),
      ...(only === undefined ? {} : { skips: { hidden: false, ignored: false, only } })
    }
  }
}
