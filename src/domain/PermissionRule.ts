/**
 * Permission rules in Claude Code syntax: parsing, and pure matching against tools, shell commands,
 * paths and URLs. Everything that touches the file system (symlink resolution) is done by the caller, which passes
 * already-resolved paths in.
 */
import * as Path from "node:path"
import { Either, Schema } from "effect"
import ignore from "ignore"
import type { PermissionBehavior } from "./Permission.js"
import * as Tool from "./Tool.js"

/** A rule string that cannot be parsed; names the rule and the file (or flag) it came from. */
export class PermissionRuleError extends Schema.TaggedError<PermissionRuleError>()("PermissionRuleError", {
  rule: Schema.String,
  source: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Invalid permission rule ${JSON.stringify(this.rule)} in ${this.source}: ${this.reason}`
  }
}

/** One parsed rule, with where it came from. */
export interface Rule {
  /** The rule as written (trimmed). */
  readonly text: string
  readonly behavior: PermissionBehavior
  /** The tool name (or `mcp__server`, `mcp__server__*`). */
  readonly tool: string
  /** The part in parentheses; `undefined` for a whole-tool rule (`Tool`, `Tool(*)`). */
  readonly content: string | undefined
  /** The settings file (or flag, or `session`) the rule came from. */
  readonly source: string
  /** The project root `/p` patterns are anchored at. */
  readonly root: string
}

/** Where a rule string comes from, for parsing. */
export interface RuleOrigin {
  readonly behavior: PermissionBehavior
  readonly source: string
  readonly root: string
}

/** The tools whose rule content is a gitignore-style path pattern. */
export const pathTools: ReadonlySet<string> = new Set([
  "Read",
  "Edit",
  "Write",
  "MultiEdit",
  "NotebookEdit",
  "Glob",
  "Grep",
  "LS"
])

/** Built-in tools that edit files; `Edit(...)` rules cover them all. */
export const editTools: ReadonlySet<string> = new Set(["Edit", "Write", "MultiEdit", "NotebookEdit"])

/** Built-in tools that read files; `Read(...)` rules cover them all. */
export const readTools: ReadonlySet<string> = new Set(["Read", "Glob", "Grep", "LS", "NotebookRead"])

const ruleShape = /^([A-Za-z0-9_.-]+(?:__\*)?)(?:\(([\s\S]*)\))?$/

/**
 * The tool names Armature and Claude Code know (built-in tools and the ones settings commonly name). A rule whose
 * tool differs from one of these only by case (`bash(git push:*)`) would match nothing: it is an error.
 */
export const knownToolNames: ReadonlyArray<string> = [
  "Agent",
  "AskUserQuestion",
  "Bash",
  "BashOutput",
  "Edit",
  "ExitPlanMode",
  "Glob",
  "Grep",
  "KillShell",
  "LS",
  "MultiEdit",
  "NotebookEdit",
  "NotebookRead",
  "Read",
  "Skill",
  "SlashCommand",
  "Sleep",
  "Task",
  "TodoWrite",
  "ToolSearch",
  "WebFetch",
  "WebSearch",
  "Write"
]

const knownByLowerCase = new Map(knownToolNames.map((name) => [name.toLowerCase(), name]))

/** True when `a` becomes `b` by one edit: a character added, removed, replaced, or two neighbours swapped. */
const oneEditApart = (a: string, b: string): boolean => {
  if (a === b || Math.abs(a.length - b.length) > 1) return false
  let i = 0
  while (i < a.length && i < b.length && a[i] === b[i]) i++
  if (a.length === b.length) {
    if (a.slice(i + 1) === b.slice(i + 1)) return true
    return a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2)
  }
  return a.length > b.length ? a.slice(i + 1) === b.slice(i) : a.slice(i) === b.slice(i + 1)
}

/**
 * The known tool a name is a misspelling of (one edit away, any case: `Bassh`, `Reads`, `WebFecth`), or undefined.
 * Any other unknown name may be a tool the application registers (custom tools are named freely), so it stays valid.
 */
export const nearKnownName = (tool: string): string | undefined => {
  if (tool.startsWith("mcp__") || tool.length < 4) return undefined
  const lower = tool.toLowerCase()
  return knownToolNames.find((name) => name.length >= 4 && oneEditApart(lower, name.toLowerCase()))
}

/**
 * The warning for a rule of `file` whose tool is neither a known tool (in any case: a case mismatch or a near miss is
 * an error of `parse`) nor an MCP tool: `Foo(x)` is kept, since an application may register a tool under any name, but
 * it matches nothing unless one does, so the user is told once. Undefined for every other rule, malformed ones included.
 */
export const unknownToolWarning = (file: string, text: string): string | undefined => {
  const match = ruleShape.exec(text.trim())
  if (match === null) return undefined
  const tool = match[1]
  if (tool.startsWith("mcp__") || knownByLowerCase.has(tool.toLowerCase()) || nearKnownName(tool) !== undefined) {
    return undefined
  }
  return `${file.startsWith("--") ? file : `settings file ${file}`}: rule "${text.trim()}" names no built-in tool (${tool}); it matches only a tool registered under that exact name`
}

/**
 * The warning for a `Bash(…)` allow rule whose spelling matches next to nothing as written: `Bash(rm: *)` (a blank
 * inside `:*`) names commands whose first word is `rm:`, and the `*` of `Bash(rm *:*)` is a literal star before the
 * prefix's `:*`. Deny and ask rules so spelt are read by their evident meaning (RuleMeaning.ts); an allow rule is
 * never widened, so the user is told how to write it. Undefined for every other rule.
 */
export const allowSpellingWarning = (file: string, text: string): string | undefined => {
  const match = ruleShape.exec(text.trim())
  if (match === null || match[1] !== "Bash" || match[2] === undefined) return undefined
  const content = collapse(match[2])
  const place = file.startsWith("--") ? file : `settings file ${file}`
  const split = /^(.*\S):\s+\*$/s.exec(content)
  if (split !== null) {
    return `${place}: allow rule "${text.trim()}" matches only commands spelt "${split[1]}: …" (with the colon); write Bash(${split[1]}:*) or Bash(${split[1]} *) for ${split[1]} with any arguments`
  }
  const prefix = content.endsWith(":*") ? content.slice(0, -2).trimEnd() : ""
  if (prefix.includes("*")) {
    return `${place}: allow rule "${text.trim()}" reads the * before :* as a literal star; write Bash(${prefix}) for a wildcard`
  }
  return undefined
}

/** Parses one rule string; a malformed one is a `PermissionRuleError` naming the rule and its source. */
export const parse = (text: string, origin: RuleOrigin): Either.Either<Rule, PermissionRuleError> => {
  const trimmed = text.trim()
  const fail = (reason: string) => Either.left(new PermissionRuleError({ rule: text, source: origin.source, reason }))
  if (trimmed === "") return fail("the rule is empty")
  const match = ruleShape.exec(trimmed)
  if (match === null) {
    if (/^[A-Za-z0-9_.-]+\(/.test(trimmed))
      return fail("expected `Tool(content)` with a closing parenthesis at the end")
    return fail("expected `Tool` or `Tool(content)`; a tool name has only letters, digits, `_`, `-` and `.`")
  }
  const tool = match[1]
  const raw = match[2]
  const known = knownByLowerCase.get(tool.toLowerCase())
  if (known !== undefined && known !== tool) {
    return fail(`unknown tool ${tool}: tool names are case-sensitive (did you mean ${known}?)`)
  }
  const near = known === undefined ? nearKnownName(tool) : undefined
  if (near !== undefined) {
    return fail(`unknown tool ${tool} (did you mean ${near}?): the rule would match nothing`)
  }
  const base = { text: trimmed, behavior: origin.behavior, tool, source: origin.source, root: origin.root }
  if (raw === undefined || raw.trim() === "*") return Either.right({ ...base, content: undefined })
  const content = raw.trim()
  if (content === "") return fail(`empty parentheses; write \`${tool}\` for the whole tool`)
  if (tool.startsWith("mcp__")) return fail("MCP rules take no content: use `mcp__server`, `mcp__server__*` or a tool")
  if (tool === "Bash") {
    const at = content.indexOf(":*")
    if (at !== -1 && at !== content.length - 2) return fail("`:*` is only allowed at the end of a Bash rule")
    if (content === ":*") return fail("a prefix rule needs a prefix before `:*`")
    // `Bash(rm:)` names the command `rm:`, which no one runs: it is a prefix rule missing its star.
    if (/^[^\s:]+:$/.test(content)) {
      return fail(
        `a command does not end in \`:\`; write \`${tool}(${content}*)\` for the command with any arguments, or \`${tool}(${content.slice(0, -1)})\` for the bare command`
      )
    }
  }
  if (tool === "WebFetch" && !/^domain:[^\s/:@]+$/.test(content)) {
    return fail("WebFetch rules have the form `WebFetch(domain:example.com)`")
  }
  return Either.right({ ...base, content })
}

