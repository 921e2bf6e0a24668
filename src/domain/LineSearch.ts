/**
 * The built-in Grep engine's matching, on one file's text: ripgrep's line-oriented semantics (a match never crosses a
 * line end) without splitting the text into lines, and its multi-line mode.
 */
import type { Line, Query } from "./GrepQuery.js"

/** The compiled forms of a pattern a search needs. */
export interface Compiled {
  /** Global and multi-line: scans a whole text for candidate positions (or multi-line matches). */
  readonly scan: RegExp
  /** Non-global: decides whether one line matches. */
  readonly line: RegExp
}

/** Splits text into lines; a final newline does not start another line. */
export const splitText = (text: string): ReadonlyArray<string> => {
  const lines = text.split("\n")
  if (lines[lines.length - 1] === "") lines.pop()
  return lines
}

const searchMultiline = (text: string, regex: RegExp, lineCount: number) => {
  const starts: Array<number> = [0]
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts.push(i + 1)
  const lineOf = (offset: number) => {
    let lo = 0
    let hi = starts.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (starts[mid] <= offset) lo = mid
      else hi = mid - 1
    }
    return lo + 1
  }
  const matched = new Set<number>()
  let count = 0
  regex.lastIndex = 0
  let lastGroupEnd = 0
  for (let m = regex.exec(text); m !== null; m = regex.exec(text)) {
    const end = m.index + m[0].length
    if (m[0].length === 0) regex.lastIndex++
    const first = lineOf(m.index)
    const endsOnBreak = m[0].length > 0 && text.charCodeAt(end - 1) === 10
    const last = Math.max(first, lineOf(endsOnBreak ? end - 1 : end))
    if (first > lineCount) continue
    if (first > lastGroupEnd) count++
    lastGroupEnd = Math.max(lastGroupEnd, last)
    for (let n = first; n <= Math.min(last, lineCount); n++) matched.add(n)
  }
  return { matched, count }
}

/**
 * The matching lines of a line-oriented search, without splitting the text: the global regex finds a candidate
 * position, the line around it is checked on its own (a match may not cross a line end), and the scan resumes at
 * the next line. With `firstOnly`, stops at the first matching line.
 */
const searchLines = (text: string, compiled: Compiled, firstOnly: boolean): Map<number, string> => {
  const found = new Map<number, string>()
  const { scan, line } = compiled
  let lineNo = 1
  let lineStart = 0
  scan.lastIndex = 0
  while (lineStart <= text.length) {
    const m = scan.exec(text)
    if (m === null) break
    let nl = text.indexOf("\n", lineStart)
    while (nl !== -1 && nl < m.index) {
      lineNo++
      lineStart = nl + 1
      nl = text.indexOf("\n", lineStart)
    }
    // The position after a final newline (or in an empty text) starts no line.
    if (lineStart === text.length) break
    const lineEnd = nl === -1 ? text.length : nl
    const candidate = text.slice(lineStart, lineEnd)
    if (line.test(candidate)) {
      found.set(lineNo, candidate)
      if (firstOnly) break
    }
    if (nl === -1) break
    lineNo++
    lineStart = nl + 1
    scan.lastIndex = lineStart
  }
  return found
}

/** Searches one file's text; returns undefined when nothing matches. */
export const searchText = (
  text: string,
  compiled: Compiled,
  query: Pick<Query, "mode" | "multiline" | "before" | "after">
): { readonly count: number; readonly lines: ReadonlyArray<Line> } | undefined => {
  if (!query.multiline) {
    const found = searchLines(text, compiled, query.mode === "files_with_matches")
    if (found.size === 0) return undefined
    if (query.mode !== "content") return { count: found.size, lines: [] }
    if (query.before === 0 && query.after === 0) {
      return { count: found.size, lines: [...found].map(([number, t]): Line => ({ number, text: t, match: true })) }
    }
    return { count: found.size, lines: withContext(splitText(text), new Set(found.keys()), query) }
  }
  const scan = compiled.scan
  scan.lastIndex = 0
  if (!scan.test(text)) return undefined
  const lines = splitText(text)
  const { matched, count } = searchMultiline(text, scan, lines.length)
  if (matched.size === 0) return undefined
  if (query.mode !== "content") return { count, lines: [] }
  return { count, lines: withContext(lines, matched, query) }
}

