/**
 * `test`, `[` and `[[`: conditions that only read, except where bash evaluates text as code. `-v NAME` and
 * `-R NAME` evaluate an array subscript in NAME (`test -v 'a[$(cmd)]'` runs cmd), and inside `[[ … ]]` the
 * arithmetic comparisons (`-eq`, `-lt`, …) evaluate both sides as arithmetic, where a variable holding
 * `a[$(cmd)]` runs cmd. `test` and `[` compare integers without evaluating them, but their operators are found
 * after expansion, so a word only known at run time may itself become `-v`.
 */

import type { ArgWord, CustomCommand } from "../CommandTable.js"
import type { PathOperand } from "../FileEffect.js"
import * as TableInterpreter from "../TableInterpreter.js"

const evaluating = new Set(["-v", "-R"])
const arithmetic = new Set(["-eq", "-ne", "-lt", "-le", "-gt", "-ge"])
const binary = new Set(["=", "==", "!=", "<", ">", "-nt", "-ot", "-ef", "=~", ...arithmetic])
/** Unary tests on a file, whose operand is a path read (its metadata). */
const fileTests = new Set("-a -b -c -d -e -f -g -h -k -p -r -s -u -w -x -G -L -N -O -S".split(" "))

const isLiteral = (word: ArgWord | undefined, ...values: ReadonlyArray<string>): boolean =>
  word?.literal === true && !word.glob && (values.length === 0 || values.includes(word.value))

/**
 * True when the operators of `test`/`[` arguments are known before expansion. POSIX fixes the meaning of up to
 * four arguments by their count and position; with more, or with a word that may split, any word may be read as
 * an operator.
 */
const shapeKnown = (words: ReadonlyArray<ArgWord>): boolean => {
  if (words.every((word) => isLiteral(word))) return true
  if (words.some((word) => !TableInterpreter.isSingle(word))) return false
  switch (words.length) {
    case 1:
      return true
    case 2:
      return isLiteral(words[0])
    case 3:
      return (
        (isLiteral(words[1]) && binary.has(words[1].value)) ||
        (isLiteral(words[0], "!") && isLiteral(words[1])) ||
        (isLiteral(words[0], "(") && isLiteral(words[2], ")"))
      )
    case 4:
      return (
        (isLiteral(words[0], "!") && shapeKnown(words.slice(1))) ||
        (isLiteral(words[0], "(") && isLiteral(words[3], ")") && shapeKnown(words.slice(1, 3)))
      )
    default:
      return false
  }
}

/** The operands of unary file tests, as reads (indices in argv, the command name being 0). */
const fileReads = (words: ReadonlyArray<ArgWord>): ReadonlyArray<PathOperand> =>
  words.flatMap((word, at) => {
    const operand = words[at + 1]
    return isLiteral(word) && fileTests.has(word.value) && operand !== undefined
      ? [{ index: at + 2, value: operand.value }]
      : []
  })

const judge = (words: ReadonlyArray<ArgWord>, problem: string | undefined) => ({
  known: true,
  readOnly: problem === undefined,
  reason: problem,
  reads: fileReads(words),
  writes: [],
  // File tests look at metadata (type, size, permissions, times), never at contents.
  names: true
})

/** `test EXPR` and `[ EXPR ]`. */
export const test: CustomCommand = {
  interpret: (args, name) => {
    const bracket = name === "["
    if (bracket && !isLiteral(args[args.length - 1], "]")) return TableInterpreter.notKnown("[ without ]")
    const words = bracket ? args.slice(0, -1) : args
    const evaluated = words.find((word) => isLiteral(word) && evaluating.has(word.value))
    if (evaluated !== undefined) return judge(words, `${name} ${evaluated.value} evaluates array subscripts`)
    return judge(words, shapeKnown(words) ? undefined : `a word of ${name} may become an operator when expanded`)
  }
}

const integer = /^-?\d+$/

/** `[[ EXPR ]]`: operators are syntax here, but `-v`, `-R` and arithmetic comparisons evaluate their operands. */
export const doubleBracket: CustomCommand = {
  interpret: (args) => {
    const words = isLiteral(args[args.length - 1], "]]") ? args.slice(0, -1) : args
    for (let at = 0; at < words.length; at++) {
      const word = words[at]
      if (!isLiteral(word)) continue
      if (evaluating.has(word.value)) return judge(words, `[[ ${word.value} evaluates array subscripts`)
      if (arithmetic.has(word.value)) {
        const sides = [words[at - 1], words[at + 1]]
        if (sides.some((side) => side === undefined || !isLiteral(side) || !integer.test(side.value)))
          return judge(words, `[[ ${word.value} evaluates its operands as arithmetic`)
      }
    }
    return judge(words, undefined)
  }
}
