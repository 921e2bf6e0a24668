/**
 * What a command does to files, as data: the words of a command as the analyzer sees them, the words naming the
 * files it reads or writes, and the conservative answer for a command that is not understood. The command tables
 * produce these values; CommandEffect.ts is their interpreter.
 */

/** A word of a command as the analyzer sees it. */
export interface ArgWord {
  /** The unquoted value, or the text as written when the word holds an expansion. */
  readonly value: string
  /** False when the word holds an expansion: its value is only known when the shell runs. */
  readonly literal: boolean
  /** True when an unquoted glob or brace pattern may turn the word into other words. */
  readonly glob: boolean
}

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
   * Files the command writes without any word naming them (`git config core.hooksPath x` and `git remote add` write
   * `.git/config`): `~/` is the home directory, a relative path is from the command's directory. Kept even when the
   * command is not understood (its operands are then guessed as well).
   */
  readonly implicitWrites?: ReadonlyArray<string> | undefined
  /**
   * Directories the command may rewrite anywhere below without naming the files (`git checkout .`, `git stash`,
   * `git reset --hard`, `git merge`: any tracked file of the work tree), relative to the command's directory.
   */
  readonly implicitTreeWrites?: ReadonlyArray<string> | undefined
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
  /**
   * Outside a git repository the command fails before reading anything (`git grep` without `--no-index`: git
   * stops with "not a git repository" unless `grep.fallbackToNoIndex` is set): the directory git runs in, relative
   * to the command's (`-C DIR`, else `.`).
   */
  readonly repositoryOnly?: string | undefined
  /** What a searcher leaves out of the trees it walks (`rg` skips hidden and gitignored files by default). */
  readonly skips?: Skips | undefined
}

/** The files a recursive searcher leaves out unless told otherwise. */
export interface Skips {
  /** Names starting with `.` below the starting points. */
  readonly hidden: boolean
  /** Files its ignore rules (`.gitignore` in a git repository) exclude. */
  readonly ignored: boolean
  /**
   * Globs of which one must match a file for it to be reached (`rg -g '*.js'`, `find -name '*.js'`; see
   * NameFilter.ts); absent when every file may be.
   */
  readonly only?: ReadonlyArray<string> | undefined
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
