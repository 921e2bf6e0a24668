/**
 * What one simple command does to files, judged from its words alone: whether it only reads, and which of its
 * words name files it reads or writes. The permission policy checks those paths against Read and Edit rules after
 * resolving them as the shell would. The knowledge is data (the command tables); this module is their interpreter.
 */
import * as CommandTables from "./CommandTables.js"
import { type ArgWord, type CommandEffect, unknown } from "./FileEffect.js"
import * as TableInterpreter from "./TableInterpreter.js"

export type { ArgWord, CommandEffect, PathOperand, Skips } from "./FileEffect.js"
export { unknown } from "./FileEffect.js"

/**
 * Describes a command from its words as the analyzer sees them (after wrappers and assignments are stripped):
 * words holding an expansion or a glob are judged by what they could become.
 */
export const describeWords = (argv: ReadonlyArray<ArgWord>): CommandEffect => {
  const head = argv[0]
  if (head === undefined) return unknown(argv, "empty command")
  // `[` and `[[` look like the start of a bracket pattern but are the test commands.
  const glob = head.glob && head.value !== "[" && head.value !== "[["
  if (!head.literal || glob) return unknown(argv, "the command name is only known when the shell runs")
  const command = CommandTables.lookup(head.value)
  if (command === undefined) return unknown(argv, `${head.value} is not a known command`)
  const args = argv.slice(1)
  const effect =
    "interpret" in command ? command.interpret(args, head.value) : TableInterpreter.interpret(command, args)
  if (effect === undefined) return unknown(argv, `${head.value} is not understood`)
  if (effect.known) return effect
  const guessed = unknown(argv, effect.reason ?? `${head.value} is not understood`)
  return {
    ...guessed,
    ...(effect.implicitWrites === undefined ? {} : { implicitWrites: effect.implicitWrites }),
    ...(effect.implicitTreeWrites === undefined ? {} : { implicitTreeWrites: effect.implicitTreeWrites })
  }
}

/**
 * Describes a command from its words (after wrappers and assignments are stripped, unquoted, each word exactly as
 * the command receives it). Unknown commands and unknown options give `known: false` with every operand counted as
 * both read and written.
 */
export const describe = (argv: ReadonlyArray<string>): CommandEffect =>
  describeWords(argv.map((value) => ({ value, literal: true, glob: false })))
