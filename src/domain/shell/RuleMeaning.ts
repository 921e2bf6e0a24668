/**
 * Deny and ask rules by meaning: a `Bash(…)` rule naming options (`Bash(rm -rf:*)`, `Bash(git push --force:*)`) is
 * matched against a command through the command's option table, as the command itself reads its words: combined
 * and split short flags (`rm -fr`, `rm -r -f`), long forms and GNU abbreviations (`--recursive --force`,
 * `--rec --for`), aliases of one option (`-r`, `-R`), options after operands (`git push origin main --force`), and
 * `+REFSPEC` as a force push. A trailing ` *` (`Bash(git push *)`) also matches the bare command. Allow rules are not
 * matched this way: they stay literal prefixes.
 */
import type { CommandForm } from "../PermissionRule.js"
import type { CommandTable } from "./CommandTable.js"
import { compile } from "./CommandTable.js"
import { lookup } from "./CommandTables.js"
import * as NpmCommands from "./NpmCommands.js"
import * as OptionParser from "./OptionParser.js"

/** `git push`'s options (`git help push`), for rules that name them. */
const gitPush: CommandTable = {
  options: [
    "-f, --force",
    "--force-with-lease[=TEXT]",
    "--no-force-with-lease",
    "--force-if-includes",
    "--no-force-if-includes",
    "-u, --set-upstream",
    "--all",
    "--branches",
    "--mirror",
    "--tags",
    "--follow-tags",
    "--no-follow-tags",
    "-n, --dry-run",
    "--porcelain",
    "-d, --delete",
    "--prune",
    "-v, --verbose",
    "-q, --quiet",
    "--progress",
    "--no-progress",
    "--verify",
    "--no-verify",
    "--atomic",
    "--no-atomic",
    "-o, --push-option=TEXT",
    "--receive-pack=TEXT",
    "--exec=TEXT",
    "--repo=TEXT",
    "-4, --ipv4",
    "-6, --ipv6",
    "--signed[=TEXT]",
    "--no-signed",
    "--recurse-submodules=TEXT",
    "--no-recurse-submodules",
    "--thin",
    "--no-thin",
    "--help"
  ],
  operands: { rest: "text" }
}

/** `git clean`, `git reset`, `git branch`, `git checkout`: the options deny rules commonly name. */
const gitClean: CommandTable = {
  options: [
    "-f, --force",
    "-d",
    "-x",
    "-X",
    "-n, --dry-run",
    "-q, --quiet",
    "-i, --interactive",
    "-e, --exclude=PATTERN"
  ],
  operands: { rest: "text" }
}

const gitReset: CommandTable = {
  options: ["--hard", "--soft", "--mixed", "--merge", "--keep", "-q, --quiet", "-p, --patch", "--no-refresh"],
  operands: { rest: "text" }
}

const gitSubcommands: Readonly<Record<string, CommandTable>> = { push: gitPush, clean: gitClean, reset: gitReset }

/** Options one option implies for matching (`--force-with-lease` is a forced push too). */
const implied: Readonly<Record<string, ReadonlyArray<string>>> = {
  "git push": ["--force-with-lease", "--force-if-includes", "--mirror"]
}

/** The command words a rule or form starts with, and the table of the rest; undefined when none is known. */
const headOf = (words: ReadonlyArray<string>): { readonly head: number; readonly table: CommandTable } | undefined => {
  const [name, sub] = words
  if (name === "git" && sub !== undefined && Object.hasOwn(gitSubcommands, sub)) {
    return { head: 2, table: gitSubcommands[sub] }
  }
  const known = name === undefined ? undefined : lookup(name)
  return known !== undefined && "options" in known ? { head: 1, table: known } : undefined
}

interface Meaning {
  /** Canonical option names (the first name of each entry), with their values. */
  readonly options: ReadonlyArray<{ readonly name: string; readonly value?: string | undefined }>
  readonly operands: ReadonlyArray<string>
  readonly unknown: boolean
}

const meaningOf = (command: string, table: CommandTable, args: ReadonlyArray<string>): Meaning => {
  const compiled = compile(table)
  const parsed = OptionParser.parse(compiled.parser, args)
  const canonical = (name: string) => compiled.entries.get(name)?.names[0] ?? name
  const options = OptionParser.options(parsed).map((option) => ({
    name: canonical(option.name),
    value: option.value
  }))
  const operands = OptionParser.operands(parsed)
  const extra: Array<{ readonly name: string }> = []
  // An ambiguous abbreviation (`--forc`) may be read as any option it abbreviates: each counts, so a deny rule errs
  // toward matching.
  for (const item of parsed.items) {
    if (item._tag !== "Unknown" || !item.text.startsWith("--")) continue
    const given = item.text.slice(2).split("=")[0]
    for (const name of OptionParser.longCandidates(compiled.parser, given)) extra.push({ name: canonical(`--${name}`) })
  }
  if (command === "git push") {
    // `+REFSPEC` forces the update of that ref; some implied options are forced pushes too.
    if (operands.some((operand) => operand.startsWith("+"))) extra.push({ name: "-f" })
    if ([...options, ...extra].some((option) => implied[command].includes(option.name))) extra.push({ name: "-f" })
  }
  return {
    options: [...options, ...extra],
    operands: operands.map((operand) => (command === "git push" ? operand.replace(/^\+/, "") : operand)),
    unknown: parsed.hasUnknown
  }
}

