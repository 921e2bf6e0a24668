/**
 * Shell words from a tree-sitter-bash tree: the unquoted value of each word (quotes removed, escapes and ANSI-C
 * strings decoded), whether it holds an expansion, and whether a glob or brace pattern may turn it into other words.
 */
import type { Node } from "web-tree-sitter"
import type { Piece, Template } from "../../domain/shell/ShellExpansion.js"

/** One shell word: its unquoted value (or the text as written when it holds an expansion). */
export interface Word {
  readonly value: string
  /** False when the word holds an expansion ($VAR, $(…), …): its value is only known when the shell runs. */
  readonly literal: boolean
  /** True when an unquoted glob or brace pattern may turn the word into other words. */
  readonly glob: boolean
  /** The word as pieces for path expansion (braces, tilde, known variables, globs). */
  readonly template: Template
}

const expansionTypes = new Set([
  "simple_expansion",
  "expansion",
  "command_substitution",
  "arithmetic_expansion",
  "process_substitution"
])

export const childrenOf = (node: Node): ReadonlyArray<Node> =>
  node.children.filter((child): child is Node => child !== null)

export const containsExpansion = (node: Node): boolean =>
  expansionTypes.has(node.type) || childrenOf(node).some(containsExpansion)

const unescapeBare = (text: string): string => text.replace(/\\\n/g, "").replace(/\\([\s\S])/g, "$1")

