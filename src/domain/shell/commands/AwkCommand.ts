/**
 * `awk 'PROGRAM' FILE…` as a read-only command when the program only transforms text. An awk program can run
 * commands (`system()`, `print | "cmd"`, `"cmd" | getline`), write files (`print > "f"`), read files no word names
 * (`getline < "f"`) and, in gawk, load code (`@load`, `@include`, indirect calls `@f()`): a program holding any of
 * `system`, `getline`, `close`, `fflush`, `|`, `>`, `<` or `@` is not understood (a comparison such as `$3 > 1`
 * asks too; allow-list first). Only `-F SEP`, `-v NAME=VALUE` and `--` are accepted: `-f FILE`, `-e`, `-i`, `-l`
 * and gawk's long options read program text from elsewhere. Operands are files read, except `NAME=VALUE`
 * assignments.
 */

import type { ArgWord, CustomCommand } from "../CommandTable.js"
import type { PathOperand } from "../FileEffect.js"
import * as TableInterpreter from "../TableInterpreter.js"

const assignment = /^[A-Za-z_][A-Za-z0-9_]*=/

/** Why the program text is not plain text transformation, or undefined when it is. */
export const programProblem = (program: string): string | undefined => {
  const found = /\bsystem\b|\bgetline\b|\bclose\b|\bfflush\b|\||>|<|@|\bENVIRON\b|\bPROCINFO\b/.exec(program)
  return found === null ? undefined : `the awk program uses \`${found[0]}\``
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