const collapse = (text: string): string => text.trim().replace(/\s+/g, " ")

/**
 * True when a deny or ask rule's content matches a fully known command form by meaning (see above). False when the
 * rule names no options of a command with a table, or uses wildcards other than a trailing one: the textual match
 * decides those alone.
 */
export const matchesByMeaning = (content: string, form: CommandForm): boolean => {
  if (form.some((word) => word === null)) return false
  const words = form as ReadonlyArray<string>
  const pattern = collapse(content)
  const spaceStar = pattern.endsWith(" *")
  const prefix = pattern.endsWith(":*") ? pattern.slice(0, -2).trimEnd() : spaceStar ? pattern.slice(0, -2) : pattern
  if (prefix.includes("*")) return false
  const ruleWords = prefix.split(" ")
  const command = words.join(" ")
  // `Bash(git push *)`: the bare command too.
  if (spaceStar && (command === prefix || command.startsWith(`${prefix} `))) return true
  const head = headOf(ruleWords)
  if (head === undefined || ruleWords.length <= head.head) return false
  if (words.length < head.head || words.slice(0, head.head).join(" ") !== ruleWords.slice(0, head.head).join(" ")) {
    return false
  }
  const name = ruleWords.slice(0, head.head).join(" ")
  const rule = meaningOf(name, head.table, ruleWords.slice(head.head))
  if (rule.unknown) return false
  const given = meaningOf(name, head.table, words.slice(head.head))
  const has = (option: Meaning["options"][number]) =>
    given.options.some(
      (other) => other.name === option.name && (option.value === undefined || other.value === option.value)
    )
  if (!rule.options.every(has)) return false
  const exact = !pattern.endsWith(":*") && !spaceStar
  if (exact) {
    const same = (a: Meaning, b: Meaning) => a.options.every((o) => b.options.some((p) => p.name === o.name))
    return (
      same(given, rule) &&
      given.operands.length === rule.operands.length &&
      rule.operands.every((operand, at) => given.operands[at] === operand)
    )
  }
  return rule.operands.every((operand, at) => given.operands[at] === operand)
}

/** Removes shell quoting from a rule's text as bash would from a command's words (`"rm" -rf` is `rm -rf`). */
const unquote = (text: string): string => {
  let out = ""
  let quote: "'" | '"' | undefined
  for (let at = 0; at < text.length; at++) {
    const char = text[at]
    if (quote === "'") {
      if (char === "'") quote = undefined
      else out += char
    } else if (quote === '"') {
      if (char === '"') quote = undefined
      else if (char === "\\" && at + 1 < text.length && '"\\$`'.includes(text[at + 1])) out += text[++at]
      else out += char
    } else if (char === "'" || char === '"') quote = char
    else if (char === "\\" && at + 1 < text.length) out += text[++at]
    else out += char
  }
  return out
}

/** How a rule's text is also read; each step maps one reading to the readings it adds. */
const readingSteps: ReadonlyArray<(pattern: string) => ReadonlyArray<string>> = [
  // Quotes and backslashes, removed from commands before matching, are removed from the rule too.
  (pattern) => (/['"\\]/.test(pattern) ? [collapse(unquote(pattern))] : []),
  // `rm: *` (a blank inside the legacy `:*`) is the prefix rule `rm:*`.
  (pattern) => {
    const split = /^(.*\S):\s+\*$/s.exec(pattern)
    return split === null ? [] : [`${split[1]}:*`]
  },
  // `rm *:*`: a wildcard in a prefix rule's prefix is a wildcard.
  (pattern) => {
    if (!pattern.endsWith(":*")) return []
    const prefix = pattern.slice(0, -2).trimEnd()
    return prefix.includes("*") ? [prefix, `${prefix} *`] : []
  },
  // `/bin/rm:*`, `/usr/bin/rm *`: a program named by its absolute path is the program by its name.
  (pattern) => {
    const first = /^\/[^\s]*\/([^\s/]+)(?=$|\s|:\*$)/.exec(pattern)
    return first === null ? [] : [`${first[1]}${pattern.slice(first[0].length)}`]
  },
  // `npm pub`, `npm i`, `pnpm rm`: the subcommand npm or pnpm runs for that word (NpmCommands.ts).
  (pattern) => {
    const words = /^(npm|pnpm) ([^\s*:]+)(.*)$/s.exec(pattern)
    if (words === null) return []
    const command = words[1] === "npm" ? NpmCommands.canonical(words[2]) : NpmCommands.pnpmCanonical(words[2])
    return command === undefined || command === words[2] ? [] : [`${words[1]} ${command}${words[3]}`]
  }
]

const readingsCache = new Map<string, ReadonlyArray<string>>()

/**
 * Every text a deny or ask rule's content is read as, itself first: with quoting removed, `rm: *` as `rm:*`, a
 * wildcard in a prefix rule's prefix as a wildcard, a program named by its absolute path by its name, and npm's and
 * pnpm's subcommand words as the command they run. A rule is matched by each; allow rules are not read this way.
 */
export const readings = (content: string): ReadonlyArray<string> => {
  const cached = readingsCache.get(content)
  if (cached !== undefined) return cached
  const out = [collapse(content)]
  for (const step of readingSteps) {
    for (const reading of [...out]) for (const added of step(reading)) if (!out.includes(added)) out.push(added)
  }
  const result = out[0] === content ? out : [content, ...out.filter((reading) => reading !== content)]
  readingsCache.set(content, result)
  return result
}
