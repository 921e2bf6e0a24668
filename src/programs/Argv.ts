/**
 * The command line before @effect/cli reads it. The flags each command accepts are read from the command's own
 * @effect/cli usage (so this never disagrees with the parser), and the tokens are:
 * - normalised: Claude Code's spellings become ours (`--allowedTools` → `--allowed-tools`, `--output-format` →
 *   `--output`), `-p`/`--print` and `--verbose` are accepted by `run` and `resume` (where they change nothing), `-v` is
 *   `--version`;
 * - checked: an unknown flag is named with the nearest known one; a flag's value is checked against its choices
 *   and numeric limits, naming the flag and what it accepts;
 * - reordered options-first, so options may follow positional arguments (`armature exec batch.json --output json`);
 * - spread: `--allowedTools A B` (several rules after one flag, as Claude Code takes them) becomes one flag per
 *   rule, the list ending at the first word that is not a rule (see `isRuleWord`).
 */
import * as Fs from "node:fs"
import { AutoCorrect, CliConfig, Command, CommandDescriptor, type Usage } from "@effect/cli"
import { Either, HashMap, Option } from "effect"
import * as PermissionRule from "../domain/PermissionRule.js"

/** What a flag takes. */
export type FlagKind = "boolean" | "choice" | "integer" | "file" | "directory" | "value"

/** One flag of a command: its names and what it takes. */
export interface Flag {
  readonly names: ReadonlyArray<string>
  readonly kind: FlagKind
  readonly choices: ReadonlyArray<string>
}

/** The flags of one command, by each of their names. */
export type Flags = ReadonlyMap<string, Flag>

/** A command line that cannot be used: `command` names the subcommand path, `message` the flag and the problem. */
export interface ArgvError {
  readonly command: string
  readonly message: string
}

/** Claude Code's spellings of our flags. */
export const aliases: Readonly<Record<string, string>> = {
  "--allowedTools": "--allowed-tools",
  "--disallowedTools": "--disallowed-tools",
  "--output-format": "--output",
  "--appendSystemPrompt": "--append-system-prompt",
  "--maxTurns": "--max-turns",
  "--permissionMode": "--permission-mode",
  "--mcpConfig": "--mcp-config"
}

/** Flags accepted for Claude Code compatibility that change nothing here, by command. */
const accepted: Readonly<Record<string, ReadonlyArray<string>>> = {
  run: ["-p", "--print", "--verbose"],
  resume: ["-p", "--print", "--verbose"]
}

/** Flags that, as in Claude Code, take several values after one flag: `--allowedTools Read "Bash(git log:*)"`. */
const multiValued: ReadonlySet<string> = new Set(["--allowed-tools", "--disallowed-tools"])

/** Tool names a permission rule may name bare: Armature's built-in tools and Claude Code's. */
const toolNames: ReadonlySet<string> = new Set(
  (
    "Bash BashOutput KillShell Read Write Edit MultiEdit Glob Grep LS Sleep TodoWrite ToolSearch WebFetch WebSearch " +
    "NotebookEdit NotebookRead Task Agent ExitPlanMode AskUserQuestion SlashCommand Skill"
  ).split(" ")
)

/**
 * True when a word can only be read as a permission rule (or a comma separated list of them, with no space outside
 * parentheses): `Name(…)`, an `mcp__…` name, or a tool name from `toolNames`. A further value of a multi-valued flag must pass this test, so a
 * prompt or a file name after the rules ends the list instead of being taken as a rule.
 */
export const isRuleWord = (word: string): boolean => {
  const parts = PermissionRule.splitRuleList(word)
  // a space outside parentheses reads as a sentence (a prompt), even when every word is a tool name
  const spaced = PermissionRule.splitRuleList(word.replace(/,/g, "\u0000")).length > 1
  return (
    parts.length > 0 &&
    !spaced &&
    parts.every(
      (part) => /^[A-Za-z][\w-]*\(.*\)$/s.test(part) || /^mcp__[\w-]+(__[\w*-]+)?$/.test(part) || toolNames.has(part)
    )
  )
}

/** Lower limits of integer flags. */
const minimums: Readonly<Record<string, number>> = {
  "--max-concurrency": 1,
  "--max-turns": 1,
  "--max-tokens": 1,
  "--max-results": 1,
  "--max-retries": 0,
  "--http": 0
}

