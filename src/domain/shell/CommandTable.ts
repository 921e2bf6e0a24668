/**
 * The data format of a command table: which options a command accepts (written as a man page writes them,
 * `-n, --lines=N`), what each option's value and each operand is (a path read, a path written, plain text), and
 * whether the command may run at all without asking. A table lists only options known to be harmless for a
 * read-only command (or, for commands that write by design, every option whose effect on paths is understood):
 * anything not in it is unknown, and unknown is never read-only.
 */
import type { ArgWord, CommandEffect, Skips } from "./FileEffect.js"
import type * as OptionParser from "./OptionParser.js"

export type { ArgWord } from "./FileEffect.js"

/**
 * What a word means to the command: a path it reads, a path it writes (creates, changes, removes), a path it moves
 * (reads and removes), or text that names no file.
 */
export type Role = "read" | "write" | "move" | "text"

/**
 * The role of an option's value, from the placeholder that names it in the table: `FILE`, `DIR` and `PATH` are
 * read, `OUT` and `TARGET` are written; every other placeholder in this list is text. A placeholder outside the
 * list makes the table invalid (the table tests check every table), so a new placeholder is a deliberate choice.
 */
export const placeholderRoles: Readonly<Record<string, Role>> = {
  FILE: "read",
  DIR: "read",
  PATH: "read",
  OUT: "write",
  TARGET: "write",
  N: "text",
  SIZE: "text",
  TEXT: "text",
  PATTERN: "text",
  WHEN: "text",
  WORD: "text",
  FORMAT: "text",
  LIST: "text",
  NAME: "text",
  MODE: "text",
  SEP: "text",
  TIME: "text",
  TYPE: "text",
  REV: "text",
  PROGRAM: "text",
  KEY: "text"
}

/** How a command uses its operands (the words that are not options or option values). */
export interface OperandRule {
  /** Roles of the first operands, in order (a pattern, a script, `SET1 SET2`). */
  readonly leading?: ReadonlyArray<Role>
  /** The leading operands are absent when one of these options is given (`grep -e PATTERN`, `sed -f FILE`). */
  readonly leadingUnless?: ReadonlyArray<string>
  /** Role of every operand after the leading ones; `none` when there may be no more (more → unknown). */
  readonly rest: Role | "none"
  /**
   * The last of two or more operands is a destination with this role (`cp SRC… DEST`) unless one of `unless`
   * names it in an option (`-t DIR`). With a single operand the destination is implicit, which is not understood.
   */
  readonly destination?: { readonly role: Role; readonly unless: ReadonlyArray<string> }
}

/** One command's table. */
export interface CommandTable {
  /** Options, one entry per option with its aliases: `-n, --lines=N`, `--color[=WHEN]`, `-i[TEXT]`, `-t TARGET`. */
  readonly options: ReadonlyArray<string>
  /**
   * The command's other options, which are not read-only (`-o, --output=OUT` of `sort`, `--pre=TEXT` of `rg`).
   * They must be known so that an abbreviation resolves as the command resolves it (`--pre` is rg's `--pre`, not a
   * prefix of `--pretty`); using one makes the command not read-only, with the paths its value names.
   */
  readonly refused?: ReadonlyArray<string>
  readonly operands: OperandRule
  /** `-NUM` is accepted as an option (`head -5`). */
  readonly numeric?: boolean
  /** Options end at the first operand (the command does not permute its arguments). */
  readonly stopAtOperand?: boolean
  /**
   * The real command has no option or operand at all that writes a file or runs a program, so a word whose value
   * is only known at run time (`"$f"`, a glob) cannot make it do either. Without this, such a word where an option
   * could be makes the command not read-only.
   */
  readonly inert?: boolean
  /** The command changes files by design (`cp`, `rm`): its table is for knowing which paths, never read-only. */
  readonly writes?: boolean
  /** Directories read recursively without being named when no path operand is given (`grep -r` reads `.`). */
  readonly implicitRead?: (view: View) => boolean
  /**
   * The command reads only names and metadata of its operands and implicit reads (`ls`, `stat`, `du`), never their
   * contents; option values naming files (`FILE`) are still read for their contents.
   */
  readonly names?: boolean | ((view: View) => boolean)
  /** What the command leaves out of the directories it searches recursively (hidden, ignored files). */
  readonly skips?: (view: View) => Skips
  /** Further checks on the parsed words; returns why the command is not read-only, or undefined. */
  readonly check?: (view: View) => string | undefined
}