const withContext = (
  lines: ReadonlyArray<string>,
  matched: ReadonlySet<number>,
  query: Pick<Query, "before" | "after">
): ReadonlyArray<Line> => {
  const shown = new Set<number>(matched)
  for (const n of matched) {
    for (let k = Math.max(1, n - query.before); k <= Math.min(lines.length, n + query.after); k++) shown.add(k)
  }
  return [...shown].sort((a, b) => a - b).map((n): Line => ({ number: n, text: lines[n - 1], match: matched.has(n) }))
}

const plainLiteral = /[A-Za-z0-9 _\-"'`:;,<>=/#@%&~!]/
const escapedLiteral = /[^A-Za-z0-9]/

/**
 * Strings every match of a pattern contains: the runs of literal ASCII characters outside any group, class or
 * quantified atom, when the pattern has no alternation. Conservative: anything unusual ends a run, and a pattern it
 * cannot reason about gives none. With `caseInsensitive`, only runs without letters are kept.
 */
export const requiredLiterals = (pattern: string, caseInsensitive: boolean): ReadonlyArray<string> => {
  const runs: Array<string> = []
  let run = ""
  let depth = 0
  const end = () => {
    if (run.length >= 2 && (!caseInsensitive || run.toLowerCase() === run.toUpperCase())) runs.push(run)
    run = ""
  }
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]
    if (c === "|") return []
    let literal: string | undefined
    if (c === "\\") {
      const next = pattern[i + 1]
      if (next === undefined) return []
      i++
      literal = escapedLiteral.test(next) && next.charCodeAt(0) < 128 ? next : undefined
    } else if (c === "[") {
      // Skip the class: `]` right after `[` or `[^` is a literal member.
      let j = i + 1
      if (pattern[j] === "^") j++
      if (pattern[j] === "]") j++
      while (j < pattern.length && pattern[j] !== "]") j += pattern[j] === "\\" ? 2 : 1
      i = j
    } else if (c === "{") {
      // A counted quantifier (or a literal brace): skip it, its digits are no literal.
      while (i < pattern.length && pattern[i] !== "}") i++
    } else if (c === "(") depth++
    else if (c === ")") depth = Math.max(0, depth - 1)
    else if (depth === 0 && plainLiteral.test(c)) literal = c
    if (depth > 0 || (c === ")" && depth === 0)) {
      end()
      continue
    }
    const quantifier = pattern[i + 1]
    if (literal === undefined) end()
    else if (quantifier === "?" || quantifier === "*" || quantifier === "{") end()
    else {
      run += literal
      if (quantifier === "+") end()
    }
  }
  end()
  return runs
}

/**
 * Bytes of source text roughly from most to least frequent (letters, space, punctuation, digits); a byte not listed
 * counts as rarer than all of them. Only the order matters.
 */
const commonBytes = " etaoinsrlcdhu\n.mp_f(),=;g\"'by/:-wkvx{}0T1SEIACRN2L*PDO<>M3[]F#H5B4U98Gq76jV$W&z+|!?@%"

const rarity = (literal: string): number => {
  let rarest = 0
  for (let i = 0; i < literal.length; i++) {
    const rank = commonBytes.indexOf(literal[i])
    rarest = Math.max(rarest, rank === -1 ? commonBytes.length : rank)
  }
  return rarest
}

/**
 * The literals, the one least likely to occur first (its rarest byte the rarest, then the longest): the reader looks
 * for the first one to find candidate lines, and a rare one finds fewer lines that do not match.
 */
export const byRarity = (literals: ReadonlyArray<string>): ReadonlyArray<string> =>
  [...literals].sort((a, b) => rarity(b) - rarity(a) || b.length - a.length)