/** The options every command has from @effect/cli itself. */
const builtIns: ReadonlyArray<Flag> = [
  { names: ["--help", "-h"], kind: "boolean", choices: [] },
  { names: ["--version"], kind: "boolean", choices: [] },
  { names: ["--wizard"], kind: "boolean", choices: [] },
  { names: ["--completions"], kind: "choice", choices: ["sh", "bash", "fish", "zsh"] },
  { names: ["--log-level"], kind: "choice", choices: ["all", "trace", "debug", "info", "warning", "error", "fatal"] }
]

const flagsOfUsage = (usage: Usage.Usage, out: Array<Flag>): Array<Flag> => {
  switch (usage._tag) {
    case "Named": {
      const names = usage.names.filter((name) => name.startsWith("-"))
      if (names.length === 0) break
      const accepts = Option.getOrUndefined(usage.acceptedValues)
      const kind: FlagKind =
        accepts === undefined
          ? "boolean"
          : accepts.includes(" | ")
            ? "choice"
            : accepts === "integer" || accepts === "file" || accepts === "directory"
              ? accepts
              : "value"
      out.push({ names, kind, choices: kind === "choice" ? (accepts ?? "").split(" | ") : [] })
      break
    }
    case "Optional":
    case "Repeated":
      flagsOfUsage(usage.usage, out)
      break
    case "Alternation":
    case "Concat":
      flagsOfUsage(usage.left, out)
      flagsOfUsage(usage.right, out)
      break
    default:
      break
  }
  return out
}

const byName = (flags: ReadonlyArray<Flag>): Flags => new Map(flags.flatMap((flag) => flag.names.map((n) => [n, flag])))

/** Any command of the tree, whatever its environment and result. */
// biome-ignore lint/suspicious/noExplicitAny: any command of the tree, whatever its environment and result
export type AnyCommand = Command.Command<any, any, any, any>

/** The flags of each command path ("exec", "tools list", …), and the paths that only group subcommands. */
export interface CommandTable {
  readonly flags: ReadonlyMap<string, Flags>
  readonly parents: ReadonlySet<string>
}

/** Reads the flags of every command from its @effect/cli usage; `commands` are the root's subcommands by name. */
export const commandTable = (commands: ReadonlyArray<readonly [string, AnyCommand]>): CommandTable => {
  const flags = new Map<string, Flags>()
  const parents = new Set<string>()
  for (const [name, command] of commands) {
    const children = HashMap.toEntries(Command.getSubcommands(command))
    const leaf = children.length === 1 && children[0][0] === name
    if (!leaf) parents.add(name)
    for (const [child, descriptor] of children) {
      const path = leaf ? name : `${name} ${child}`
      flags.set(path, byName(flagsOfUsage(CommandDescriptor.getUsage(descriptor), [...builtIns])))
    }
  }
  return { flags, parents }
}

const config = CliConfig.defaultConfig

/** The known name nearest to `name`, when it is near enough to be a likely typo. */
export const suggest = (name: string, known: Iterable<string>): string | undefined => {
  let best: { name: string; distance: number } | undefined
  for (const candidate of known) {
    if (!candidate.startsWith("--")) continue
    const distance = AutoCorrect.levensteinDistance(name.toLowerCase(), candidate.toLowerCase(), config)
    if (best === undefined || distance < best.distance) best = { name: candidate, distance }
  }
  if (best === undefined) return undefined
  const bare = name.replace(/^-+/, "")
  const prefix = bare.length >= 3 && best.name.replace(/^-+/, "").startsWith(bare)
  return best.distance <= Math.max(2, Math.floor(name.length / 3)) || prefix ? best.name : undefined
}

const isDirectory = (path: string): boolean => {
  try {
    return Fs.statSync(path).isDirectory()
  } catch {
    return false
  }
}