/** Parses rules, collecting every error. */
export const parseAll = (
  texts: ReadonlyArray<string>,
  origin: RuleOrigin
): Either.Either<ReadonlyArray<Rule>, PermissionRuleError> => {
  const rules: Array<Rule> = []
  for (const text of texts) {
    const parsed = parse(text, origin)
    if (Either.isLeft(parsed)) return Either.left(parsed.left)
    rules.push(parsed.right)
  }
  return Either.right(rules)
}

/** Splits a `--allowed-tools` / `--disallowed-tools` value into rule strings (comma or space separated). */
export const splitRuleList = (value: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  let current = ""
  let depth = 0
  for (const ch of value) {
    if (ch === "(") depth++
    if (ch === ")") depth = Math.max(0, depth - 1)
    if (depth === 0 && (ch === "," || /\s/.test(ch))) {
      if (current.trim() !== "") out.push(current.trim())
      current = ""
      continue
    }
    current += ch
  }
  if (current.trim() !== "") out.push(current.trim())
  return out
}

const serverOf = (name: string): string | undefined => {
  if (!name.startsWith("mcp__")) return undefined
  const rest = name.slice(5)
  const end = rest.indexOf("__")
  return end === -1 ? rest : rest.slice(0, end)
}

/** Whether a whole-tool rule names this tool (by name or alias; `mcp__server` and `mcp__server__*` cover a server). */
export const namesTool = (
  ruleTool: string,
  tool: { readonly name: string; readonly aliases: ReadonlyArray<string> }
) => {
  const names = [tool.name, ...tool.aliases]
  if (names.includes(ruleTool)) return true
  if (!ruleTool.startsWith("mcp__")) return false
  const rest = ruleTool.slice(5)
  const server = rest.endsWith("__*") ? rest.slice(0, -3) : rest.includes("__") ? undefined : rest
  return server !== undefined && server !== "" && names.some((n) => serverOf(n) === server && n.length > 5)
}

