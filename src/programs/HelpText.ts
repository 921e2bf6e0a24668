/**
 * Output hygiene for what @effect/cli prints: no colour unless stdout is a terminal and `NO_COLOR` is unset, and a
 * help page that fits 100 columns — the usage line names the command by its full path (`armature tools schema`),
 * the command list shows each command with its description instead of a table padded to its longest usage.
 */
import { type Console, Effect } from "effect"

/** The widest line of a help page. */
export const width = 100

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI sequences start with ESC
const ansi = /\x1b\[[0-9;]*m/g

/** True when colour may be written: stdout is a terminal and `NO_COLOR` is unset or empty. */
export const colourAllowed = (): boolean =>
  process.stdout.isTTY === true && (process.env.NO_COLOR === undefined || process.env.NO_COLOR === "")

/** Removes ANSI colour sequences. */
export const stripColour = (text: string): string => text.replace(ansi, "")

/** The last space at or before `limit` outside `[…]` (so a usage's `[--flag value]` stays whole), else any. */
const breakAt = (text: string, limit: number): number => {
  let depth = 0
  let outside = -1
  for (let i = 0; i <= Math.min(limit, text.length - 1); i++) {
    const ch = text[i]
    if (ch === "[") depth++
    else if (ch === "]") depth = Math.max(0, depth - 1)
    else if (ch === " " && depth === 0) outside = i
  }
  return outside > 0 ? outside : text.lastIndexOf(" ", limit)
}

/**
 * Breaks a line longer than `width` at spaces (outside brackets when it can), continuing with its indentation plus
 * `extra` spaces.
 */
export const wrap = (line: string, extra = 2): Array<string> => {
  const indent = /^\s*/.exec(line)?.[0] ?? ""
  const out: Array<string> = []
  let rest = line
  while (rest.length > width) {
    const found = breakAt(rest, width)
    const cut = found <= indent.length + extra ? rest.lastIndexOf(" ", width) : found
    if (cut <= indent.length + extra) break
    out.push(rest.slice(0, cut).trimEnd())
    rest = `${indent}${" ".repeat(extra)}${rest.slice(cut).trimStart()}`
  }
  out.push(rest)
  return out
}

/** One entry of the command list: its path and its description (the last column). */
const commandEntry = (line: string): { path: string; description: string } | undefined => {
  const match = /^ {2}- (.*)$/.exec(stripColour(line).trimEnd())
  if (match === null) return undefined
  const columns = match[1].split(/ {2,}/)
  const usage = columns[0]
  const description = columns.length > 1 ? (columns.at(-1) ?? "") : ""
  const path = usage
    .split(" ")
    .filter((_, i, all) => all.slice(0, i + 1).every((w) => /^[a-z][a-z-]*$/.test(w)))
    .join(" ")
  return { path, description }
}

/**
 * Rewrites a help page: full command path in the usage line, a compact command list, lines wrapped; the colour of
 * the other lines is kept when `colour` is true.
 */
export const tidy = (text: string, commandPath: ReadonlyArray<string>, colour = false): string => {
  const lines = (colour ? text : stripColour(text)).split("\n").map((line) => line.trimEnd())
  const out: Array<string> = []
  const entries = lines.map(commandEntry)
  const pathWidth = Math.max(0, ...entries.map((e) => e?.path.length ?? 0))
  const pad = pathWidth + 4
  for (const [i, line] of lines.entries()) {
    const entry = entries[i]
    if (entry !== undefined) {
      const text = `  ${entry.path.padEnd(pathWidth)}  ${entry.description}`.trimEnd()
      out.push(...wrap(text, pad - 2))
      continue
    }
    // @effect/cli writes the usage of a subcommand as `$ schema …`: name it by its full path
    const plain = stripColour(line)
    if (plain.startsWith("$ ") && commandPath.length > 1) {
      const rest = plain.slice(2).split(" ").slice(1).join(" ")
      out.push(...wrap(`$ ${commandPath.join(" ")}${rest === "" ? "" : ` ${rest}`}`, 4))
      continue
    }
    // the compact list needs no blank line between its entries
    if (line.trim() === "" && entries[i - 1] !== undefined && entries[i + 1] !== undefined) continue
    out.push(...wrap(line))
  }
  return out.join("\n")
}

const mapConsole = (base: Console.Console, f: (text: string) => string): Console.Console => ({
  ...base,
  log: (...args) => base.log(...args.map((a) => (typeof a === "string" ? f(a) : a))),
  error: (...args) => base.error(...args.map((a) => (typeof a === "string" ? f(a) : a)))
})

/**
 * Runs `self` with a console that drops colour when it is not allowed and, for a help page (`help` gives the
 * command path), tidies what is printed.
 */
export const withHygiene =
  (help: ReadonlyArray<string> | undefined) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
    const colour = colourAllowed()
    if (colour && help === undefined) return self
    return Effect.consoleWith((base) =>
      Effect.withConsole(
        self,
        mapConsole(base, (text) => (help !== undefined ? tidy(text, help, colour) : stripColour(text)))
      )
    )
  }
