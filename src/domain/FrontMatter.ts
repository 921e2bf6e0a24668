/**
 * The YAML front matter of Claude Code's Markdown definition files (sub-agents, skills): the `---` lines that open
 * the file, the `key: value` lines between them (the subset of YAML these files use) and the body after them.
 * Parsing is pure; a problem names the file and the field or line.
 */

/** A front-matter problem: the file, the field (or `line N`) and what is wrong. */
export interface Problem {
  readonly file: string
  readonly field: string
  readonly message: string
}

/** Whether a result is a problem. */
export const isProblem = (u: unknown): u is Problem =>
  typeof u === "object" && u !== null && "field" in u && "message" in u && "file" in u && !(u instanceof Map)

const unquote = (value: string): string => {
  const v = value.trim()
  if (v.length >= 2 && ((v.startsWith('"') && v.endsWith('"')) || (v.startsWith("'") && v.endsWith("'")))) {
    return v.startsWith('"') ? v.slice(1, -1).replace(/\\"/g, '"').replace(/\\n/g, "\n") : v.slice(1, -1)
  }
  return v
}

/** A value: a scalar, or a list (`[a, b]` inline or `- a` lines). */
export type Value = string | ReadonlyArray<string>

/**
 * Parses the front matter's `key: value` lines (the subset of YAML these files use: scalars, quoted strings, inline
 * and block lists, `|`/`>` blocks). Returns the fields or a problem naming the line.
 */
const parseFields = (file: string, lines: ReadonlyArray<string>, firstLine: number): Map<string, Value> | Problem => {
  const fields = new Map<string, Value>()
  let i = 0
  while (i < lines.length) {
    const line = lines[i]!
    if (line.trim() === "" || line.trimStart().startsWith("#")) {
      i++
      continue
    }
    const match = /^([A-Za-z_][\w-]*)\s*:(.*)$/.exec(line)
    if (match === null) {
      return { file, field: `line ${firstLine + i}`, message: `expected "key: value", found ${JSON.stringify(line)}` }
    }
    const key = match[1]!
    const rest = match[2]!.trim()
    i++
    if (rest === "|" || rest === ">" || rest === "|-" || rest === ">-") {
      const block: Array<string> = []
      while (i < lines.length && (lines[i]!.startsWith(" ") || lines[i]!.trim() === "")) block.push(lines[i++]!.trim())
      fields.set(key, block.join(rest.startsWith("|") ? "\n" : " ").trim())
    } else if (rest === "") {
      const items: Array<string> = []
      while (i < lines.length && /^\s*-\s+/.test(lines[i]!)) items.push(unquote(lines[i++]!.replace(/^\s*-\s+/, "")))
      fields.set(key, items.length > 0 ? items : "")
    } else if (rest.startsWith("[") && rest.endsWith("]")) {
      fields.set(
        key,
        rest
          .slice(1, -1)
          .split(",")
          .map(unquote)
          .filter((s) => s !== "")
      )
    } else {
      fields.set(key, unquote(rest))
    }
  }
  return fields
}

/** A file split into its front-matter fields and its body (`bodyLine`: the 1-based line the body starts at). */
export interface Split {
  readonly fields: ReadonlyMap<string, Value>
  readonly body: string
  readonly bodyLine: number
}

/** Splits a file's text; the front matter must open the file, between two `---` lines. */
export const split = (file: string, text: string): Split | Problem => {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/)
  if (lines[0]?.trim() !== "---") {
    return { file, field: "front matter", message: 'the file must start with a "---" line opening the front matter' }
  }
  const end = lines.findIndex((line, i) => i > 0 && line.trim() === "---")
  if (end < 0) return { file, field: "front matter", message: 'no closing "---" line' }
  const fields = parseFields(file, lines.slice(1, end), 2)
  if (isProblem(fields)) return fields
  return { fields, body: lines.slice(end + 1).join("\n"), bodyLine: end + 2 }
}

/** A single-valued field (a list is a problem naming the field). */
export const scalar = (file: string, fields: ReadonlyMap<string, Value>, key: string): string | undefined | Problem => {
  const value = fields.get(key)
  if (value === undefined) return undefined
  if (typeof value !== "string") return { file, field: key, message: "expected a single value, found a list" }
  return value
}

/** The line (1-based) a field is given on, for messages; the front matter's first line when it is not found. */
export const lineOf = (text: string, key: string): number => {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/)
  const at = lines.findIndex((line, i) => i > 0 && new RegExp(`^${key}\\s*:`).test(line))
  return at < 0 ? 1 : at + 1
}
