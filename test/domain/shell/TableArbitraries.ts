/**
 * fast-check generators derived from the command tables themselves, so every table entry (and every new one) is
 * covered: read-only command lines made of listed options with valid values and plain operands, and the ways to
 * spoil them (an unlisted option, a refused option, an unambiguous prefix of a refused long option).
 */
import { FastCheck } from "effect"
import { type CommandTable, compile, type Entry } from "../../../src/domain/shell/CommandTable.js"
import * as CommandTables from "../../../src/domain/shell/CommandTables.js"
import { branch, config, tag } from "../../../src/domain/shell/commands/GitListing.js"
import { subcommands } from "../../../src/domain/shell/commands/GitSubcommands.js"

/** A table to generate from: the words before its arguments (`["git", "log"]`) and the table. */
export interface Subject {
  readonly prefix: ReadonlyArray<string>
  readonly table: CommandTable
  /** Operands that satisfy the table's check (`date +%s`), instead of plain words. */
  readonly operands?: ReadonlyArray<string>
  /** Options to always give (`command -v`, `git config --get`). */
  readonly required?: ReadonlyArray<string>
  /** Entries (by first name) never generated: their value must be special (`sed -f`). */
  readonly skip?: ReadonlyArray<string>
  /** Values by entry (first name) where a plain word would be refused (`sed -e SCRIPT`). */
  readonly values?: Readonly<Record<string, string>>
}

const special: Readonly<Record<string, Partial<Subject>>> = {
  date: { operands: ["+%s"] },
  command: { required: ["-v"] },
  env: { operands: ["A=1"] },
  sed: { operands: ["1p"], skip: ["-f"], values: { "-e": "2p" } },
  node: { skip: ["-v", "-h"], required: ["--version"] },
  python: { skip: ["-V"], required: ["--version"] },
  python3: { skip: ["-V"], required: ["--version"] },
  // listed to know which objects they print, never read-only (its table's check)
  "git cat-file": { skip: ["--batch", "--batch-check", "--batch-command", "--batch-all-objects"] }
}

/** Every read-only table among the commands, plus git's subcommands. */
export const subjects: ReadonlyArray<Subject> = [
  ...[...CommandTables.commands.entries()].flatMap(([name, command]) =>
    "interpret" in command || command.writes === true ? [] : [{ prefix: [name], table: command, ...special[name] }]
  ),
  ...Object.entries(subcommands).map(([name, table]) => ({ prefix: ["git", name], table, ...special[`git ${name}`] })),
  { prefix: ["git", "branch"], table: branch, required: ["--list"] },
  { prefix: ["git", "tag"], table: tag, required: ["-l"] },
  { prefix: ["git", "config"], table: config, required: ["--get"], operands: ["user.name"] }
]

/** The distinct entries of a table (options or refused). */
export const entriesOf = (table: CommandTable, refused: boolean): ReadonlyArray<Entry> =>
  [...new Set(compile(table).entries.values())].filter((entry) => (entry.refused === true) === refused)

const plainValue = (entry: Entry): string =>
  entry.placeholder === "N" ? "3" : entry.role === "read" ? "some.txt" : entry.role === "text" ? "abc" : "out.txt"

/** The words of one option use: a random name of the entry, with its value attached or separate. */
const optionWords = (entry: Entry, value: string): FastCheck.Arbitrary<ReadonlyArray<string>> =>
  FastCheck.tuple(FastCheck.constantFrom(...entry.names), FastCheck.boolean(), FastCheck.boolean()).map(
    ([name, attached, given]) => {
      const long = name.startsWith("--")
      if (entry.arity === "flag") return [name]
      if (entry.arity === "optional") return given ? [long ? `${name}=${value}` : `${name}${value}`] : [name]
      if (attached) return [long ? `${name}=${value}` : `${name}${value}`]
      return [name, value]
    }
  )

const operandCount = (table: CommandTable): FastCheck.Arbitrary<number> => {
  const rule = table.operands
  const leading = rule.leading ?? []
  const writeAt = leading.findIndex((role) => role === "write" || role === "move")
  const max =
    writeAt !== -1 ? writeAt : rule.rest === "none" || rule.rest === "write" ? leading.length : leading.length + 3
  return FastCheck.integer({ min: Math.min(leading.length, max), max })
}