/** A parsed command, as the checks of a table see it. */
export interface View {
  /** The arguments (argv without the command name). */
  readonly args: ReadonlyArray<ArgWord>
  /**
   * The options given, by the first name of their table entry (`-n` for `--lines`), with their values and the
   * index in `args` of the word holding the value.
   */
  readonly options: ReadonlyArray<{
    readonly name: string
    readonly value?: string | undefined
    readonly valueIndex?: number | undefined
  }>
  /** The operands, with their index in `args`. */
  readonly operands: ReadonlyArray<{ readonly value: string; readonly index: number }>
  /** True when an option of this entry (any of its names) was given. */
  readonly has: (name: string) => boolean
}

/** A table entry after parsing: its names (`-n`, `--lines`), the arity and the role of its value. */
export interface Entry {
  readonly names: ReadonlyArray<string>
  readonly arity: OptionParser.Arity
  readonly role: Role
  readonly placeholder?: string | undefined
  /** True for an entry of the table's `refused` list. */
  readonly refused?: boolean
}

const entryPattern = /^(.*?)(?:(\[=?)([A-Z]+)\]|[= ]([A-Z]+))?$/

/** Parses one option entry such as `-n, --lines=N`; undefined when it is malformed or its placeholder unknown. */
export const parseEntry = (text: string): Entry | undefined => {
  const match = entryPattern.exec(text)
  if (match === null) return undefined
  const names = match[1].split(",").map((name) => name.trim())
  if (names.some((name) => !/^(?:-[A-Za-z0-9@?.]|--[a-z0-9][a-z0-9-]*)$/.test(name))) return undefined
  const placeholder = match[3] ?? match[4]
  if (placeholder === undefined) return { names, arity: "flag", role: "text" }
  const role = placeholderRoles[placeholder]
  if (role === undefined) return undefined
  return { names, arity: match[3] !== undefined ? "optional" : "value", role, placeholder }
}

/** A table compiled for the option parser: the parser's table plus each option name's entry. */
export interface Compiled {
  readonly parser: OptionParser.OptionTable
  readonly entries: ReadonlyMap<string, Entry>
  /** The entries that did not parse (reported by the table tests; such an option is simply unknown). */
  readonly invalid: ReadonlyArray<string>
}

const compiledTables = new WeakMap<CommandTable, Compiled>()

/** Compiles a table once (cached per table object). */
export const compile = (table: CommandTable): Compiled => {
  const cached = compiledTables.get(table)
  if (cached !== undefined) return cached
  const short: Record<string, OptionParser.Arity> = {}
  const long: Record<string, OptionParser.Arity> = {}
  const entries = new Map<string, Entry>()
  const invalid: Array<string> = []
  const texts = [
    ...table.options.map((text) => [text, false] as const),
    ...(table.refused ?? []).map((text) => [text, true] as const)
  ]
  for (const [text, refused] of texts) {
    const parsed = parseEntry(text)
    if (parsed === undefined) {
      invalid.push(text)
      continue
    }
    const entry = refused ? { ...parsed, refused } : parsed
    for (const name of entry.names) {
      if (name.startsWith("--")) long[name.slice(2)] = entry.arity
      else short[name.slice(1)] = entry.arity
      entries.set(name, entry)
    }
  }
  const parser: OptionParser.OptionTable = {
    short,
    long,
    ...(table.stopAtOperand === true ? { stopAtOperand: true } : {}),
    ...(table.numeric === true ? { numericOption: true } : {})
  }
  const compiled: Compiled = { parser, entries, invalid }
  compiledTables.set(table, compiled)
  return compiled
}

/**
 * A command whose arguments are not a getopt-style option list (`find`'s expression, `git`'s subcommands, `sed`'s
 * script, `test`'s expression): it is interpreted by its own code, which returns what the command does (indices in
 * the effect count the command name as 0).
 */
export interface CustomCommand {
  readonly interpret: (args: ReadonlyArray<ArgWord>, name: string) => CommandEffect
}

/** The effect of a command that only reads and names no file (`echo`, `true`). */
export const readsNothing: CommandEffect = { known: true, readOnly: true, reads: [], writes: [] }
