/**
 * The interpreter of command tables: parses a command's arguments against its table the way the command itself
 * does (GNU getopt_long rules, through OptionParser), then gives every option value and operand its role (read,
 * written, text) and decides whether the command only reads. Words whose value is only known when the shell runs
 * (expansions, globs) are judged by what they could become.
 */

import { type ArgWord, type CommandTable, compile, type Role, type View } from "./CommandTable.js"
import type { CommandEffect, PathOperand } from "./FileEffect.js"
import * as OptionParser from "./OptionParser.js"

type OptionItem = Extract<OptionParser.Parsed, { _tag: "Option" }>

/** A word that is exactly one word when the shell runs: a literal, or one double-quoted string. */
export const isSingle = (word: ArgWord): boolean =>
  !word.glob && (word.literal || /^"(?:[^"\\]|\\[\s\S])*"$/.test(word.value))

/** True when the shell may turn this word into one or more words starting with `-` (an option). */
export const mayYieldOption = (word: ArgWord): boolean => {
  if (word.literal && !word.glob) return false
  if (word.literal) return /^[-*?[{\\]/.test(word.value)
  if (!isSingle(word)) return true
  return /^"[-$`\\"]/.test(word.value)
}

/** True when the word's value is only known when the shell runs. */
export const isOpaque = (word: ArgWord): boolean => !word.literal || word.glob

/** Index in `args` of the word holding an option's value (the option's own word when the value is attached). */
const valueIndex = (item: OptionItem, indexed: ReadonlySet<number>, values: ReadonlyArray<string>): number => {
  const next = item.index + 1
  const attached = values[item.index].startsWith("--") ? values[item.index].includes("=") : undefined
  if (attached === true) return item.index
  if (attached === false) return next
  return !indexed.has(next) && next < values.length && values[next] === item.value ? next : item.index
}

/** A command that is not understood (the caller replaces reads and writes by the conservative guess). */
export const notKnown = (reason: string): CommandEffect => ({
  known: false,
  readOnly: false,
  reason,
  reads: [],
  writes: []
})

/** The effect of a subcommand interpreted on its own words, with indices moved to the whole command's argv. */
export const shift = (effect: CommandEffect, by: number): CommandEffect => {
  const move = (operands: ReadonlyArray<PathOperand>) =>
    operands.map((operand) => ({ ...operand, index: operand.index + by }))
  return { ...effect, reads: move(effect.reads), writes: move(effect.writes) }
}

/**
 * Why a word only known at run time makes a (not inert) command not understood: before the end of the options it
 * may become an option, or split into several words that do; after it, several words shift the operands' roles.
 */
const opaqueProblem = (
  table: CommandTable,
  args: ReadonlyArray<ArgWord>,
  at: { readonly end: number; readonly first: number; readonly consumed: ReadonlySet<number> }
): string | undefined => {
  const positional =
    table.operands.destination !== undefined ||
    (table.operands.leading ?? []).some((role) => role !== table.operands.rest)
  for (let index = 0; index < args.length; index++) {
    const word = args[index]
    if (!isOpaque(word)) continue
    const single = isSingle(word)
    // An option's value is taken whole, whatever it is; the first operand of a command that stops there may
    // itself turn out to be an option.
    const option = at.consumed.has(index) ? false : index < at.end || index === at.first
    if (option && mayYieldOption(word)) return `${word.value} may become an option when the shell expands it`
    // Word splitting can put any word anywhere; a glob only yields names that start as it does.
    if (!single && !word.literal && index < at.end) return `${word.value} may become several words, options among them`
    if (!single && positional) return `${word.value} may become several operands`
  }
  return undefined
}

/** The view a table's checks see. */
const viewOf = (
  args: ReadonlyArray<ArgWord>,
  items: ReadonlyArray<OptionParser.Parsed>,
  canonical: (name: string) => string,
  valueAt: (item: OptionItem) => number
): View => {
  const options = items.flatMap((item) =>
    item._tag === "Option"
      ? [
          {
            name: canonical(item.name),
            value: item.value,
            valueIndex: item.value === undefined ? undefined : valueAt(item)
          }
        ]
      : []
  )
  const operands = items.flatMap((item) => (item._tag === "Operand" ? [{ value: item.value, index: item.index }] : []))
  const given = new Set(options.map((option) => option.name))
  return { args, options, operands, has: (name) => given.has(canonical(name)) }
}

/** Interprets a command's arguments (argv without the name) against its table. */
export const interpret = (table: CommandTable, args: ReadonlyArray<ArgWord>): CommandEffect => {
  const compiled = compile(table)
  const values = args.map((word) => word.value)
  const parsed = OptionParser.parse(compiled.parser, values)
  const canonical = (name: string): string => compiled.entries.get(name)?.names[0] ?? name
  const inert = table.inert === true
  const unknownItem = parsed.items.find((item) => item._tag === "Unknown" && !(inert && isOpaque(args[item.index])))
  if (unknownItem !== undefined && unknownItem._tag === "Unknown") return notKnown(unknownItem.reason)

  const indexed = new Set(parsed.items.map((item) => item.index))
  const consumed = new Set<number>()
  for (const item of parsed.items) {
    if (item._tag === "Option" && item.value !== undefined) {
      const at = valueIndex(item, indexed, values)
      if (at !== item.index) consumed.add(at)
    }
  }
  const dashes = values.findIndex((value, at) => value === "--" && !consumed.has(at))
  const end = dashes !== -1 ? dashes : table.stopAtOperand === true ? parsed.rest : values.length

  const view = viewOf(args, parsed.items, canonical, (item) => valueIndex(item, indexed, values))
  const reads: Array<PathOperand> = []
  const writes: Array<PathOperand> = []
  const add = (role: Role, index: number, value: string, option?: boolean): void => {
    const operand = option === true ? { index: index + 1, value, option } : { index: index + 1, value }
    if (role === "read" || role === "move") reads.push(operand)
    if (role === "write" || role === "move") writes.push(operand)
  }
  const tableReads =
    table.operands.rest === "read" ||
    (table.operands.leading ?? []).includes("read") ||
    [...compiled.entries.values()].some((entry) => entry.role === "read")

  // Words only known at run time: harmless for an inert command (counted as reads when it reads files at all);
  // for any other command, a word that may become an option, or several words, is not understood.
  if (!inert) {
    const problem = opaqueProblem(table, args, { end, first: dashes === -1 ? parsed.rest : -1, consumed })
    if (problem !== undefined) return notKnown(problem)
  }

  for (const item of parsed.items) {
    if (item._tag === "Unknown") {
      if (tableReads) add("read", item.index, item.text, true)
      continue
    }
    if (item._tag !== "Option" || item.value === undefined) continue
    const role = compiled.entries.get(item.name)?.role ?? "text"
    const at = valueIndex(item, indexed, values)
    if (role !== "text") add(role, at, item.value, true)
    else if (inert && tableReads && isOpaque(args[at])) add("read", at, item.value, true)
  }

  const operands = view.operands
  const rule = table.operands
  const skipLeading = (rule.leadingUnless ?? []).some((name) => view.has(name))
  const leading = skipLeading ? [] : (rule.leading ?? [])
  const destination =
    rule.destination !== undefined && !rule.destination.unless.some((name) => view.has(name))
      ? rule.destination
      : undefined
  if (destination !== undefined && operands.length === 1) return notKnown("the destination is implicit")
  for (let n = 0; n < operands.length; n++) {
    const { value, index } = operands[n]
    let role: Role | "none" = n < leading.length ? leading[n] : rule.rest
    if (destination !== undefined && n === operands.length - 1) role = destination.role
    // A variable may become an option naming a file whose contents are read (a glob yields existing names: the
    // resolver looks at them).
    const opaque = inert && isOpaque(args[index])
    if (opaque) role = tableReads ? "read" : "text"
    if (role === "none") return notKnown(`unexpected operand ${value}`)
    if (role === "read" && value === "-") continue
    if (role !== "text") add(role, index, value, opaque && !args[index].literal)
  }

  const implicitReads = table.implicitRead?.(view) === true ? ["."] : undefined
  const refused = parsed.items.flatMap((item) =>
    item._tag === "Option" && compiled.entries.get(item.name)?.refused === true ? [item.name] : []
  )
  const unknownEffect = refused.find((name) => compiled.entries.get(name)?.role !== "write")
  if (unknownEffect !== undefined) return notKnown(`option ${unknownEffect} is not read-only`)
  const problem = refused.length > 0 ? `option ${refused[0]} is not read-only` : table.check?.(view)
  const reason =
    table.writes === true
      ? "the command writes files"
      : writes.length > 0
        ? `writes ${writes.map((operand) => operand.value).join(", ")}`
        : problem
  const names = typeof table.names === "function" ? table.names(view) : table.names === true
  const skips = table.skips?.(view)
  return {
    known: true,
    readOnly: reason === undefined,
    reason,
    reads,
    writes,
    ...(implicitReads === undefined ? {} : { implicitReads }),
    ...(names ? { names } : {}),
    ...(skips === undefined ? {} : { skips })
  }
}

/** Index in `args` of the first operand of a table's parse (the subcommand of `git`), undefined when none. */
export const firstOperandIndex = (table: CommandTable, args: ReadonlyArray<ArgWord>): number | undefined =>
  OptionParser.parse(
    compile(table).parser,
    args.map((word) => word.value)
  ).items.find((item) => item._tag === "Operand")?.index
