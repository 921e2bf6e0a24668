/**
 * What one simple command does to files, judged from its words alone: whether it only reads, and which of its
 * words name files it reads or writes. The permission policy checks those paths against Read and Edit rules after
 * resolving them as the shell would.
 */
import * as ReadOnlyCommands from "../ReadOnlyCommands.js"

/** A word of the command (or the part of it after `--opt=` or `-t`) that names a file or directory. */
export interface PathOperand {
  /** Index in the command's argv (0 is the command name). */
  readonly index: number
  /** The path as written in that word (the part after an option prefix such as `--target-directory=`). */
  readonly value: string
}

/** What a command does, as far as its words tell. */
export interface CommandEffect {
  /**
   * True when every option and operand was understood from the command's table; when false, `reads` and `writes`
   * are a conservative guess (every operand both read and written).
   */
  readonly known: boolean
  /** Only reads: the command, every option and every operand are known to be safe. */
  readonly readOnly: boolean
  /** Why the command is not read-only (for traces); undefined when it is. */
  readonly reason?: string | undefined
  /** Words naming files or directories the command reads (a directory read recursively counts as read). */
  readonly reads: ReadonlyArray<PathOperand>
  /** Words naming files or directories the command creates, changes or removes. */
  readonly writes: ReadonlyArray<PathOperand>
}

/** Every word that does not start with `-` (and `-` itself is stdin, not a file): the conservative guess. */
const operandWords = (argv: ReadonlyArray<string>): ReadonlyArray<PathOperand> =>
  argv.flatMap((value, index) => (index > 0 && value !== "" && !value.startsWith("-") ? [{ index, value }] : []))

/**
 * Describes a command from its words (after wrappers and assignments are stripped, unquoted). Unknown commands and
 * unknown options give `known: false` with every operand counted as both read and written.
 */
export const describe = (argv: ReadonlyArray<string>): CommandEffect => {
  const operands = operandWords(argv)
  const readOnly = ReadOnlyCommands.isReadOnlyCommand(argv)
  return {
    known: false,
    readOnly,
    reason: readOnly ? undefined : `${argv[0] ?? "the command"} is not known to be read-only`,
    reads: operands,
    writes: readOnly ? [] : operands
  }
}
