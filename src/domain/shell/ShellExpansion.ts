/**
 * The expansions bash applies to a word before a command sees it, as far as they can be known without running
 * anything: brace expansion (`{a,b}`, `{1..3}`), tilde expansion (`~`, `~+`), and the variables whose value is known
 * (`$HOME`, `$PWD`). Every other expansion leaves the word unresolved: what it names is only known at run time.
 * A word is a template of pieces, each quoted (inert) or not (brace, tilde and glob characters are active).
 */

/** One piece of a word as written. */
export type Piece =
  /** Plain characters, quotes and escapes removed; `quoted` pieces are inert (no braces, tilde or glob). */
  | { readonly _tag: "Text"; readonly text: string; readonly quoted: boolean }
  /** `$NAME` or `${NAME}`. */
  | { readonly _tag: "Var"; readonly name: string; readonly quoted: boolean }
  /** Anything else whose value is only known at run time (`$(…)`, `$1`, `${x:-y}`, …), as written. */
  | { readonly _tag: "Opaque"; readonly text: string }

/** A word as a list of pieces. */
export type Template = ReadonlyArray<Piece>

/** What the expansion of a word depends on. */
export interface Environment {
  readonly home: string
  /** The directory the command runs in, when known (`$PWD`, `~+`). */
  readonly cwd: string | undefined
  /** The current user's login name: `~name` of that user is `home`; any other `~user` is unresolved. */
  readonly user?: string | undefined
}

/** The most words one word may brace-expand into before it is treated as unresolved. */
export const maxBraceWords = 256

const text = (value: string, quoted: boolean): Piece => ({ _tag: "Text", text: value, quoted })

/** The word's text when every piece is plain text, else undefined. */
export const plainText = (template: Template): string | undefined => {
  let out = ""
  for (const piece of template) {
    if (piece._tag !== "Text") return undefined
    out += piece.text
  }
  return out
}

/** The word as written, with unresolved pieces shown as `$NAME` or their source text. */
export const display = (template: Template): string =>
  template.map((p) => (p._tag === "Text" ? p.text : p._tag === "Var" ? `$${p.name}` : p.text)).join("")

