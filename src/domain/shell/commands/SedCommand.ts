/**
 * `sed` as a read-only command: its options from a table (never `-i`), and its script read command by command
 * against an allow-list. Printing, moving through lines, the hold space, branches, `s` with flags that only change
 * the text and `y` are allowed; `e` (runs the pattern space), `w`/`W` and `s///w` (write files), `s///e` (runs
 * the result), `r`/`R` (read other files), `a`/`i`/`c` (text whose end depends on fine parsing rules) and anything
 * not recognised are not. With `--sandbox`, GNU sed itself refuses `e`, `r` and `w`, so any script is read-only.
 */
import type { ArgWord, CommandTable, View } from "../CommandTable.js"

/** The options of GNU sed that neither edit files in place nor load a script from a file. */
const sedTable: CommandTable = {
  refused: ["-i, --in-place[=TEXT]", "--follow-symlinks"],
  options: [
    "-n, --quiet, --silent",
    "--debug",
    "-e, --expression=TEXT",
    "-f, --file=FILE",
    "-l, --line-length=N",
    "--posix",
    "-E, -r, --regexp-extended",
    "-s, --separate",
    "--sandbox",
    "-u, --unbuffered",
    "-z, --null-data",
    "--help",
    "--version"
  ],
  operands: { leading: ["text"], leadingUnless: ["-e", "-f"], rest: "read" }
}

/** Commands without arguments that only print, move through the input or use the hold space. */
const simple = new Set(["p", "P", "=", "d", "D", "n", "N", "g", "G", "h", "H", "x", "z", "F", "{", "}"])
/** Commands taking an optional number (`l 40`, `q 5`). */
const numbered = new Set(["l", "q", "Q"])
/** Branches and labels, whose label runs to a blank, `;` or the end of the line. */
const labelled = new Set(["b", "t", "T", ":"])

/** Skips a delimited part (`/re/`, `s/a/b/`) from `at` (just after the opening delimiter); -1 when unterminated. */
const skipDelimited = (script: string, at: number, delimiter: string): number => {
  for (let i = at; i < script.length; i++) {
    if (script[i] === "\\") i++
    else if (script[i] === delimiter) return i + 1
    else if (script[i] === "\n") return -1
  }
  return -1
}

/** Skips one address (`5`, `$`, `/re/I`, `\%re%`, `first~step`, `+N`, `~N`); returns `at` when there is none. */
const skipAddress = (script: string, at: number): number => {
  const number = /^(?:\d+(?:~\d+)?|\$|[+~]\d+)/.exec(script.slice(at))
  if (number !== null) return at + number[0].length
  let end = -1
  if (script[at] === "/") end = skipDelimited(script, at + 1, "/")
  else if (script[at] === "\\" && at + 1 < script.length) end = skipDelimited(script, at + 2, script[at + 1])
  if (end === -1) return at
  while (script[end] === "I" || script[end] === "M") end++
  return end
}

/** Why the script is not read-only, or undefined when every command in it is on the allow-list. */
export const scriptProblem = (script: string): string | undefined => {
  let at = 0
  while (at < script.length) {
    const c = script[at]
    if (c === ";" || c === " " || c === "\t" || c === "\n") {
      at++
      continue
    }
    if (c === "#") {
      const newline = script.indexOf("\n", at)
      at = newline === -1 ? script.length : newline + 1
      continue
    }
    at = skipAddress(script, at)
    if (script[at] === ",") at = skipAddress(script, at + 1)
    while (script[at] === " " || script[at] === "!") at++
    const command = script[at] ?? ""
    at++
    if (simple.has(command)) continue
    if (numbered.has(command)) {
      at += /^\s*\d*/.exec(script.slice(at))?.[0].length ?? 0
      continue
    }
    if (labelled.has(command)) {
      // GNU sed skips blanks before the label and ends it at a blank or `;`: what follows is the next command
      // (`:x w file` writes). A `}` in a label is refused by sed; it is not read-only here either.
      while (script[at] === " " || script[at] === "\t") at++
      const start = at
      while (at < script.length && !/[\s;]/.test(script[at])) at++
      if (script.slice(start, at).includes("}")) return `sed label ${script.slice(start, at)} is malformed`
      continue
    }
    if (command === "s" || command === "y") {
      const delimiter = script[at]
      if (delimiter === undefined || delimiter === "\\" || delimiter === "\n") return `sed ${command} is malformed`
      const middle = skipDelimited(script, at + 1, delimiter)
      const end = middle === -1 ? -1 : skipDelimited(script, middle, delimiter)
      if (end === -1) return `sed ${command} is unterminated`
      const flags = /^[gpiImM0-9]*/.exec(script.slice(end))?.[0] ?? ""
      at = end + (command === "s" ? flags.length : 0)
      if (at < script.length && !/[;\n}# \t]/.test(script[at])) return `sed ${command} with flag ${script[at]}`
      continue
    }
    return command === "" ? "sed script ends inside a command" : `sed command ${command} is not read-only`
  }
  return undefined
}

/** The script words: every `-e` value, else the first operand; undefined when a script comes from a file. */
const scriptWords = (view: View): ReadonlyArray<ArgWord> | undefined => {
  if (view.has("-f")) return undefined
  const expressions = view.options.filter((option) => option.name === "-e")
  if (expressions.length > 0) return expressions.map((option) => view.args[option.valueIndex ?? 0])
  const first = view.operands[0]
  return first === undefined ? [] : [view.args[first.index]]
}

const checkScript = (view: View): string | undefined => {
  if (view.has("--sandbox")) return undefined
  const words = scriptWords(view)
  if (words === undefined) return "sed -f runs a script from a file"
  if (words.length === 0) return "sed without a script"
  if (words.some((word) => !word.literal)) return "the sed script is only known when the shell runs"
  const expressions = view.options.filter((option) => option.name === "-e")
  const scripts = expressions.length > 0 ? expressions.map((option) => option.value ?? "") : words.map((w) => w.value)
  return scriptProblem(scripts.join("\n"))
}

/** `sed`: options from its table (never `-i`), and the script against the allow-list. */
export const sed: CommandTable = { ...sedTable, check: checkScript }