/** True when the call edits files: a built-in editing tool, or a `file` tool that is not read-only for this input. */
export const isEditCall = (tool: Tool.Any, input: unknown): boolean =>
  editTools.has(tool.name) || (tool.category === "file" && !Tool.safely(tool.isReadOnly, input))

/** True when the call reads files: a built-in reading tool, or a read-only `file`/`search` tool. */
export const isReadCall = (tool: Tool.Any, input: unknown): boolean =>
  readTools.has(tool.name) ||
  ((tool.category === "file" || tool.category === "search") && Tool.safely(tool.isReadOnly, input))

/** Whether a content rule applies to this call: same tool, or an `Edit(...)`/`Read(...)` rule covering it. */
export const coversCall = (rule: Rule, tool: Tool.Any, input: unknown): boolean =>
  namesTool(rule.tool, tool) ||
  (rule.tool === "Edit" && isEditCall(tool, input)) ||
  (rule.tool === "Read" && isReadCall(tool, input))

// --- Bash -------------------------------------------------------------------------------------------------------

const collapse = (s: string): string => s.trim().replace(/\s+/g, " ")

const escapeRegExp = (s: string): string => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")

/**
 * Matches a `Bash(...)` rule's content against one normalized simple command: `prefix:*` (the command is `prefix`
 * or starts with `prefix `), a `*` wildcard pattern anchored at both ends, or an exact command.
 */