const globChar = /[*?[]/

/** True when an unquoted glob character remains (the word may name several files). */
export const hasGlob = (template: Template): boolean =>
  template.some((p) => p._tag === "Text" && !p.quoted && globChar.test(p.text))

// --- Brace expansion --------------------------------------------------------------------------------------------

/** A character with its quoting, or a whole non-text piece. */
type Token = { readonly c: string; readonly active: boolean } | { readonly piece: Piece }

const tokenize = (template: Template): Array<Token> =>
  template.flatMap(
    (piece): Array<Token> =>
      piece._tag === "Text" ? [...piece.text].map((c) => ({ c, active: !piece.quoted })) : [{ piece }]
  )

const untokenize = (tokens: ReadonlyArray<Token>): Template => {
  const out: Array<Piece> = []
  for (const token of tokens) {
    if ("piece" in token) {
      out.push(token.piece)
      continue
    }
    const last = out[out.length - 1]
    if (last !== undefined && last._tag === "Text" && last.quoted === !token.active) {
      out[out.length - 1] = text(last.text + token.c, last.quoted)
    } else out.push(text(token.c, !token.active))
  }
  return out
}

const isActive = (token: Token | undefined, c: string): boolean =>
  token !== undefined && "c" in token && token.active && token.c === c

/** Index of the `}` closing the `{` at `open`, and the top-level commas between them; undefined if unbalanced. */
const braceGroup = (tokens: ReadonlyArray<Token>, open: number) => {
  let depth = 0
  const commas: Array<number> = []
  for (let i = open + 1; i < tokens.length; i++) {
    const token = tokens[i]
    if (isActive(token, "\\")) continue
    if (isActive(token, "{")) depth++
    else if (isActive(token, "}")) {
      if (depth === 0) return { close: i, commas }
      depth--
    } else if (depth === 0 && isActive(token, ",")) commas.push(i)
  }
  return undefined
}

const sequencePattern = /^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?$/

/** `{1..3}`, `{a..e}`, `{10..1..2}`: the words of a sequence expression, or undefined when it is not one. */
const sequence = (inner: ReadonlyArray<Token>): ReadonlyArray<string> | undefined => {
  if (inner.some((t) => !("c" in t) || !t.active)) return undefined
  const match = sequencePattern.exec(inner.map((t) => ("c" in t ? t.c : "")).join(""))
  if (match === null) return undefined
  const [, from, to, stepText] = match
  const numeric = /\d/.test(from) && /\d/.test(to)
  if (!numeric && (/\d/.test(from) || /\d/.test(to))) return undefined
  const start = numeric ? Number(from) : from.charCodeAt(0)
  const end = numeric ? Number(to) : to.charCodeAt(0)
  const step = Math.max(1, Math.abs(Number(stepText ?? "1")))
  const count = Math.floor(Math.abs(end - start) / step) + 1
  if (count > maxBraceWords) return Array.from({ length: maxBraceWords + 1 }, () => "")
  const width = numeric && /^-?0\d/.test(from + to) ? Math.max(from.length, to.length) : 0
  return Array.from({ length: count }, (_, i) => {
    const value = start + (end >= start ? i : -i) * step
    return numeric ? String(value).padStart(width, "0") : String.fromCharCode(value)
  })
}

/** Expands the first brace group in the tokens (recursively the rest); undefined when there are too many words. */
const expandTokens = (tokens: ReadonlyArray<Token>, budget: { n: number }): Array<Array<Token>> | undefined => {
  for (let open = 0; open < tokens.length; open++) {
    if (isActive(tokens[open], "\\")) {
      open++
      continue
    }
    if (!isActive(tokens[open], "{") || isActive(tokens[open - 1], "$")) continue
    const group = braceGroup(tokens, open)
    if (group === undefined) return [[...tokens]]
    const prefix = tokens.slice(0, open)
    const suffix = tokens.slice(group.close + 1)
    let alternatives: Array<ReadonlyArray<Token>>
    if (group.commas.length > 0) {
      const bounds = [open, ...group.commas, group.close]
      alternatives = bounds.slice(1).map((end, i) => tokens.slice(bounds[i] + 1, end))
    } else {
      const words = sequence(tokens.slice(open + 1, group.close))
      if (words === undefined) {
        // Not a brace expression: `{` stays literal; look for a later group.
        const rest = expandTokens(tokens.slice(open + 1), budget)
        return rest?.map((r) => [...tokens.slice(0, open + 1), ...r])
      }
      alternatives = words.map((w) => [...w].map((c) => ({ c, active: false })))
    }
    const out: Array<Array<Token>> = []
    for (const alternative of alternatives) {
      const expanded = expandTokens([...prefix, ...alternative, ...suffix], budget)
      if (expanded === undefined) return undefined
      out.push(...expanded)
      budget.n += expanded.length
      if (out.length > maxBraceWords || budget.n > maxBraceWords * 8) return undefined
    }
    return out
  }
  return [[...tokens]]
}

/**
 * The words a word becomes by brace expansion (itself when it has no brace expression); undefined when it would
 * become more than `maxBraceWords` words.
 */
export const expandBraces = (template: Template): ReadonlyArray<Template> | undefined => {
  if (!template.some((p) => p._tag === "Text" && !p.quoted && p.text.includes("{"))) return [template]
  const expanded = expandTokens(tokenize(template), { n: 0 })
  return expanded?.map(untokenize)
}

// --- Tilde and variables ----------------------------------------------------------------------------------------

/** A word after tilde and variable expansion: resolved to text, or unresolved (with why). */
export type Expanded =
  | { readonly _tag: "Resolved"; readonly template: Template }
  | { readonly _tag: "Unresolved"; readonly reason: string }

const unresolved = (reason: string): Expanded => ({ _tag: "Unresolved", reason })

const knownVariable = (name: string, env: Environment): string | undefined =>
  name === "HOME" ? env.home : name === "PWD" ? env.cwd : undefined

/** `~`, `~/…`, `~+`, `~user` at the start of a word (bash's rules: an unquoted prefix up to the first `/`). */
const expandTilde = (template: Template, env: Environment): Expanded => {
  const first = template[0]
  if (first === undefined || first._tag !== "Text" || first.quoted || !first.text.startsWith("~")) {
    return { _tag: "Resolved", template }
  }
  const slash = first.text.indexOf("/")
  // A quoted or expanded part inside the prefix (`~"root"`, `~$u`) keeps the word as written.
  if (slash === -1 && template.length > 1) return { _tag: "Resolved", template }
  const prefix = first.text.slice(1, slash === -1 ? undefined : slash)
  const rest = slash === -1 ? "" : first.text.slice(slash)
  let base: string | undefined
  if (prefix === "" || (env.user !== undefined && prefix === env.user)) base = env.home
  else if (prefix === "+") base = env.cwd
  else if (prefix === "-") return unresolved(`~- is the previous directory, only known at run time`)
  // `~N`, `~+N`, `~-N`: an entry of the directory stack (`~+0` is the working directory as `pushd` last left it)
  else if (/^[+-]?\d+$/.test(prefix)) return unresolved(`~${prefix} is an entry of the directory stack`)
  // any other prefix is a login name bash looks up (left as written only when no such user exists)
  else return unresolved(`~${prefix} is the home directory of another user`)
  if (base === undefined) return unresolved(`~${prefix} is only known at run time`)
  return { _tag: "Resolved", template: [text(base, true), text(rest, false), ...template.slice(1)] }
}

const splitsOrGlobs = /[\s*?[\]]/

/**
 * Tilde and variable expansion of one word (after brace expansion): `$HOME` and `$PWD` are known, any other
 * variable or expansion leaves the word unresolved. A known value that word splitting or globbing would change
 * (unquoted, with blanks or glob characters) leaves it unresolved too.
 */
export const expandWord = (template: Template, env: Environment): Expanded => {
  const tilde = expandTilde(template, env)
  if (tilde._tag === "Unresolved") return tilde
  const out: Array<Piece> = []
  for (const piece of tilde.template) {
    if (piece._tag === "Text") out.push(piece)
    else if (piece._tag === "Opaque") return unresolved(`${piece.text} is only known at run time`)
    else {
      const value = knownVariable(piece.name, env)
      if (value === undefined) return unresolved(`$${piece.name} is only known at run time`)
      if (!piece.quoted && splitsOrGlobs.test(value)) return unresolved(`$${piece.name} would be split or globbed`)
      out.push(text(value, true))
    }
  }
  return { _tag: "Resolved", template: out }
}

/** Drops the first characters of a word when they are exactly `prefix` in plain text (`--target-directory=`). */
export const dropPrefix = (template: Template, prefix: string): Template | undefined => {
  let left = prefix
  let at = 0
  while (left.length > 0) {
    const piece = template[at]
    if (piece === undefined || piece._tag !== "Text") return undefined
    if (piece.text.length <= left.length) {
      if (!left.startsWith(piece.text)) return undefined
      left = left.slice(piece.text.length)
      at++
    } else {
      if (!piece.text.startsWith(left)) return undefined
      return [text(piece.text.slice(left.length), piece.quoted), ...template.slice(at + 1)]
    }
  }
  return template.slice(at)
}
