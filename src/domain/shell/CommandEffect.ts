/**
 * What one simple command does to files, judged from its words alone: whether it only reads, and which of its
 * words name files it reads or writes. The permission policy checks those paths against Read and Edit rules after
 * resolving them as the shell would. The knowledge is data (the command tables); this module is their interpreter.
 */
import type { ArgWord } from "./CommandTable.js"
import * as CommandTables from "./CommandTables.js"
import * as TableInterpreter from "./TableInterpreter.js"

export type { ArgWord } from "./CommandTable.js"

/** A word of the command (or the part of it after `--opt=` or `-t`) that names a file or directory. */
export interface PathOperand {
  /** Index in the command's argv (0 is the command name). */
  readonly index: number
  /** The path as written in that word (the part after an option prefix such as `--target-directory=`). */
  readonly value: string
  /**
   * True when the word is an option's value (`--contents=FILE`): such a file is read for its contents even by a
   * command that otherwise reads only names (`names`) or only what git stores (`tracked`).
   */
  readonly option?: boolean | undefined
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
  /**
   * Directories the command reads recursively without any word naming them (`.` for `grep -r x`, `find`, `rg`,
   * `git log -p`), relative to the command's working directory.
   */
  readonly implicitReads?: ReadonlyArray<string> | undefined
  /**
   * Files the command reads for their contents without any word naming them (`git config -l` prints
   * `~/.gitconfig`): `~/` is the home directory, a relative path is from the command's directory. They are checked
   * against Read rules only (a program's own configuration does not take it outside the working directories).
   */
  readonly implicitFiles?: ReadonlyArray<string> | undefined
  /**
   * The command reads only the names and metadata of the paths its operands and implicit reads name (`ls`, `stat`,
   * `find`, `test -f`, `git status`): Read rules, which protect contents, do not apply to them.
   */
  readonly names?: boolean | undefined
  /**
   * The command prints only what git stores (tracked files, committed history) for its operands and implicit reads
   * (`git diff`, `git show`, `git grep`): a Read rule applies to them only when git stores a path of the rule.
   */
  readonly tracked?: boolean | undefined
  /** What a searcher leaves out of the trees it walks (`rg` skips hidden and gitignored files by default). */
  readonly skips?: Skips | undefined
}

/** The files a recursive searcher leaves out unless told otherwise. */
export interface Skips {
  /** Names starting with `.` below the starting points. */
  readonly hidden: boolean
  /** Files its ignore rules (`.gitignore` in a git repository) exclude. */
  readonly ignored: boolean
}

/** Every word that does not start with `-` (and `-` itself is stdin, not a file): the conservative guess. */
const operandWords = (argv: ReadonlyArray<ArgWord>): ReadonlyArray<PathOperand> =>
  argv.flatMap((word, index) =>
    index > 0 && word.value !== "" && !word.value.startsWith("-") ? [{ index, value: word.value }] : []
  )

/** The conservative answer for a command that is not understood. */
export const unknown = (argv: ReadonlyArray<ArgWord>, reason: string): CommandEffect => {
  const operands = operandWords(argv)
  return { known: false, readOnly: false, reason, reads: operands, writes: operands }
}

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
  return effect.known ? effect : { ...unknown(argv, effect.reason ?? `${head.value} is not understood`) }
}

/**
 * Describes a command from its words (after wrappers and assignments are stripped, unquoted, each word exactly as
 * the command receives it). Unknown commands and unknown options give `known: false` with every operand counted as
 * both read and written.
 */
export const describe = (argv: ReadonlyArray<string>): CommandEffect =>
  describeWords(argv.map((value) => ({ value, literal: true, glob: false })))