export const matchesCommand = (content: string, command: string): boolean => {
  const pattern = collapse(content)
  const cmd = collapse(command)
  if (pattern.endsWith(":*")) {
    const prefix = pattern.slice(0, -2).trimEnd()
    return cmd === prefix || cmd.startsWith(`${prefix} `)
  }
  if (pattern.includes("*")) {
    const source = pattern.split("*").map(escapeRegExp).join("[\\s\\S]*")
    return new RegExp(`^${source}$`).test(cmd)
  }
  return cmd === pattern
}

/**
 * The variables an allow rule lets a command be given (inline `A=1 cmd`, or through `env`/`sudo`/… around it): only
 * ones that change presentation or a well-known build switch, never which code runs or which files are read (unlike
 * PATH, LD_PRELOAD, BASH_ENV, GIT_*, pagers, …). Any other assignment makes every `Bash(…)` allow rule miss.
 */
const harmlessAssignment =
  /^(?:LANG|LANGUAGE|LC_[A-Z]+|TZ|NO_COLOR|FORCE_COLOR|CLICOLOR|CLICOLOR_FORCE|TERM|COLUMNS|LINES|NODE_ENV|RUST_BACKTRACE|RUST_LOG|PYTHONUNBUFFERED|PYTHONDONTWRITEBYTECODE|GOOS|GOARCH|CGO_ENABLED|CI)$/

/** True when an allow rule may match a command given this variable (see `harmlessAssignment`). */
export const isHarmlessAssignment = (name: string): boolean => harmlessAssignment.test(name)

/**
 * A word of a command form: its value, or `null` when it is only known when the shell runs (an expansion, a glob,
 * the words `xargs` appends, a `find -exec` `{}`); `null` may stand for any text, several words or none.
 */
export type FormWord = string | null

/** One spelling of a simple command that deny and ask rules are matched against (see docs/permissions.md). */
export type CommandForm = ReadonlyArray<FormWord>

/**
 * A pattern over characters: a char code, `star` for any text, or `gate` (always followed by `star`): either a blank
 * and then the star's text, or nothing at all (an unknown word after another is " words" or "").
 */
type Glob = ReadonlyArray<number>

const star = -1
const gate = -2

const charsOf = (text: string, wild: boolean): Array<number> =>
  Array.from(text, (char) => (wild && char === "*" ? star : char.charCodeAt(0)))

const space = " ".charCodeAt(0)

/** The texts a rule's content matches, as globs: `p:*` is `p` or `p *`, a `*` pattern itself, else the text. */
const ruleGlobs = (content: string): ReadonlyArray<Glob> => {
  const pattern = collapse(content)
  if (pattern.endsWith(":*")) {
    const prefix = charsOf(pattern.slice(0, -2).trimEnd(), false)
    return [prefix, [...prefix, space, star]]
  }
  return [charsOf(pattern, pattern.includes("*"))]
}

const isBlank = (code: number): boolean =>
  code === space || (code >= 9 && code <= 13) || (code > 127 && /\s/.test(String.fromCharCode(code)))

const formGlobs = new WeakMap<CommandForm, Glob>()

/**
 * The texts a form may be at run time, as `matchesCommand` sees a command (words joined by single blanks, blanks
 * collapsed, trimmed): an unknown word is any text, several words or none.
 */
