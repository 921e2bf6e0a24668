/**
 * Glob patterns of shell words and of path rules as lists of path segments, and the question a permission check
 * asks of them: can one path match both a word's glob and a rule? A glob is matched against the file system when
 * the command is checked, but files can appear before it runs; a rule that the glob *could* match is what decides.
 */
import type { Template } from "./ShellExpansion.js"

/** One path segment: a literal name, a pattern for one name, or `**` (any number of segments). */
export type Segment =
  | { readonly _tag: "Name"; readonly name: string }
  | {
      readonly _tag: "Pattern"
      readonly source: string
      readonly regex: RegExp
      /**
       * A shell word's pattern that starts with `*` or `?`: as bash globs it (without `dotglob`), it never matches a
       * name starting with `.`.
       */
      readonly skipsDot?: boolean | undefined
      /** The literal text every matching name starts with, and ends with (`*.pem`: "" and ".pem"). */
      readonly prefix?: string | undefined
      readonly suffix?: string | undefined
    }
  | { readonly _tag: "Any" }

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")

/** Translates glob characters (`*`, `?`, `[…]`, `[!…]`) of one segment to a regular expression source. */
const globSource = (chars: ReadonlyArray<{ readonly c: string; readonly active: boolean }>): string => {
  let out = ""
  for (let i = 0; i < chars.length; i++) {
    const { c, active } = chars[i]
    if (!active) out += escapeRegExp(c)
    else if (c === "*") out += "[^/]*"
    else if (c === "?") out += "[^/]"
    else if (c === "[") {
      let j = i + 1
      if (chars[j]?.c === "!" || chars[j]?.c === "^") j++
      if (chars[j]?.c === "]") j++
      while (j < chars.length && chars[j].c !== "]") j++
      if (j >= chars.length) out += "\\["
      else {
        const body = chars.slice(i + 1, j).map((x) => x.c)
        const negate = body[0] === "!" || body[0] === "^"
        const members = (negate ? body.slice(1) : body).map((m) => (m === "\\" || m === "]" ? `\\${m}` : m)).join("")
        out += `[${negate ? "^" : ""}${members}]`
        i = j
      }
    } else if ("+@!".includes(c) && chars[i + 1]?.c === "(" && chars[i + 1].active) {
      // An extglob (`@(a|b)`, `!(x)`): anything in this segment.
      return "[^/]*"
    } else out += escapeRegExp(c)
  }
  return out
}

const segment = (
  chars: ReadonlyArray<{ readonly c: string; readonly active: boolean }>,
  flags: string,
  shellWord = false
): Segment => {
  const active = chars.some(({ c, active }) => active && (c === "*" || c === "?" || c === "["))
  const name = chars.map((x) => x.c).join("")
  if (!active) return { _tag: "Name", name }
  const source = globSource(chars)
  // bash matches a leading `.` only literally; an extglob anywhere in the word is left to match anything.
  const extglob = chars.some((x, i) => x.active && "+@!*?".includes(x.c) && chars[i + 1]?.c === "(")
  const skipsDot = shellWord && chars[0].active && (chars[0].c === "*" || chars[0].c === "?") && !extglob
  const special = (x: { readonly c: string; readonly active: boolean }) => x.active && "*?[]+@!()".includes(x.c)
  const firstSpecial = chars.findIndex(special)
  const lastSpecial = chars.length - 1 - [...chars].reverse().findIndex(special)
  const ends = extglob
    ? {}
    : {
        prefix: chars
          .slice(0, firstSpecial)
          .map((x) => x.c)
          .join(""),
        suffix: chars
          .slice(lastSpecial + 1)
          .map((x) => x.c)
          .join("")
      }
  try {
    return {
      _tag: "Pattern",
      source,
      regex: new RegExp(`^${source}$`, flags),
      ...(skipsDot ? { skipsDot } : {}),
      ...ends
    }
  } catch {
    return { _tag: "Pattern", source: "[^/]*", regex: /^[^/]*$/ }
  }
}

/**
 * The segments of an absolute word (its pieces plain text after expansion), split at `/`; `.` segments dropped.
 * `..` stays a name: it is applied after symlinks when paths are resolved. Unless `dotglob` is set, a segment
 * starting with `*` or `?` never matches a name starting with `.`, as in bash.
 */
export const wordSegments = (template: Template, flags = "", dotglob = false): ReadonlyArray<Segment> => {
  const out: Array<Segment> = []
  let current: Array<{ c: string; active: boolean }> = []
  const flush = () => {
    if (current.length > 0 && !(current.length === 1 && current[0].c === ".")) {
      out.push(segment(current, flags, !dotglob))
    }
    current = []
  }
  for (const piece of template) {
    if (piece._tag !== "Text") continue
    for (const c of piece.text) {
      if (c === "/") flush()
      else current.push({ c, active: !piece.quoted })
    }
  }
  flush()
  return out
}