const checkValue = (name: string, flag: Flag, value: string): string | undefined => {
  if (flag.kind === "choice" && !flag.choices.includes(value)) {
    return `${name}: ${JSON.stringify(value)} is not one of ${flag.choices.join(", ")}`
  }
  if (flag.kind === "integer") {
    const min = minimums[flag.names.find((n) => n in minimums) ?? ""]
    const limit = min === undefined ? "" : ` ≥ ${min}`
    if (!/^-?\d+$/.test(value.trim())) return `${name} takes an integer${limit}, got ${JSON.stringify(value)}`
    if (min !== undefined && Number(value) < min) return `${name} must be an integer${limit}, got ${value}`
  }
  if (flag.kind === "directory" && !isDirectory(value)) return `${name}: ${value} is not a directory`
  if (flag.kind === "file" && !Fs.existsSync(value)) return `${name}: ${value}: no such file`
  return undefined
}

/** The command path the tokens start with (`["tools", "search"]`), as far as the tree knows it. */
export const commandPath = (tokens: ReadonlyArray<string>, table: CommandTable): ReadonlyArray<string> => {
  const path: Array<string> = []
  for (const token of tokens) {
    const next = [...path, token].join(" ")
    if (table.flags.has(next)) return [...path, token]
    if (!table.parents.has(next)) break
    path.push(token)
  }
  return path
}

/**
 * Normalises, checks and reorders the user's tokens (argv without node and the script) for the command tree
 * described by `table` (from `commandTable`).
 */
export const prepare = (
  tokens: ReadonlyArray<string>,
  table: CommandTable
): Either.Either<ReadonlyArray<string>, ArgvError> => {
  if (tokens.length === 1 && tokens[0] === "-v") return Either.right(["--version"])
  const path = [...commandPath(tokens, table)]
  let i = path.length
  const command = path.join(" ")
  const flags = table.flags.get(command)
  if (flags === undefined) {
    const word = tokens[i]
    // a mistyped command is named with the nearest one; anything else (help, version, none) goes to @effect/cli
    if (word === undefined || word.startsWith("-")) return Either.right(tokens)
    const prefix = path.length === 0 ? "" : `${command} `
    const known = [...table.flags.keys(), ...table.parents]
      .filter((p) => p.startsWith(prefix) && !p.slice(prefix.length).includes(" "))
      .map((p) => p.slice(prefix.length))
    const near = suggest(
      `--${word}`,
      known.map((k) => `--${k}`)
    )
    return Either.left({
      command: ["armature", ...path].join(" "),
      message: `unknown command ${word}${near === undefined ? "" : ` (did you mean ${near.slice(2)}?)`}; commands: ${known.join(", ")}`
    })
  }
  const ignored = new Set(accepted[command] ?? [])
  const options: Array<string> = []
  const positionals: Array<string> = []
  const fail = (message: string) => Either.left({ command: `armature ${command}`, message })
  while (i < tokens.length) {
    const token = tokens[i++]
    if (token === "--") {
      positionals.push(...tokens.slice(i))
      break
    }
    if (!token.startsWith("-") || token === "-" || /^-\d/.test(token)) {
      positionals.push(token)
      continue
    }
    const eq = token.startsWith("--") ? token.indexOf("=") : -1
    const written = eq > 0 ? token.slice(0, eq) : token
    const name = aliases[written] ?? written
    if (ignored.has(name)) continue
    const flag = flags.get(name) ?? flags.get(name.toLowerCase())
    if (flag === undefined) {
      const near = suggest(name, flags.keys())
      return fail(`unknown flag ${written}${near === undefined ? "" : ` (did you mean ${near}?)`}`)
    }
    if (flag.kind === "boolean") {
      options.push(name)
      continue
    }
    const value = eq > 0 ? token.slice(eq + 1) : tokens[i++]
    if (value === undefined) {
      const what = flag.kind === "choice" ? `one of ${flag.choices.join(", ")}` : `a ${flag.kind}`
      return fail(`${name} needs a value (${what})`)
    }
    const problem = checkValue(name, flag, value)
    if (problem !== undefined) return fail(problem)
    options.push(name, value)
    // Claude Code's `--allowedTools A B`: further words are rules while they can only be rules
    if (eq < 0 && multiValued.has(name)) {
      while (i < tokens.length && !tokens[i].startsWith("-") && isRuleWord(tokens[i])) options.push(name, tokens[i++])
    }
  }
  return Either.right([...path, ...options, ...positionals])
}
