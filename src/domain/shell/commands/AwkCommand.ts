/**
 * `awk 'PROGRAM' FILE…` as a read-only command when the program only transforms text. An awk program can run
 * commands (`system()`, `print | "cmd"`, `"cmd" | getline`), write files (`print > "f"`), read files no word names
 * (`getline < "f"`) and, in gawk, load code (`@load`, `@include`, indirect calls `@f()`): a program holding any of
 * `system`, `getline`, `close`, `fflush`, a pipe `|`, `@`, `ARGV`/`ARGC` (assigning them changes which files are
 * read: `BEGIN{ARGV[1]="secret"}`), or a `>` after `print`/`printf` is not understood (a
 * comparison such as `$3 > 1` or `NR <= 3` is plain text handling). Only `-F SEP`, `-v NAME=VALUE` and `--` are accepted: `-f FILE`, `-e`, `-i`, `-l`
 * and gawk's long options read program text from elsewhere. Operands are files read, except `NAME=VALUE`
 * assignments.
 */

import type { ArgWord, CustomCommand } from "../CommandTable.js"
import type { PathOperand } from "../FileEffect.js"
import * as TableInterpreter from "../TableInterpreter.js"

const assignment = /^[A-Za-z_][A-Za-z0-9_]*=/

/**
 * True when a `print` or `printf` statement of the program sends its output somewhere (`print > "f"`, `printf(…) >>
 * f`): a `>` after the keyword, outside parentheses and strings, before the statement ends. Anywhere else (`$3 > 1`,
 * `print (a > b)`) `>` is a comparison.
 */
const printRedirect = (program: string): boolean => {
  for (const match of program.matchAll(/\bprintf?\b/g)) {
    let depth = 0
    for (let i = match.index + match[0].length; i < program.length; i++) {
      const c = program[i]
      if (c === '"') {
        for (i++; i < program.length && program[i] !== '"'; i++) if (program[i] === "\\") i++
        continue
      }
      if (c === "(") depth++
      else if (c === ")") depth--
      else if (depth <= 0 && (c === ";" || c === "}" || c === "\n")) break
      else if (depth <= 0 && c === ">") return true
    }
  }
  return false
}

/**
 * Why the program text is not plain text transformation, or undefined when it is. `<` only reads a file after
 * `getline` (refused on its own), `||` is a logical or, and `>` writes only after `print`/`printf`: comparisons such as
 * `NR<=3`, `length > 10` or `$1 == "a" || $2 == "b"` are plain text handling.
 */
export const programProblem = (program: string): string | undefined => {
  const found =
    /\bsystem\b|\bgetline\b|\bclose\b|\bfflush\b|(?<!\|)\|(?!\|)|@|\bENVIRON\b|\bPROCINFO\b|\bARG[VC]\b/.exec(program)
  if (found !== null) return `the awk program uses \`${found[0]}\``
  return printRedirect(program) ? "the awk program sends `print` output to a file or command (`>`)" : undefined
}

export const awk: CustomCommand = {
  interpret: (args: ReadonlyArray<ArgWord>) => {
    let at = 0
    while (at < args.length) {
      const word = args[at]
      if (!word.literal || word.glob)
        return TableInterpreter.notKnown(`${word.value} is only known when the shell runs`)
      const value = word.value
      if (value === "--") {
        at++
        break
      }
      if (!value.startsWith("-") || value === "-") break
      if (value === "-F" || value === "-v") {
        const next = args[at + 1]
        if (next === undefined || !next.literal) return TableInterpreter.notKnown(`awk ${value} needs a known value`)
        at += 2
        continue
      }
      if (value.startsWith("-F") || value.startsWith("-v")) {
        at++
        continue
      }
      return TableInterpreter.notKnown(`awk option ${value} is not read-only`)
    }
    const program = args[at]
    if (program === undefined) return TableInterpreter.notKnown("awk without a program")
    if (!program.literal) return TableInterpreter.notKnown("the awk program is only known when the shell runs")
    const problem = programProblem(program.value)
    if (problem !== undefined) return TableInterpreter.notKnown(problem)
    const reads: Array<PathOperand> = []
    for (let index = at + 1; index < args.length; index++) {
      const word = args[index]
      if (!word.literal && !TableInterpreter.isSingle(word)) {
        return TableInterpreter.notKnown(`${word.value} may become several words, assignments among them`)
      }
      if (word.literal && assignment.test(word.value)) continue
      if (word.value === "-") continue
      // Indices in the effect count the command name as 0.
      reads.push({ index: index + 1, value: word.value })
    }
    return { known: true, readOnly: true, reads, writes: [] }
  }
}