const unescapeDoubleQuoted = (text: string): string =>
  text.replace(/\\([$`"\\\n])/g, (_, char: string) => (char === "\n" ? "" : char))

const ansiEscapes: Record<string, string> = {
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?"
}

const decodeAnsiC = (text: string): string =>
  text.replace(
    /\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|[\s\S])/g,
    (whole, sequence: string) => {
      const head = sequence[0]
      if (head === "x" || head === "u" || head === "U")
        return String.fromCodePoint(Number.parseInt(sequence.slice(1), 16))
      if (/[0-7]/.test(head)) return String.fromCharCode(Number.parseInt(sequence, 8) & 0xff)
      if (head === "c" && sequence.length === 2) return String.fromCharCode(sequence.charCodeAt(1) & 0x1f)
      return ansiEscapes[sequence] ?? whole
    }
  )

/** The unquoted value of a word node, or undefined when it holds an expansion. */
export const nodeValue = (node: Node): string | undefined => {
  switch (node.type) {
    case "word":
      return unescapeBare(node.text)
    case "raw_string":
      return node.text.slice(1, -1)
    case "ansi_c_string":
      return decodeAnsiC(node.text.slice(2, -1))
    case "string":
    case "translated_string": {
      if (containsExpansion(node)) return undefined
      const text = node.text
      return unescapeDoubleQuoted(text.slice(text.indexOf('"') + 1, -1))
    }
    case "concatenation":
    case "command_name":
    case "variable_assignment":
      return joinValues(childrenOf(node))
    default:
      return containsExpansion(node) ? undefined : node.text
  }
}

const joinValues = (nodes: ReadonlyArray<Node>): string | undefined => {
  let out = ""
  for (const node of nodes) {
    const value = nodeValue(node)
    if (value === undefined) return undefined
    out += value
  }
  return out
}

const hasGlob = (node: Node): boolean => {
  switch (node.type) {
    case "word":
      return /[*?[{]/.test(node.text.replace(/\\[\s\S]/g, ""))
    case "extglob_pattern":
    case "brace_expression":
      return true
    case "concatenation":
    case "command_name":
      return childrenOf(node).some(hasGlob)
    default:
      return false
  }
}

/** Unquoted text: a backslash makes the next character inert; an escaped newline disappears. */
const barePieces = (source: string): Array<Piece> => {
  if (!source.includes("\\")) return [{ _tag: "Text", text: source, quoted: false }]
  const out: Array<Piece> = []
  let run = ""
  for (let i = 0; i < source.length; i++) {
    const c = source[i]
    if (c !== "\\") {
      run += c
      continue
    }
    if (run !== "") out.push({ _tag: "Text", text: run, quoted: false })
    run = ""
    const next = source[++i]
    if (next !== undefined && next !== "\n") out.push({ _tag: "Text", text: next, quoted: true })
  }
  if (run !== "") out.push({ _tag: "Text", text: run, quoted: false })
  return out
}

const plainName = /^[A-Za-z_][A-Za-z0-9_]*$/

/** `$NAME` and `${NAME}` are variables; every other expansion is opaque. */
const expansionPiece = (node: Node, quoted: boolean): Piece => {
  const named = node.namedChildren.filter((child): child is Node => child !== null)
  const simple =
    named.length === 1 &&
    named[0].type === "variable_name" &&
    plainName.test(named[0].text) &&
    (node.type === "simple_expansion" || node.childCount === 3)
  return simple ? { _tag: "Var", name: named[0].text, quoted } : { _tag: "Opaque", text: node.text }
}

/** The pieces of one node of a word. */
const piecesOf = (node: Node): ReadonlyArray<Piece> => {
  switch (node.type) {
    case "word":
    case "number":
    case "extglob_pattern":
    case "brace_expression":
    case "test_operator":
      return barePieces(node.text)
    case "raw_string":
      return [{ _tag: "Text", text: node.text.slice(1, -1), quoted: true }]
    case "ansi_c_string":
      return [{ _tag: "Text", text: decodeAnsiC(node.text.slice(2, -1)), quoted: true }]
    case "string":
    case "translated_string":
      return childrenOf(node).flatMap((child): ReadonlyArray<Piece> => {
        if (child.type === "string_content")
          return [{ _tag: "Text", text: unescapeDoubleQuoted(child.text), quoted: true }]
        if (child.type === "simple_expansion" || child.type === "expansion") return [expansionPiece(child, true)]
        if (!child.isNamed) return []
        return [{ _tag: "Opaque", text: child.text }]
      })
    case "simple_expansion":
    case "expansion":
      return [expansionPiece(node, false)]
    case "concatenation":
    case "command_name":
      return childrenOf(node).flatMap(piecesOf)
    default:
      return containsExpansion(node) || node.isNamed ? [{ _tag: "Opaque", text: node.text }] : barePieces(node.text)
  }
}

/** One word made of adjacent nodes (`--format="%H"`, `$"…"`). */
const wordOf = (group: ReadonlyArray<Node>): Word => {
  const pieces = group.filter((node, i) => !(node.type === "$" && group[i + 1]?.type === "string"))
  const value = joinValues(pieces)
  return {
    value: value ?? group.map((node) => node.text).join(""),
    literal: value !== undefined,
    glob: pieces.some(hasGlob),
    template: pieces.flatMap(piecesOf)
  }
}

/** Groups nodes that touch (no whitespace between them) into words. */
export const wordsOf = (nodes: ReadonlyArray<Node>): ReadonlyArray<Word> => {
  const groups: Array<Array<Node>> = []
  for (const node of nodes) {
    const last = groups[groups.length - 1]
    if (last !== undefined && last[last.length - 1].endIndex === node.startIndex) last.push(node)
    else groups.push([node])
  }
  return groups.map(wordOf)
}

const wordNodeTypes = new Set([
  "word",
  "string",
  "raw_string",
  "ansi_c_string",
  "translated_string",
  "number",
  "concatenation",
  "simple_expansion",
  "expansion",
  "command_substitution",
  "arithmetic_expansion",
  "process_substitution",
  "variable_assignment",
  "variable_name",
  "test_operator",
  "extglob_pattern",
  "regex"
])

/** The words of a non-`command` statement (`[[ … ]]`, `export …`, `unset …`), in source order. */
export const flattenWords = (node: Node): ReadonlyArray<Node> =>
  childrenOf(node).flatMap((child) =>
    child.type === "comment"
      ? []
      : wordNodeTypes.has(child.type) || child.childCount === 0
        ? [child]
        : flattenWords(child)
  )
