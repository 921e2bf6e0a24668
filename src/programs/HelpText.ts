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
const colourAllowed = (): boolean =>
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
 * The lines @effect/cli writes under every option of a kind, whatever the option means ("A user-defined piece of
 * text."): each of our options says what it is for in its own description, so these only lengthen the page.
 */
const placeholder = (line: string): boolean =>
  /^ {2}(A true or false value\.|A user-defined piece of text\.|An integer\.|A file\.|A directory\.|One of the following: .*)$/.test(
    stripColour(line)
  )

/** The options of a page that may be left out though its usage line shows them bare (repeated zero or more times). */
const repeatedOptions = (lines: ReadonlyArray<string>): ReadonlyArray<string> =>
  lines.flatMap((line, i) => {
    const head = /^(--[a-z-]+ [a-z]+\.\.\.)$/.exec(stripColour(line))
    if (head === null) return []
    const block = lines.slice(i + 1, i + 8).map(stripColour)
    return block.some((l) => l.includes("repeated zero or more times")) ? [head[1]] : []
  })

/** A usage line with each option in `optional` bracketed, as the other optional ones are. */
const bracketOptional = (usage: string, optional: ReadonlyArray<string>): string =>
  optional.reduce(
    (line, option) => line.replace(new RegExp(`(^|\\s)${option.replace(/\./g, "\\.")}(?=\\s|$)`), `$1[${option}]`),
    usage
  )

/** Examples of each command, by path (`armature exec`), printed at the end of its help page. */
export const examples: Readonly<Record<string, ReadonlyArray<string>>> = {
  armature: [
    "armature exec calls.json --output stream-json",
    'armature run "list the TODOs in src/"',
    "armature tools list"
  ],
  "armature exec": [
    "armature exec calls.json --output json",
    `echo '[{"type":"tool_use","id":"t1","name":"Glob","input":{"pattern":"*.ts"}}]' | armature exec`,
    'armature exec calls.jsonl --allowed-tools "Bash(git status:*)" --permission-mode acceptEdits'
  ],
  "armature tools": ["armature tools list --json", "armature tools schema", "armature tools search notebook"],
  "armature tools list": ["armature tools list", "armature tools list --json --mcp-config .mcp.json"],
  "armature tools schema": ["armature tools schema > tools.json"],
  "armature tools search": ["armature tools search web fetch", "armature tools search select:WebFetch --json"],
  "armature permissions": [`armature permissions check --tool Bash --input '{"command":"git status"}'`],
  "armature permissions check": [
    `armature permissions check --tool Bash --input '{"command":"rm -rf build"}' --output json`,
    `armature permissions check --tool Read --input '{"file_path":".env"}' --settings strict.json`
  ],
  "armature run": [
    'armature run "fix the failing test in test/parser.test.ts"',
    'echo "summarize README.md" | armature run --output stream-json',
    'armature run --durable "migrate the config" --max-turns 20'
  ],
  "armature resume": ["armature resume 3f0c2b9e-…", "armature resume 3f0c2b9e-… --output stream-json"],
  "armature sessions": ["armature sessions", "armature sessions --json --database postgres://localhost/agents"],
  "armature serve": ["ARMATURE_SERVE_TOKEN=… armature serve --database postgres://localhost/agents --port 8787"],
  "armature mcp": ["armature mcp serve", "armature mcp list", "armature mcp login linear"],
  "armature mcp login": [
    "armature mcp login linear",
    "armature mcp login docs --mcp-config ~/servers.json --timeout 600"
  ],
  "armature mcp logout": ["armature mcp logout linear"],
  "armature mcp list": ["armature mcp list", "armature mcp list --json --mcp-config .mcp.json"],
  "armature mcp serve": ["armature mcp serve --cwd ~/project", "armature mcp serve --http 8931"],
  "armature sandbox": ["armature sandbox check"],
  "armature sandbox check": ["armature sandbox check", "armature sandbox check --json"],
  "armature timeline": ["armature timeline .armature/transcripts/3f0c2b9e-….jsonl --output turn.html"]
}

/** The EXAMPLES section of a command's help page (none for a path without examples). */
const examplesSection = (commandPath: ReadonlyArray<string>): ReadonlyArray<string> => {
  const list = examples[commandPath.join(" ")] ?? []
  return list.length === 0 ? [] : ["EXAMPLES", "", ...list.map((example) => `  $ ${example}`), ""]
}

/**
 * Rewrites a help page: full command path in the usage line (optional options bracketed), a compact command list,
 * @effect/cli's placeholder lines dropped, examples at the end, lines wrapped; the colour of the other lines is kept
 * when `colour` is true.
 */
export const tidy = (text: string, commandPath: ReadonlyArray<string>, colour = false): string => {
  const all = (colour ? text : stripColour(text)).split("\n").map((line) => line.trimEnd())
  // a placeholder goes with the blank line after it
  const lines = all.filter((line, i) => !placeholder(line) && !(line.trim() === "" && i > 0 && placeholder(all[i - 1])))
  const optional = repeatedOptions(lines)
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
      out.push(...wrap(bracketOptional(`$ ${commandPath.join(" ")}${rest === "" ? "" : ` ${rest}`}`, optional), 4))
      continue
    }
    if (plain.startsWith("$ ")) {
      out.push(...wrap(bracketOptional(plain, optional), 4))
      continue
    }
    // the compact list needs no blank line between its entries
    if (line.trim() === "" && entries[i - 1] !== undefined && entries[i + 1] !== undefined) continue
    out.push(...wrap(line))
  }
  const page = out.join("\n")
  // a page of one command (not a usage error or a command list alone) ends with its examples
  return /(^|\n)USAGE/.test(stripColour(page)) ? [page.trimEnd(), "", ...examplesSection(commandPath)].join("\n") : page
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
