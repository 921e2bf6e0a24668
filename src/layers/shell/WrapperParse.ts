/**
 * Reads a wrapper's arguments against its option table (`WrapperTables.ts`): where the wrapped command starts, the
 * `NAME=VALUE` words before it, and what `env -S` splits its string into.
 */
import * as OptionParser from "../../domain/shell/OptionParser.js"
import type { Word } from "./ShellWords.js"
import type { Wrapper } from "./Wrapper.js"

const assignmentWord = /^([A-Za-z_][A-Za-z0-9_]*)=/

/** What a wrapper's arguments say about the command it runs. */
export type WrapperParse =
  /** The command starts at `start` in the arguments (`start === args.length`: none, the wrapper runs alone). */
  | {
      readonly _tag: "Command"
      readonly start: number
      readonly assignments: ReadonlyArray<string>
      readonly options: ReadonlyArray<OptionParser.Parsed>
    }
  /** An option with which no command runs (`command -v rm`). */
  | { readonly _tag: "NoCommand" }
  /** `env -S STRING`: the same arguments with STRING split into words in place of the option. */
  | { readonly _tag: "Split"; readonly args: ReadonlyArray<Word> }
  /** An option the table does not know: the command may start at any word from `from` on. */
  | { readonly _tag: "Unknown"; readonly from: number; readonly reason: string }
  /** The command is only known at run time (`env -S "$x"`, a split string with quoting we do not read). */
  | { readonly _tag: "Opaque"; readonly reason: string }

/** A word with a known value and nothing active in it (quoted). */
export const literalWord = (value: string): Word => ({
  value,
  literal: true,
  glob: false,
  template: [{ _tag: "Text", text: value, quoted: true }]
})

/**
 * Splits an `env -S` string as env does: blanks separate words, quotes group them, `\_` is a blank, `\c` ends the
 * string, `#` at a word's start begins a comment. Undefined for what is only known at run time (`${VAR}`) or does
 * not parse (an unterminated quote).
 */
export const splitString = (text: string): ReadonlyArray<string> | undefined => {
  if (text.includes("$")) return undefined
  const words: Array<string> = []
  let current: string | undefined
  let quote: "'" | '"' | undefined
  const escapes: Record<string, string> = { _: " ", t: "\t", n: "\n", r: "\r", f: "\f", v: "\v", "\\": "\\" }
  for (let i = 0; i < text.length; i++) {
    const char = text[i]
    if (quote === "'") {
      if (char === "'") quote = undefined
      else current = (current ?? "") + char
      continue
    }
    if (char === "\\") {
      const next = text[i + 1]
      if (next === undefined) return undefined
      i++
      if (next === "c") break
      current = (current ?? "") + (escapes[next] ?? next)
      continue
    }
    if (quote === '"') {
      if (char === '"') quote = undefined
      else current = (current ?? "") + char
      continue
    }
    if (char === "'" || char === '"') {
      quote = char
      current ??= ""
    } else if (/\s/.test(char)) {
      if (current !== undefined) words.push(current)
      current = undefined
    } else if (char === "#" && current === undefined) {
      break
    } else {
      current = (current ?? "") + char
    }
  }
  if (quote !== undefined) return undefined
  if (current !== undefined) words.push(current)
  return words
}

/** The index of the word holding an option and how many words it spans (attached value or the next word). */
const optionSpan = (table: OptionParser.OptionTable, word: string): number => {
  if (word.startsWith("--")) return word.includes("=") ? 1 : 2
  const letters = Array.from(word.slice(1))
  const at = letters.findIndex((letter) => table.short?.[letter] !== "flag")
  return at < letters.length - 1 ? 1 : 2
}

/** Reads the arguments of a wrapper (the words after its name). */
export const parseWrapper = (wrapper: Wrapper, args: ReadonlyArray<Word>): WrapperParse => {
  const parsed = OptionParser.parse(
    wrapper.options,
    args.map((word) => word.value)
  )
  const unknown = parsed.items.find((item) => item._tag === "Unknown")
  if (unknown !== undefined) return { _tag: "Unknown", from: unknown.index + 1, reason: unknown.reason }
  const options = OptionParser.options(parsed)
  if (options.some((option) => wrapper.noCommand?.includes(option.name) === true)) return { _tag: "NoCommand" }
  const split = options.find((option) => wrapper.split?.includes(option.name) === true)
  if (split !== undefined) {
    const at = split.index
    const span = optionSpan(wrapper.options, args[at].value)
    const words = args.slice(at, at + span)
    const pieces = words.every((word) => word.literal) ? splitString(split.value ?? "") : undefined
    if (pieces === undefined)
      return { _tag: "Opaque", reason: `${args[at].value} with a string known only at run time` }
    return { _tag: "Split", args: [...args.slice(0, at), ...pieces.map(literalWord), ...args.slice(at + span)] }
  }
  let start = parsed.rest
  if (wrapper.dash === true && args[start]?.value === "-") start++
  start += wrapper.leading ?? 0
  const assignments: Array<string> = []
  while (wrapper.assignments === true && start < args.length) {
    const match = assignmentWord.exec(args[start].value)
    if (match === null) break
    assignments.push(match[1])
    start++
  }
  return { _tag: "Command", start: Math.min(start, args.length), assignments, options }
}