/** The segments of a gitignore-style pattern (`**` is any number of segments), case-insensitive when asked. */
export const ruleSegments = (pattern: string, ignoreCase: boolean): ReadonlyArray<Segment> =>
  pattern
    .split("/")
    .filter((s) => s !== "" && s !== ".")
    .map((s) =>
      s === "**"
        ? ({ _tag: "Any" } as const)
        : segment(
            [...s.replace(/\\(.)/g, "$1")].map((c) => ({ c, active: true })),
            ignoreCase ? "i" : ""
          )
    )

const nameSegments = (path: string): ReadonlyArray<Segment> =>
  path
    .split("/")
    .filter((s) => s !== "")
    .map((name) => ({ _tag: "Name", name }) as const)

/**
 * The segments a path rule covers: its anchor, then its pattern (`""` is everything under the anchor; a pattern
 * without a slash matches at any depth, as in gitignore). A rule also covers everything under what it matches.
 */
export const ruleCoverage = (anchor: string, pattern: string, ignoreCase: boolean): ReadonlyArray<Segment> => {
  const base = nameSegments(anchor)
  if (pattern === "") return base
  const anchored = pattern.replace(/\/+$/, "").includes("/")
  const tail = ruleSegments(pattern.replace(/^!/, ""), ignoreCase)
  return anchored ? [...base, ...tail] : [...base, { _tag: "Any" }, ...tail]
}

const sameName = (a: string, b: string, ignoreCase: boolean): boolean =>
  ignoreCase ? a.toLowerCase() === b.toLowerCase() : a === b

/** True when every name a rule's segment matches starts with `.` (`.env`, `.env.*`). */
const onlyDotNames = (rule: Segment): boolean =>
  rule._tag === "Name" ? rule.name.startsWith(".") : rule._tag === "Pattern" && rule.source.startsWith("\\.")

/** Whether one name could match both segments (two patterns: assumed yes). */
const compatible = (word: Segment, rule: Segment, ignoreCase: boolean): boolean => {
  if (word._tag === "Pattern" && word.skipsDot === true && onlyDotNames(rule)) return false
  if (word._tag === "Any" || rule._tag === "Any") return true
  if (word._tag === "Name" && rule._tag === "Name") return sameName(word.name, rule.name, ignoreCase)
  if (word._tag === "Name" && rule._tag === "Pattern") return rule.regex.test(word.name)
  if (word._tag === "Pattern" && rule._tag === "Name") {
    return ignoreCase ? new RegExp(`^${word.source}$`, "i").test(rule.name) : word.regex.test(rule.name)
  }
  // Two patterns: a name matching both starts with both literal starts and ends with both literal ends.
  if (word._tag === "Pattern" && rule._tag === "Pattern") {
    const fold = (text: string | undefined) => (ignoreCase ? text?.toLowerCase() : text)
    const [wp, rp, ws, rs] = [fold(word.prefix), fold(rule.prefix), fold(word.suffix), fold(rule.suffix)]
    if (wp !== undefined && rp !== undefined && !wp.startsWith(rp) && !rp.startsWith(wp)) return false
    if (ws !== undefined && rs !== undefined && !ws.endsWith(rs) && !rs.endsWith(ws)) return false
  }
  return true
}

/**
 * True when some path matches the word's segments and lies in what the rule covers (the rule's segments match
 * the path or one of its parents). `below` treats the word as a directory read with everything under it.
 */
export const mayOverlap = (
  word: ReadonlyArray<Segment>,
  rule: ReadonlyArray<Segment>,
  options: { readonly ignoreCase: boolean; readonly below: boolean }
): boolean => {
  const memo = new Map<number, boolean>()
  const go = (w: number, r: number): boolean => {
    if (r === rule.length) return true
    if (w === word.length) return options.below || rule.slice(r).every((s) => s._tag === "Any")
    const key = w * (rule.length + 1) + r
    const cached = memo.get(key)
    if (cached !== undefined) return cached
    const ruleSegment = rule[r]
    const result =
      ruleSegment._tag === "Any"
        ? go(w, r + 1) || go(w + 1, r)
        : compatible(word[w], ruleSegment, options.ignoreCase) && go(w + 1, r + 1)
    memo.set(key, result)
    return result
  }
  return go(0, 0)
}

/** Segments of a resolved absolute path. */
export const pathSegments = nameSegments
