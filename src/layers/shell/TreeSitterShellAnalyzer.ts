/**
 * The ShellAnalyzer over tree-sitter-bash (SPEC §5.2): splits a command line into simple commands, strips
 * assignments and wrappers, finds the constructs that are never auto-allowed, and classifies read-only commands.
 */
import { createRequire } from "node:module"
import { Effect, Layer, Schema } from "effect"
import { Language, type Node, Parser } from "web-tree-sitter"
import * as ReadOnlyCommands from "../../domain/ReadOnlyCommands.js"
import { type ShellAnalysis, ShellAnalyzer, type SimpleCommand } from "../../services/ShellAnalyzer.js"

/** The tree-sitter runtime or the bash grammar could not be loaded. */
export class ShellGrammarLoadError extends Schema.TaggedError<ShellGrammarLoadError>()("ShellGrammarLoadError", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Cannot load the tree-sitter bash grammar from ${this.path}: ${this.reason}`
  }
}

/** Where the bash grammar lives (node_modules/tree-sitter-bash/tree-sitter-bash.wasm). */
export const grammarPath = (): string =>
  createRequire(import.meta.url).resolve("tree-sitter-bash/tree-sitter-bash.wasm")

let runtime: Promise<void> | undefined
const languages = new Map<string, Promise<Language>>()

/** Loads the runtime and a grammar once per process; a failed load is retried on the next call. */
const loadLanguage = (path: string): Promise<Language> => {
  const cached = languages.get(path)
  if (cached !== undefined) return cached
  runtime ??= Parser.init()
  const loading = runtime.then(() => Language.load(path))
  languages.set(path, loading)
  loading.catch(() => languages.delete(path))
  return loading
}

// ---------------------------------------------------------------------------------------------------------------
// Words

/** One shell word: its unquoted value (or the text as written when it holds an expansion). */
interface Word {
  readonly value: string
  /** False when the word holds an expansion ($VAR, $(…), …): its value is only known when the shell runs. */
  readonly literal: boolean
  /** True when an unquoted glob or brace pattern may turn the word into other words. */
  readonly glob: boolean
}

const expansionTypes = new Set([
  "simple_expansion",
  "expansion",
  "command_substitution",
  "arithmetic_expansion",
  "process_substitution"
])

const childrenOf = (node: Node): ReadonlyArray<Node> => node.children.filter((child): child is Node => child !== null)

const containsExpansion = (node: Node): boolean =>
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
const nodeValue = (node: Node): string | undefined => {
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

/** One word made of adjacent nodes (`--format="%H"`, `$"…"`). */
const wordOf = (group: ReadonlyArray<Node>): Word => {
  const pieces = group.filter((node, i) => !(node.type === "$" && group[i + 1]?.type === "string"))
  const value = joinValues(pieces)
  return {
    value: value ?? group.map((node) => node.text).join(""),
    literal: value !== undefined,
    glob: pieces.some(hasGlob)
  }
}

/** Groups nodes that touch (no whitespace between them) into words. */
const wordsOf = (nodes: ReadonlyArray<Node>): ReadonlyArray<Word> => {
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
const flattenWords = (node: Node): ReadonlyArray<Node> =>
  childrenOf(node).flatMap((child) =>
    child.type === "comment"
      ? []
      : wordNodeTypes.has(child.type) || child.childCount === 0
        ? [child]
        : flattenWords(child)
  )

// ---------------------------------------------------------------------------------------------------------------
// Wrappers

const assignmentWord = /^([A-Za-z_][A-Za-z0-9_]*)=/

interface Stripped {
  readonly argv: ReadonlyArray<Word>
  readonly assignments: ReadonlyArray<string>
  readonly dangers: ReadonlyArray<string>
}

/** Index of the first word after the options of a wrapper; `withArgument` options consume the next word. */
const skipOptions = (words: ReadonlyArray<Word>, start: number, withArgument: ReadonlyArray<string>): number => {
  let i = start
  while (i < words.length) {
    const arg = words[i].value
    if (arg === "--") return i + 1
    if (!arg.startsWith("-") || arg === "-") return i
    i += withArgument.includes(arg) ? 2 : 1
  }
  return i
}

/**
 * Where the wrapped command starts, for a wrapper at index 0; undefined when nothing follows the wrapper (then it
 * is the command itself, e.g. `env` printing the environment).
 */
const unwrap = (words: ReadonlyArray<Word>, assignments: Array<string>, dangers: Array<string>): number | undefined => {
  const name = words[0].value
  let i: number
  switch (name) {
    case "timeout":
      i = skipOptions(words, 1, ["-s", "-k", "--signal", "--kill-after"]) + 1
      break
    case "time":
      i = skipOptions(words, 1, [])
      break
    case "nice":
      i = skipOptions(words, 1, ["-n", "--adjustment"])
      break
    case "nohup":
      i = skipOptions(words, 1, [])
      break
    case "stdbuf":
      i = skipOptions(words, 1, ["-i", "-o", "-e", "--input", "--output", "--error"])
      break
    case "env": {
      i = 1
      while (i < words.length) {
        const arg = words[i].value
        if (arg === "--") {
          i++
          break
        }
        if (arg === "-S" || arg.startsWith("--split-string") || /^-[A-Za-z0-9]*S/.test(arg)) {
          dangers.push("env -S")
          return undefined
        }
        if (arg === "-u" || arg === "-C" || arg === "--unset" || arg === "--chdir") i += 2
        else if (arg.startsWith("-")) i += 1
        else break
      }
      while (i < words.length) {
        const match = assignmentWord.exec(words[i].value)
        if (match === null) break
        assignments.push(match[1])
        i++
      }
      break
    }
    default:
      return undefined
  }
  return i < words.length ? i : undefined
}

const wrappers = new Set(["timeout", "time", "nice", "nohup", "stdbuf", "env"])

/** Strips the wrappers of SPEC §5.2, repeatedly. */
const stripWrappers = (words: ReadonlyArray<Word>): Stripped => {
  const assignments: Array<string> = []
  const dangers: Array<string> = []
  let argv = words
  while (argv.length > 0 && argv[0].literal && wrappers.has(argv[0].value)) {
    const start = unwrap(argv, assignments, dangers)
    if (start === undefined) break
    argv = argv.slice(start)
  }
  return { argv, assignments, dangers }
}

// ---------------------------------------------------------------------------------------------------------------
// Dangers of one command's words

const shells = new Set(["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh"])

const basename = (path: string): string => path.slice(path.lastIndexOf("/") + 1)

const shellOptionsWithArgument = new Set(["-o", "+o", "-O", "+O", "--rcfile", "--init-file"])

/** A shell given code in a string (`-c`) or reading it from stdin (no script operand). */
const shellDanger = (name: string, args: ReadonlyArray<Word>): string | undefined => {
  const values = args.map((word) => word.value)
  if (values.includes("--version") || values.includes("--help")) return undefined
  for (let i = 0; i < values.length; i++) {
    const arg = values[i]
    if (/^-[A-Za-z]*c[A-Za-z]*$/.test(arg)) return `${name} -c`
    if (arg === "--") return i + 1 < values.length ? undefined : `${name} reading commands from stdin`
    if (shellOptionsWithArgument.has(arg)) i++
    else if (!arg.startsWith("-") && !arg.startsWith("+")) return undefined
  }
  return `${name} reading commands from stdin`
}

const xargsWithArgument = ["-I", "-L", "-n", "-P", "-s", "-d", "-E", "-a", "--arg-file", "--delimiter", "--max-lines"]

/** The dangers of a simple command's words (after wrappers), looking into xargs and find -exec commands too. */
const commandDangers = (argv: ReadonlyArray<Word>): ReadonlyArray<string> => {
  if (argv.length === 0) return []
  const head = argv[0]
  if (head.literal && (head.value === "command" || head.value === "builtin")) {
    const start = skipOptions(argv, 1, [])
    return start < argv.length ? analyzeWords(argv.slice(start)).dangers : []
  }
  if (!head.literal) return ["command name from an expansion"]
  if (head.glob && head.value !== "[" && head.value !== "[[") return ["command name with a glob pattern"]
  const args = argv.slice(1)
  const name = basename(head.value)
  switch (head.value) {
    case "eval":
      return ["eval"]
    case "source":
      return ["source"]
    case ".":
      return [". (source)"]
    case "exec":
      return ["exec"]
    case "trap":
      return args.length > 1 ? ["trap"] : []
  }
  if (name === "busybox") return analyzeWords(args).dangers
  if (shells.has(name)) {
    const danger = shellDanger(name, args)
    return danger === undefined ? [] : [danger]
  }
  if (name === "xargs") {
    const start = skipOptions(args, 0, xargsWithArgument)
    return start < args.length ? analyzeWords(args.slice(start)).dangers : []
  }
  if (name === "find") {
    const out: Array<string> = []
    args.forEach((arg, at) => {
      if (["-exec", "-execdir", "-ok", "-okdir"].includes(arg.value)) {
        const rest = args.slice(at + 1)
        const end = rest.findIndex((word) => word.value === ";" || word.value === "+")
        const inner = end === -1 ? rest : rest.slice(0, end)
        if (inner.length > 0) out.push(...analyzeWords(inner).dangers)
      }
    })
    return out
  }
  return []
}

/** Strips wrappers and finds dangers of a list of words forming one command. */
const analyzeWords = (words: ReadonlyArray<Word>): Stripped => {
  const stripped = stripWrappers(words)
  return { ...stripped, dangers: [...stripped.dangers, ...commandDangers(stripped.argv)] }
}

// ---------------------------------------------------------------------------------------------------------------
// The tree walk

const fdDuplication = /^(\d+-?|-)$/

/** The danger of a file redirection, if it writes anywhere but /dev/null or another descriptor. */
const redirectDanger = (node: Node): string | undefined => {
  const operator = childrenOf(node).find((child) => !child.isNamed)?.type ?? ""
  if (operator === "<" || operator === "<&" || operator === "<&-" || operator === ">&-") return undefined
  const destinations = node.childrenForFieldName("destination").filter((child): child is Node => child !== null)
  const target = wordsOf(destinations)[0]
  if (target === undefined) return undefined
  if (target.literal && target.value === "/dev/null") return undefined
  if ((operator === ">&" || operator === "<&") && target.literal && fdDuplication.test(target.value)) return undefined
  return `output redirection to ${target.value}`
}

interface Found {
  readonly commands: Array<SimpleCommand>
  readonly dangers: Array<string>
  readOnly: boolean
}

const toCommand = (node: Node, argv: ReadonlyArray<Word>): SimpleCommand => {
  const values = argv.map((word) => word.value)
  return { text: node.text, argv: values, normalized: values.join(" ") }
}

const isReadOnly = (argv: ReadonlyArray<Word>): boolean => {
  const values = argv.map((word) => word.value)
  const opaque = argv.some((word) => !word.literal || word.glob)
  return ReadOnlyCommands.isReadOnlyCommand(values) && (!opaque || ReadOnlyCommands.readsWhateverArguments(values[0]))
}

const visitCommand = (node: Node, found: Found): void => {
  const assignments: Array<string> = []
  const wordNodes: Array<Node> = []
  const children = childrenOf(node)
  children.forEach((child, at) => {
    const field = node.fieldNameForChild(at)
    if (child.type === "variable_assignment" && wordNodes.length === 0) {
      assignments.push(child.childForFieldName("name")?.text ?? child.text)
    } else if (field === "name" || field === "argument") {
      wordNodes.push(child)
    }
  })
  // tree-sitter-bash can fold the next line into a pipeline's last command (`a | b | c⏎d && e` gives `c d`):
  // an unescaped newline always ends a simple command, so split there and judge each part on its own.
  const groups: Array<Array<Node>> = [[]]
  wordNodes.forEach((word, at) => {
    const previous = wordNodes[at - 1]
    if (previous !== undefined && word.startPosition.row > previous.endPosition.row) {
      const between = node.tree.rootNode.text.slice(previous.endIndex, word.startIndex)
      if (!between.includes("\\\n")) groups.push([])
    }
    groups[groups.length - 1].push(word)
  })
  groups.forEach((group, at) => {
    const { argv, assignments: wrapped, dangers } = analyzeWords(wordsOf(group))
    found.commands.push(toCommand(node, argv))
    found.dangers.push(...dangers)
    const risky = [...(at === 0 ? assignments : []), ...wrapped].some(ReadOnlyCommands.isRiskyAssignment)
    if (risky || !isReadOnly(argv)) found.readOnly = false
  })
}

const arithmeticAssignment = /^(?:[-+*/%&^|]|<<|>>|\*\*)?=$|^(?:\+\+|--)$/

const visit = (node: Node, found: Found): void => {
  switch (node.type) {
    case "comment":
      return
    case "command":
      visitCommand(node, found)
      break
    case "test_command":
    case "declaration_command":
    case "unset_command": {
      const argv = wordsOf(flattenWords(node))
      found.commands.push(toCommand(node, argv))
      if (!isReadOnly(argv)) found.readOnly = false
      break
    }
    case "variable_assignment": {
      const name = node.childForFieldName("name")?.text ?? node.text
      if (ReadOnlyCommands.isRiskyAssignment(name)) found.readOnly = false
      break
    }
    case "binary_expression":
    case "unary_expression":
    case "postfix_expression": {
      // Arithmetic can assign too: `((PATH=1))`, `$((IFS++))`.
      const assigns = childrenOf(node).some((child) => !child.isNamed && arithmeticAssignment.test(child.type))
      const target = childrenOf(node).find((child) => child.type === "variable_name")
      if (assigns && target !== undefined && ReadOnlyCommands.isRiskyAssignment(target.text)) found.readOnly = false
      break
    }
    case "command_substitution":
      found.dangers.push(node.firstChild?.type === "`" ? "command substitution `…`" : "command substitution $(…)")
      break
    case "process_substitution":
      found.dangers.push(`process substitution ${node.firstChild?.type ?? "<("}…)`)
      break
    case "file_redirect": {
      const danger = redirectDanger(node)
      if (danger !== undefined) found.dangers.push(danger)
      break
    }
  }
  for (const child of childrenOf(node)) visit(child, found)
}