const formGlob = (form: CommandForm): Glob => {
  const out: Array<number> = []
  for (let at = 0; at < form.length; at++) {
    const word = form[at]
    if (word === null) {
      if (at > 0) out.push(gate)
      out.push(star)
      continue
    }
    if (at > 0 && !(at === 1 && form[0] === null)) out.push(space)
    for (let k = 0; k < word.length; k++) out.push(word.charCodeAt(k))
  }
  const collapsed: Array<number> = []
  for (const code of out) {
    const blank = code >= 0 && isBlank(code)
    const last = collapsed[collapsed.length - 1]
    // Nothing known before an unknown word: it is the head, any text including the blank after it.
    const head = collapsed.length === 1 && last === star
    if (blank && (last === undefined || last === space || head)) continue
    if (code === gate && collapsed.length === 0) continue
    if (code === gate && last === space) collapsed.pop()
    collapsed.push(blank ? space : code)
  }
  while (collapsed.length > 0 && collapsed[collapsed.length - 1] === space) collapsed.pop()
  return collapsed
}

/**
 * True when some text matches both globs (`b` may hold gates). Walks `b` once, keeping the set of positions `a` can
 * be at for the next three positions of `b`: linear in the form's length times the rule's.
 */
const intersects = (a: Glob, b: Glob): boolean => {
  const n = a.length
  const m = b.length
  const columns = [new Uint8Array(n + 1), new Uint8Array(n + 1), new Uint8Array(n + 1)]
  const live = [true, false, false]
  columns[0][0] = 1
  for (let j = 0; ; j++) {
    const current = columns[j % 3]
    const next = columns[(j + 1) % 3]
    const after = columns[(j + 2) % 3]
    for (let i = 0; i <= n; i++) {
      if (current[i] === 0) continue
      if (i < n && a[i] === star) current[i + 1] = 1
      if (j === m) continue
      const token = b[j]
      if (token === star) {
        next[i] = 1
        live[(j + 1) % 3] = true
        if (i < n) current[i + 1] = 1
      } else if (token === gate) {
        after[i] = 1
        live[(j + 2) % 3] = true
        if (i < n && (a[i] === star || a[i] === space)) {
          next[a[i] === star ? i : i + 1] = 1
          live[(j + 1) % 3] = true
        }
      } else if (i < n && (a[i] === star || a[i] === token)) {
        next[a[i] === star ? i : i + 1] = 1
        live[(j + 1) % 3] = true
      }
    }
    if (j === m) return current[n] === 1
    current.fill(0)
    live[j % 3] = false
    if (!live[(j + 1) % 3] && !live[(j + 2) % 3]) return false
  }
}

/**
 * Whether a `Bash(...)` rule's content may match a command form: exactly as `matchesCommand` when every word is
 * known, and when some word is only known at run time, whether any value it could take makes the rule match.
 */
export const mayMatchCommand = (content: string, form: CommandForm): boolean => {
  if (form.every((word) => word !== null)) return matchesCommand(content, form.join(" "))
  let command = formGlobs.get(form)
  if (command === undefined) {
    command = formGlob(form)
    formGlobs.set(form, command)
  }
  const glob = command
  return ruleGlobs(content).some((rule) => intersects(rule, glob))
}

// --- Paths ------------------------------------------------------------------------------------------------------

/** A path rule's anchor directory (absolute, not yet symlink-resolved) and its gitignore pattern relative to it. */
export interface PathPattern {
  readonly anchor: string
  /** The gitignore pattern; `""` means "the anchor and everything under it". */
  readonly pattern: string
}

/** The directories a path pattern is resolved against. */
export interface PathBases {
  readonly cwd: string
  readonly home: string
}

const globChars = /[*?[\]{}!\\]/

/**
 * Splits a path rule's content into an anchor directory and a gitignore pattern: `//abs` is absolute, `~/p` is under
 * home, `/p` is under the rule's project root, `./p` and `p` under the working directory. Literal leading directories
 * become part of the anchor (so that symlinks in them can be resolved); a bare name without a slash matches at any
 * depth below the working directory, as in gitignore.
 */
