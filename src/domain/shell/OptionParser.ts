/**
 * Parses a command's arguments the way the command itself does (GNU `getopt_long`): long options matched exactly
 * or by an unambiguous prefix (`--outp` is `--output`), `--name=value` and `--name value`, short options clustered
 * (`-nee` is `-n -e e`: a letter that takes a value takes the rest of the cluster, or the next word), `--` ending
 * the options. Pure data in, pure data out: the tables of what each command accepts live with their users
 * (read-only commands, wrappers), and anything the table does not name is reported as unknown, never guessed.
 */

/** How an option uses a value: none, a required one (attached or the next word), or an optional attached one. */
export type Arity = "flag" | "value" | "optional"

/** What a command accepts. */
export interface OptionTable {
  /** Short options by letter (or digit). */
  readonly short?: Readonly<Record<string, Arity>>
  /** Long options by name, without the leading `--`. */
  readonly long?: Readonly<Record<string, Arity>>
  /**
   * Stop at the first operand (POSIX `+`-style, as `env`, `timeout`, `xargs`, `find -exec` and shells do);
   * otherwise options and operands may be mixed (GNU permutation).
   */
  readonly stopAtOperand?: boolean
  /** `-NUM` is an option (`head -5`, `tail -20`) rather than an unknown cluster. */
  readonly numericOption?: boolean
}

/** One parsed argument. */
export type Parsed =
  /** A known option, by its canonical name (`-o` or `--output`), with its value when it has one. */
  | { readonly _tag: "Option"; readonly name: string; readonly value?: string | undefined; readonly index: number }
  /** A word that is not an option. */
  | { readonly _tag: "Operand"; readonly value: string; readonly index: number }
  /** An option the table does not know, or an ambiguous prefix, or a value-taking option with no value. */
  | { readonly _tag: "Unknown"; readonly text: string; readonly reason: string; readonly index: number }

/** The result of parsing one command's arguments. */
export interface ParsedArgs {
  readonly items: ReadonlyArray<Parsed>
  /** True when something could not be parsed against the table: callers that need certainty must give up. */
  readonly hasUnknown: boolean
  /** Index in `args` of the first word after the options when `stopAtOperand` ended them (else `args.length`). */
  readonly rest: number
}

/**
 * Resolves a long option name (without `--`) against the table: an exact name, else the one name it is a prefix
 * of. Undefined when unknown or ambiguous (two names share the prefix and neither is exact).
 */
export const resolveLong = (table: OptionTable, name: string): string | undefined => {
  const long = table.long ?? {}
  if (Object.hasOwn(long, name)) return name
  if (name === "") return undefined
  const candidates = Object.keys(long).filter((candidate) => candidate.startsWith(name))
  return candidates.length === 1 ? candidates[0] : undefined
}

/** The names a prefix could mean (for messages): every long option starting with it. */
export const longCandidates = (table: OptionTable, name: string): ReadonlyArray<string> =>
  Object.keys(table.long ?? {}).filter((candidate) => candidate.startsWith(name))

const parseLong = (table: OptionTable, args: ReadonlyArray<string>, i: number, out: Array<Parsed>): number => {
  const arg = args[i]
  const eq = arg.indexOf("=")
  const given = eq === -1 ? arg.slice(2) : arg.slice(2, eq)
  const name = resolveLong(table, given)
  if (name === undefined) {
    const candidates = longCandidates(table, given)
    out.push({
      _tag: "Unknown",
      text: arg,
      reason:
        candidates.length > 1 ? `ambiguous option --${given} (${candidates.join(", ")})` : `unknown option --${given}`,
      index: i
    })
    return i + 1
  }
  const arity = table.long?.[name]
  if (eq !== -1) {
    if (arity === "flag") {
      out.push({ _tag: "Unknown", text: arg, reason: `option --${name} takes no value`, index: i })
    } else {
      out.push({ _tag: "Option", name: `--${name}`, value: arg.slice(eq + 1), index: i })
    }
    return i + 1
  }
  if (arity === "value") {
    if (i + 1 >= args.length) {
      out.push({ _tag: "Unknown", text: arg, reason: `option --${name} needs a value`, index: i })
      return i + 1
    }
    out.push({ _tag: "Option", name: `--${name}`, value: args[i + 1], index: i })
    return i + 2
  }
  out.push({ _tag: "Option", name: `--${name}`, index: i })
  return i + 1
}

const parseCluster = (table: OptionTable, args: ReadonlyArray<string>, i: number, out: Array<Parsed>): number => {
  const arg = args[i]
  if (table.numericOption === true && /^-\d+$/.test(arg)) {
    out.push({ _tag: "Option", name: "-NUM", value: arg.slice(1), index: i })
    return i + 1
  }
  const short = table.short ?? {}
  const letters = Array.from(arg.slice(1))
  for (let at = 0; at < letters.length; at++) {
    const letter = letters[at]
    const arity = Object.hasOwn(short, letter) ? short[letter] : undefined
    if (arity === undefined) {
      out.push({ _tag: "Unknown", text: arg, reason: `unknown option -${letter}`, index: i })
      return i + 1
    }
    if (arity === "flag") {
      out.push({ _tag: "Option", name: `-${letter}`, index: i })
      continue
    }
    const attached = letters.slice(at + 1).join("")
    if (attached !== "") {
      out.push({ _tag: "Option", name: `-${letter}`, value: attached, index: i })
      return i + 1
    }
    if (arity === "optional") {
      out.push({ _tag: "Option", name: `-${letter}`, index: i })
      return i + 1
    }
    if (i + 1 >= args.length) {
      out.push({ _tag: "Unknown", text: arg, reason: `option -${letter} needs a value`, index: i })
      return i + 1
    }
    out.push({ _tag: "Option", name: `-${letter}`, value: args[i + 1], index: i })
    return i + 2
  }
  return i + 1
}

/** Parses `args` (the words after the command name) against `table`. */
export const parse = (table: OptionTable, args: ReadonlyArray<string>): ParsedArgs => {
  const items: Array<Parsed> = []
  let i = 0
  let rest = args.length
  while (i < args.length) {
    const arg = args[i]
    if (arg === "--") {
      for (let at = i + 1; at < args.length; at++) items.push({ _tag: "Operand", value: args[at], index: at })
      if (table.stopAtOperand === true) rest = i + 1
      break
    }
    if (arg.startsWith("--")) {
      i = parseLong(table, args, i, items)
    } else if (arg.startsWith("-") && arg !== "-") {
      i = parseCluster(table, args, i, items)
    } else if (table.stopAtOperand === true) {
      rest = i
      for (let at = i; at < args.length; at++) items.push({ _tag: "Operand", value: args[at], index: at })
      break
    } else {
      items.push({ _tag: "Operand", value: arg, index: i })
      i++
    }
  }
  return { items, hasUnknown: items.some((item) => item._tag === "Unknown"), rest }
}

/** The options of a parse, by canonical name. */
export const options = (parsed: ParsedArgs): ReadonlyArray<Extract<Parsed, { _tag: "Option" }>> =>
  parsed.items.filter((item): item is Extract<Parsed, { _tag: "Option" }> => item._tag === "Option")

/** The operands of a parse, in order. */
export const operands = (parsed: ParsedArgs): ReadonlyArray<string> =>
  parsed.items.flatMap((item) => (item._tag === "Operand" ? [item.value] : []))