/** A backslash-newline inside a word joins it (`r\⏎m` is `rm`), which tree-sitter reads as two words. */
const splitWord = /[^\s;|&()<>]\\\n[^\s;|&()<>]/

/** Analyzes a parsed tree. */
const analyzeTree = (root: Node, source: string): ShellAnalysis => {
  const found: Found = { commands: [], dangers: [], readOnly: true }
  const parsed = !root.hasError
  if (!parsed) found.dangers.push("unparsable command")
  if (splitWord.test(source)) found.dangers.push("line continuation inside a word")
  visit(root, found)
  const dangers = [...new Set(found.dangers)]
  return { parsed, commands: found.commands, dangers, readOnly: found.readOnly && dangers.length === 0 }
}

const unparsable: ShellAnalysis = { parsed: false, commands: [], dangers: ["unparsable command"], readOnly: false }

const tooComplex: ShellAnalysis = {
  parsed: false,
  commands: [],
  dangers: ["command too deeply nested to analyze"],
  readOnly: false
}

/** Builds the analyzer from a grammar file: loads it (once per process) and owns one parser while in scope. */
export const makeWithGrammar = (path: string) =>
  Effect.gen(function* () {
    const language = yield* Effect.tryPromise({
      try: () => loadLanguage(path),
      catch: (cause) =>
        new ShellGrammarLoadError({ path, reason: cause instanceof Error ? cause.message : String(cause) })
    })
    const parser = yield* Effect.acquireRelease(
      Effect.try({
        try: () => new Parser().setLanguage(language),
        catch: (cause) => new ShellGrammarLoadError({ path, reason: String(cause) })
      }),
      (parser) => Effect.sync(() => parser.delete())
    )
    const analyze = (command: string): ShellAnalysis => {
      const tree = parser.parse(command)
      if (tree === null) return unparsable
      try {
        return analyzeTree(tree.rootNode, command)
      } catch (error) {
        // Fail closed: a pathological input (thousands of nested constructs) exhausts the stack; never auto-allow.
        return error instanceof RangeError
          ? tooComplex
          : { ...tooComplex, dangers: [`analysis failed: ${String(error)}`] }
      } finally {
        tree.delete()
      }
    }
    return ShellAnalyzer.of({ analyze })
  })

/** Builds the analyzer from the tree-sitter-bash package's grammar. */
export const make = Effect.try({
  try: grammarPath,
  catch: (cause) => new ShellGrammarLoadError({ path: "tree-sitter-bash/tree-sitter-bash.wasm", reason: String(cause) })
}).pipe(Effect.flatMap(makeWithGrammar))

/** The ShellAnalyzer backed by web-tree-sitter and the tree-sitter-bash grammar. */
export const layer: Layer.Layer<ShellAnalyzer, ShellGrammarLoadError> = Layer.scoped(ShellAnalyzer, make)

/** The ShellAnalyzer over another build of the bash grammar (a `.wasm` file). */
export const layerWithGrammar = (path: string): Layer.Layer<ShellAnalyzer, ShellGrammarLoadError> =>
  Layer.scoped(ShellAnalyzer, makeWithGrammar(path))