export const pathPattern = (rule: Rule, bases: PathBases): PathPattern => {
  const content = rule.content ?? ""
  let base: string
  let rest: string
  let anchored = true
  if (content.startsWith("//")) {
    base = "/"
    rest = content.slice(2)
  } else if (content === "~" || content.startsWith("~/")) {
    base = bases.home
    rest = content.slice(2)
  } else if (content.startsWith("/")) {
    base = rule.root
    rest = content.slice(1)
  } else if (content.startsWith("./")) {
    base = bases.cwd
    rest = content.slice(2)
  } else {
    base = bases.cwd
    rest = content
    anchored = rest.replace(/\/+$/, "").includes("/")
  }
  const trailing = rest.endsWith("/")
  const segments = rest.split("/").filter((s) => s !== "" && s !== ".")
  let anchor = base
  let i = 0
  while (i < segments.length - 1 && !globChars.test(segments[i])) {
    anchor = Path.resolve(anchor, segments[i])
    i++
  }
  if (segments.length === 1 && segments[0] === "..") return { anchor: Path.resolve(anchor, ".."), pattern: "" }
  const remaining = segments.slice(i)
  if (remaining.length === 1 && remaining[0] === "**") return { anchor, pattern: "" }
  if (remaining.length === 0) return { anchor, pattern: "" }
  return { anchor, pattern: `${anchored ? "/" : ""}${remaining.join("/")}${trailing ? "/" : ""}` }
}

const matchers = new Map<string, ReturnType<typeof ignore>>()

const matcherFor = (pattern: string, ignoreCase: boolean) => {
  const key = `${ignoreCase ? "i" : "s"}:${pattern}`
  const cached = matchers.get(key)
  if (cached !== undefined) return cached
  const made = ignore({ ignorecase: ignoreCase }).add(pattern)
  matchers.set(key, made)
  return made
}

/** True when `child` is `parent` or inside it (both absolute and normalized). */
export const isInside = (parent: string, child: string): boolean => {
  const rel = Path.relative(parent, child)
  return rel === "" || (!rel.startsWith("..") && !Path.isAbsolute(rel))
}

/**
 * Matches a resolved path against a path pattern whose anchor is resolved too. Deny and ask rules match
 * case-insensitively (stricter), allow rules case-sensitively.
 */
export const matchesPath = (anchor: string, pattern: string, path: string, behavior: PermissionBehavior): boolean => {
  if (!isInside(anchor, path)) return false
  const rel = Path.relative(anchor, path)
  if (pattern === "") return true
  if (rel === "") return false
  return matcherFor(pattern, behavior !== "allow").ignores(rel)
}

// --- URLs -------------------------------------------------------------------------------------------------------

/** The host of a URL, lower-cased, or undefined when it does not parse. */
export const hostOf = (url: string): string | undefined => {
  try {
    const host = new URL(url).hostname.toLowerCase()
    return host === "" ? undefined : host.replace(/^\[|\]$/g, "").replace(/\.$/, "")
  } catch {
    return undefined
  }
}

/** Matches a `WebFetch(domain:…)` rule content against a host; `domain:*.example.com` covers subdomains. */
export const matchesDomain = (content: string, host: string): boolean => {
  const domain = content.slice("domain:".length).toLowerCase().replace(/\.$/, "")
  if (domain.startsWith("*.")) return host.endsWith(domain.slice(1))
  return host === domain
}

/** Matches a `Skill(…)` rule content against a skill name: the name, or `prefix:*` for every name it starts. */
export const matchesName = (content: string, name: string): boolean =>
  content.endsWith(":*") ? name.startsWith(content.slice(0, -2)) : content === name

// --- Suggestions ------------------------------------------------------------------------------------------------

/** The `Bash(prefix:*)` rule an "always" approval adds for one simple command: the command and its subcommand. */
export const bashPrefixRule = (argv: ReadonlyArray<string>): string | undefined => {
  if (argv.length === 0) return undefined
  const words = [argv[0]]
  if (argv.length > 1 && /^[A-Za-z][A-Za-z0-9_-]*$/.test(argv[1])) words.push(argv[1])
  return `Bash(${words.join(" ")}:*)`
}