/** A plain operand word (built once: building a `stringMatching` arbitrary costs far more than drawing from it). */
const plainOperand = FastCheck.stringMatching(/^[a-z][a-z0-9_.]{0,6}$/)

const readOnlyLines = new WeakMap<Subject, FastCheck.Arbitrary<ReadonlyArray<string>>>()

/**
 * A read-only use of the subject: listed options with valid values, then plain operands. Built once per subject
 * (the properties that pick a subject per run chain into it, and building costs far more than drawing).
 */
export const readOnlyLine = (subject: Subject): FastCheck.Arbitrary<ReadonlyArray<string>> => {
  let built = readOnlyLines.get(subject)
  if (built === undefined) {
    built = buildReadOnlyLine(subject)
    readOnlyLines.set(subject, built)
  }
  return built
}

const buildReadOnlyLine = (subject: Subject): FastCheck.Arbitrary<ReadonlyArray<string>> => {
  const entries = entriesOf(subject.table, false).filter((entry) => !(subject.skip ?? []).includes(entry.names[0]))
  const uses = entries.map((entry) => optionWords(entry, subject.values?.[entry.names[0]] ?? plainValue(entry)))
  const options =
    uses.length === 0
      ? FastCheck.constant<ReadonlyArray<ReadonlyArray<string>>>([])
      : FastCheck.array(FastCheck.oneof(...uses), { maxLength: 4 })
  const operands =
    subject.operands !== undefined
      ? FastCheck.constant(subject.operands)
      : operandCount(subject.table).chain((count) =>
          FastCheck.array(plainOperand, { minLength: count, maxLength: count })
        )
  return FastCheck.tuple(options, operands).map(([chosen, words]) => [
    ...subject.prefix,
    ...(subject.required ?? []),
    ...chosen.flat(),
    ...words
  ])
}

/** A word that could be a long option's name (built once, as `plainOperand`). */
const longName = FastCheck.stringMatching(/^[a-z][a-z-]{1,12}$/)

const unlistedLongs = new WeakMap<CommandTable, FastCheck.Arbitrary<string>>()

/** A long option name the table does not know and that is no prefix of a name it knows (built once per table). */
export const unlistedLong = (table: CommandTable): FastCheck.Arbitrary<string> => {
  let built = unlistedLongs.get(table)
  if (built === undefined) {
    const names = [...compile(table).entries.keys()]
      .filter((name) => name.startsWith("--"))
      .map((name) => name.slice(2))
    built = longName.filter((name) => !names.some((known) => known.startsWith(name))).map((name) => `--${name}`)
    unlistedLongs.set(table, built)
  }
  return built
}

/** A short letter the table does not know. */
export const unlistedShort = (table: CommandTable): ReadonlyArray<string> => {
  const known = new Set([...compile(table).entries.keys()].filter((name) => !name.startsWith("--")))
  return [..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"]
    .map((letter) => `-${letter}`)
    .filter((name) => !known.has(name))
}

/**
 * Refused options as a command would see them, including every abbreviation that resolves to one of them only
 * (`--outp` for `--output`): each must make the command not read-only.
 */
export const refusedSpellings = (table: CommandTable): ReadonlyArray<ReadonlyArray<string>> => {
  const longNames = [...compile(table).entries.keys()]
    .filter((name) => name.startsWith("--"))
    .map((name) => name.slice(2))
  return entriesOf(table, true).flatMap((entry) =>
    entry.names.flatMap((name) => {
      const value = plainValue(entry)
      if (!name.startsWith("--")) return [entry.arity === "flag" ? [name] : [name, value]]
      const full = name.slice(2)
      const prefixes = [...Array(full.length).keys()]
        .map((length) => full.slice(0, length + 1))
        .filter((prefix) => prefix === full || longNames.filter((known) => known.startsWith(prefix)).length === 1)
      return prefixes.map((prefix) => (entry.arity === "flag" ? [`--${prefix}`] : [`--${prefix}=${value}`]))
    })
  )
}
