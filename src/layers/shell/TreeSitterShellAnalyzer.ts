/**
 * The ShellAnalyzer over tree-sitter-bash: splits a command line into simple commands, strips
 * assignments and wrappers, finds the constructs that are never auto-allowed, and classifies read-only commands.
 */
import { createRequire } from "node:module"
import { Cache, Duration, Effect, Layer, Schema } from "effect"
import type * as WebTreeSitter from "web-tree-sitter"
import type { Node } from "web-tree-sitter"
import * as PermissionRule from "../../domain/PermissionRule.js"
import { builtinOpacity, inertNodeTypes } from "../../domain/shell/Enumerability.js"
import { hiddenAssignment } from "../../domain/shell/HiddenCode.js"
import { isLineFilter } from "../../domain/shell/ListedNames.js"
import * as ReadOnlyCommands from "../../domain/shell/ReadOnlyCommands.js"
import { type PathStep, type ShellAnalysis, ShellAnalyzer, type SimpleCommand } from "../../services/ShellAnalyzer.js"
import * as Vendored from "../platform/Vendored.js"
import { evaluationDanger, testCommandDanger } from "./CodeEvaluation.js"
import { anything, type CodeForms, commandForms } from "./CommandForms.js"
import { commandStep, redirectStep } from "./PathSteps.js"
import { childrenOf, flattenWords, type Word, wordsOf } from "./ShellWords.js"
import { analyzeWords } from "./ShellWrappers.js"
import { xargsCommand } from "./XargsCommand.js"

/** The tree-sitter runtime or the bash grammar could not be loaded. */
export class ShellGrammarLoadError extends Schema.TaggedError<ShellGrammarLoadError>()("ShellGrammarLoadError", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Cannot load the tree-sitter bash grammar from ${this.path}: ${this.reason}`
  }
}

/**
 * Where the bash grammar lives: the copy the package ships (`effect-armature/grammars/tree-sitter-bash.wasm`, written to
 * dist/ by the build), else the tree-sitter-bash package (a development dependency).
 */
export const grammarPath = (): string => {
  const require = createRequire(import.meta.url)
  try {
    return require.resolve("effect-armature/grammars/tree-sitter-bash.wasm")
  } catch {
    return require.resolve("tree-sitter-bash/tree-sitter-bash.wasm")
  }
}

/** The tree-sitter runtime, initialized on first use and then shared by every parser of the process. */
// web-tree-sitter's runtime: the copy in dist/vendor/ (its .wasm beside it), see Vendored.ts.
const { Language, Parser } = Vendored.load<typeof WebTreeSitter>("web-tree-sitter.cjs", "web-tree-sitter")

const runtime = Effect.runSync(Effect.cached(Effect.tryPromise(() => Parser.init())))

/**
 * The grammars loaded in this process, by path: each file is compiled once however many analyzers are built. A
 * failed load is not kept, so the next analyzer tries again.
 */
const languages = Effect.runSync(
  Cache.make({
    capacity: 16,
    lookup: (path: string) =>
      Effect.zipRight(
        runtime,
        Effect.tryPromise(() => Language.load(path))
      ),
    timeToLive: Duration.infinity
  })
)

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
  /** Why the line may start a program the analysis cannot name (see `Enumerability.ts`). */
  readonly opaque: Array<string>
  /** Variables assigned earlier in the line: using one again is not read-only. */
  readonly assigned: Set<string>
  /** Variables assigned by a bare `NAME=value` earlier in the line that may be exported: later commands get them. */
  readonly exported: Array<string>
  /** The forms of the commands in code given as a string (`bash -c '…'`). */
  readonly code: CodeForms
  /** The command line (for the text between nodes). */
  readonly source: string
  /** What the line does to paths, in order. */
  readonly pathSteps: Array<PathStep>
  /** The words (after wrappers) of each simple command met so far, by node id: what a pipeline feeds `xargs`. */
  readonly argvOf: Map<number, ReadonlyArray<Word>>
  readOnly: boolean
}

const toCommand = (
  node: Node,
  argv: ReadonlyArray<Word>,
  forms: SimpleCommand["forms"],
  assigned: ReadonlyArray<string> = []
): SimpleCommand => {
  const values = argv.map((word) => word.value)
  const command = { text: node.text, argv: values, normalized: values.join(" "), forms }
  return assigned.length > 0 ? { ...command, assigned } : command
}

const isReadOnly = (argv: ReadonlyArray<Word>): boolean => {
  // `xargs CMD`: read-only when CMD is, whatever words xargs adds.
  const xargs = xargsCommand(argv)
  return ReadOnlyCommands.isReadOnlyWords(xargs === undefined ? argv : xargs.words)
}

/**
 * The command feeding an `xargs` in a pipeline (`find … | grep x | xargs wc -l` gives `find …`), skipping the line
 * filters between them; undefined when the input comes from anything else.
 */
const producerOf = (node: Node, found: Found): ReadonlyArray<Word> | undefined => {
  const pipeline = node.parent
  if (pipeline?.type !== "pipeline") return undefined
  const stages = childrenOf(pipeline).filter((child) => child.isNamed)
  for (let at = stages.findIndex((stage) => stage.id === node.id) - 1; at >= 0; at--) {
    const argv = stages[at].type === "command" ? found.argvOf.get(stages[at].id) : undefined
    if (argv === undefined) return undefined
    if (!isLineFilter(argv)) return argv
  }
  return undefined
}

/**
 * The path steps of a simple command: for `xargs CMD`, CMD's words with the input in place and where it comes from;
 * `xargs -a FILE` also reads FILE, as `< FILE` would.
 */
const stepsOf = (node: Node, words: ReadonlyArray<Word>, argv: ReadonlyArray<Word>, found: Found): Array<PathStep> => {
  const step = commandStep(words, argv)
  const xargs = xargsCommand(argv)
  if (xargs === undefined || step._tag !== "Command") return [step]
  // `xargs -a FILE`: the words come from the file, whatever the pipeline before it lists
  const producer = xargs.argFile === undefined ? producerOf(node, found) : undefined
  const command: PathStep = {
    ...step,
    words: xargs.words.map((word) => word.template),
    ...(producer === undefined
      ? {}
      : { input: { producer: producer.map((word) => word.template), split: xargs.split } })
  }
  if (xargs.argFile === undefined) return [command]
  const file: PathStep = {
    _tag: "Redirect",
    operator: "<",
    target:
      xargs.argFile === ""
        ? [{ _tag: "Opaque", text: "xargs -a's file" }]
        : [{ _tag: "Text", text: xargs.argFile, quoted: true }]
  }
  return [file, command]
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
      // tree-sitter-bash reads the descriptor of `bash 0<<<CODE` as an argument `0`: a number written right against
      // the redirection after it is that redirection's descriptor, not a word of the command.
      const next = children[at + 1]
      const descriptor =
        child.type === "number" &&
        next !== undefined &&
        /redirect$/.test(next.type) &&
        next.startIndex === child.endIndex
      if (!descriptor) wordNodes.push(child)
    }
  })
  // tree-sitter-bash can fold the next line into a pipeline's last command (`a | b | c⏎d && e` gives `c d`):
  // an unescaped newline always ends a simple command, so split there and judge each part on its own.
  const groups: Array<Array<Node>> = [[]]
  wordNodes.forEach((word, at) => {
    const previous = wordNodes[at - 1]
    if (previous !== undefined && word.startPosition.row > previous.endPosition.row) {
      const between = found.source.slice(previous.endIndex, word.startIndex)
      if (!between.includes("\\\n")) groups.push([])
    }
    groups[groups.length - 1].push(word)
  })
  groups.forEach((group, at) => {
    const words = wordsOf(group)
    const { argv, assignments: wrapped, dangers, forms } = analyzeWords(words, found.code)
    const assigned = [...found.exported, ...(at === 0 ? assignments : []), ...wrapped]
    // Read-only only when every variable given to the command is on the allow rules' harmless list: an unknown one
    // (`FOO=1 ls`, `MYTOOL_HOOK=… cat`) may change what the command runs or reads, and unknown means ask.
    const unknownAssignment = !assigned.every(PermissionRule.isHarmlessAssignment)
    const readOnly = !unknownAssignment && isReadOnly(argv)
    found.commands.push({ ...toCommand(node, argv, forms, assigned), readOnly })
    if (groups.length === 1) found.argvOf.set(node.id, argv)
    const steps = groups.length === 1 ? stepsOf(node, words, argv, found) : [commandStep(words, argv)]
    // `SIMPLE_BACKUP_SUFFIX=… cp -b`: the backup's name is the destination's with a suffix the line chooses
    const backupSuffix = assigned.includes("SIMPLE_BACKUP_SUFFIX")
    found.pathSteps.push(
      ...(backupSuffix
        ? steps.map((step) => (step._tag === "Command" ? { ...step, backupSuffixAssigned: true } : step))
        : steps)
    )
    found.dangers.push(...dangers)
    const test = testCommandDanger(argv)
    if (test !== undefined) {
      found.dangers.push(test)
      found.opaque.push(test)
    }
    const opaque = builtinOpacity(argv)
    if (opaque !== undefined) found.opaque.push(opaque)
    if (!readOnly) found.readOnly = false
  })
}

const arithmeticAssignment = /^(?:[-+*/%&^|]|<<|>>|\*\*)?=$|^(?:\+\+|--)$/

/** Visits one node; false when its children are not to be visited (a comment). */
const visitNode = (node: Node, found: Found): boolean => {
  const evaluated = evaluationDanger(node)
  if (evaluated !== undefined) {
    found.dangers.push(evaluated)
    found.opaque.push(evaluated)
  }
  if (node.isNamed && !inertNodeTypes.has(node.type)) found.opaque.push(`the shell construct ${node.type}`)
  switch (node.type) {
    case "for_statement":
      // `select NAME in …` reads a choice from stdin and assigns from it.
      if (node.firstChild?.type === "select") found.opaque.push("`select`, which assigns what it reads")
      {
        // `for GIT_SSH_COMMAND in 'rm x'; do export GIT_SSH_COMMAND; …`: the loop assigns its variable
        const hidden = hiddenAssignment(node.childForFieldName("variable")?.text ?? "")
        if (hidden !== undefined) found.opaque.push(`a \`for\` loop making ${hidden.replace(/^the /, "")}`)
      }
      break
    case "comment":
      return false
    case "command":
      visitCommand(node, found)
      break
    case "test_command":
    case "declaration_command":
    case "unset_command": {
      const argv = wordsOf(flattenWords(node))
      const readOnly = isReadOnly(argv) && found.exported.every(PermissionRule.isHarmlessAssignment)
      found.commands.push({ ...toCommand(node, argv, commandForms(argv, found.code)), readOnly })
      const opaque = builtinOpacity(argv)
      if (opaque !== undefined) found.opaque.push(opaque)
      found.pathSteps.push(commandStep(argv, argv))
      if (!readOnly) found.readOnly = false
      break
    }
    case "variable_assignment": {
      const target = node.childForFieldName("name")
      const name = target?.type === "subscript" ? (target.childForFieldName("name")?.text ?? "") : (target?.text ?? "")
      if (ReadOnlyCommands.isRiskyAssignment(name)) found.readOnly = false
      const hidden = hiddenAssignment(name)
      if (hidden !== undefined) found.opaque.push(hidden)
      // `PATH=/tmp/x; ls`: a variable already exported (PATH, GIT_*, …) reaches every later command, so it counts as
      // assigned for them (allow rules then miss them); lower-case shell locals are left out.
      // `export NAME=value` gives the variable to every later command, whatever its case.
      const exports = node.parent?.type === "declaration_command" && node.parent.firstChild?.text === "export"
      const inline = node.parent?.type === "command" || (node.parent?.type === "declaration_command" && !exports)
      if (exports || (!inline && (ReadOnlyCommands.isRiskyAssignment(name) || !/[a-z]/.test(name)))) {
        found.exported.push(name)
      }
      found.assigned.add(name)
      break
    }
    case "simple_expansion":
    case "expansion": {
      // A value assigned in this very line and used again: what it holds decides what runs.
      const used = childrenOf(node).find((child) => child.type === "variable_name" || child.type === "subscript")
      const name = used?.type === "subscript" ? used.childForFieldName("name")?.text : used?.text
      if (name !== undefined && found.assigned.has(name)) found.readOnly = false
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
      const step = redirectStep(node)
      if (step !== undefined) found.pathSteps.push(step)
      break
    }
  }
  return true
}

/** Constructs nested in one another that a reader cannot follow anyway: deeper than `maxNesting` is refused. */
const nesting = new Set(["command_substitution", "process_substitution", "subshell"])
const maxNesting = 256

/** Thrown (and caught by `analyze`) when substitutions or subshells nest deeper than `maxNesting`. */
class TooDeep extends RangeError {}

/** Text in which nothing is expanded: no substitution can hide there. */
const literalText = new Set(["raw_string", "ansi_c_string", "comment"])

/** A backtick or `$(` not escaped by a backslash; in a `${…}` word, `<(` and `>(` too (bash runs them there). */
const unseenSubstitution = /(?<!\\)(?:\\\\)*(?:`|\$\()/
const unseenProcessSubstitution = /(?<!\\)(?:\\\\)*[<>]\(/

/** A here-document whose delimiter is quoted (`<<'EOF'`, `<<\EOF`, `<<"EOF"`): its body is not expanded. */
const quotedHeredoc = (body: Node): boolean => {
  const start = childrenOf(body.parent ?? body).find((child) => child.type === "heredoc_start")
  return start !== undefined && /['"\\]/.test(start.text)
}

/**
 * The text of a node that none of its children covers. tree-sitter-bash does not parse every substitution (a
 * backtick in `${x:-`…`}` is part of a plain word): one left in such text is code the analysis has not seen.
 */
const ownText = (node: Node, source: string): string => {
  let text = ""
  let at = node.startIndex
  for (const child of childrenOf(node)) {
    text += source.slice(at, child.startIndex)
    at = Math.max(at, child.endIndex)
  }
  return text + source.slice(at, node.endIndex)
}

/** Pushes a danger when a node holds a substitution tree-sitter did not parse as one. */
const checkUnseen = (node: Node, inExpansion: boolean, found: Found): void => {
  if (!node.isNamed || literalText.has(node.type)) return
  if (node.type === "heredoc_body" && quotedHeredoc(node)) return
  const text = ownText(node, found.source)
  if (unseenSubstitution.test(text) || (inExpansion && unseenProcessSubstitution.test(text))) {
    found.dangers.push("substitution the parser did not read as a command")
    found.opaque.push("substitution the parser did not read as a command")
  }
}

/**
 * Characters tree-sitter-bash reads as a blank between tokens (its `\s`, and `\` before some of them) where bash,
 * whose only blanks are space and tab, reads part of a word: `echo a\r# ; rm x` is a comment to the parser and runs
 * `rm x` in bash. CR (so `\r\n` line ends), VT, FF, NEL, no-break and the other Unicode spaces, and a backslash
 * before any of them or before CR-LF.
 */
const foreignBlank = /[\v\f\r\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]/

/** Nodes whose text between children is their content (quoted text, a here-document's body), not a blank. */
const contentBetween = new Set(["string", "translated_string", "heredoc_body"])

/** Pushes a danger when the text between a node's children, read by the parser as blank, is not blank to bash. */
const checkBlanks = (node: Node, found: Found): void => {
  if (node.childCount === 0 || contentBetween.has(node.type)) return
  if (foreignBlank.test(ownText(node, found.source))) {
    found.dangers.push("a character the parser reads as a blank and bash as part of a word")
    found.opaque.push("a character the parser reads as a blank and bash as part of a word")
  }
}

/**
 * Visits every node in source order, with an explicit stack: a line of 10,000 `&&` nests as deep as that, and is
 * analyzed like any other line.
 */
const visit = (root: Node, found: Found): void => {
  const stack: Array<readonly [Node, number, boolean]> = [[root, 0, false]]
  while (stack.length > 0) {
    const [node, outer, outerExpansion] = stack.pop()!
    const depth = nesting.has(node.type) ? outer + 1 : outer
    if (depth > maxNesting) throw new TooDeep("nested too deeply")
    const inExpansion = outerExpansion || node.type === "expansion"
    checkUnseen(node, inExpansion, found)
    checkBlanks(node, found)
    if (!visitNode(node, found)) continue
    const children = childrenOf(node)
    for (let i = children.length - 1; i >= 0; i--) stack.push([children[i], depth, inExpansion])
  }
}

/** A backslash-newline inside a word joins it (`r\⏎m` is `rm`), which tree-sitter reads as two words. */
const splitWord = /[^\s;|&()<>]\\\n[^\s;|&()<>]/

/** Analyzes a parsed tree. */
const analyzeTree = (root: Node, source: string, code: CodeForms, inner: ReadonlyArray<string>): ShellAnalysis => {
  const found: Found = {
    commands: [],
    dangers: [],
    opaque: [],
    assigned: new Set(),
    exported: [],
    code,
    source,
    pathSteps: [],
    argvOf: new Map(),
    readOnly: true
  }
  const parsed = !root.hasError
  if (!parsed) found.dangers.push("unparsable command")
  if (splitWord.test(source)) found.dangers.push("line continuation inside a word")
  visit(root, found)
  const dangers = [...new Set(found.dangers)]
  const opaque = [...new Set([...found.opaque, ...inner])]
  return {
    parsed,
    commands: found.commands,
    dangers,
    ...(opaque.length > 0 ? { opaque } : {}),
    readOnly: found.readOnly && dangers.length === 0,
    pathSteps: found.pathSteps
  }
}

const unparsable: ShellAnalysis = { parsed: false, commands: [], dangers: ["unparsable command"], readOnly: false }

/** How deep code in strings is followed (`bash -c "bash -c '…'"`) before it counts as unknown. */
const maxCodeDepth = 4

const tooComplex: ShellAnalysis = {
  parsed: false,
  commands: [],
  dangers: ["command too deeply nested to analyze"],
  readOnly: false
}

/**
 * bash removes a backslash-newline before it reads words (`r\<newline>m x` is `rm x`), but tree-sitter-bash reads the
 * pair as a blank between two words. Where the line holds one, it is read both ways and the two readings are joined:
 * every command of either is matched against the rules, and the line is read-only, parsed or enumerable only when both
 * readings are. (Removing every pair is not always bash's reading either: inside single quotes, a comment or a quoted
 * here-document the pair stays; the reading as written covers those.)
 */
const withContinuations = (command: string, analyze: (text: string) => ShellAnalysis): ShellAnalysis => {
  const written = analyze(command)
  if (!/\\\r?\n/.test(command)) return written
  const joined = analyze(command.replace(/\\\r?\n/g, ""))
  const opaque = [...(written.opaque ?? []), ...(joined.opaque ?? [])]
  const keyOf = (command: SimpleCommand) => JSON.stringify([command.normalized, command.forms])
  const seen = new Set(written.commands.map(keyOf))
  return {
    parsed: written.parsed && joined.parsed,
    commands: [...written.commands, ...joined.commands.filter((command) => !seen.has(keyOf(command)))],
    dangers: [...new Set([...written.dangers, ...joined.dangers])],
    ...(opaque.length > 0 ? { opaque: [...new Set(opaque)] } : {}),
    readOnly: written.readOnly && joined.readOnly,
    pathSteps:
      written.pathSteps === undefined || joined.pathSteps === undefined
        ? undefined
        : [...written.pathSteps, ...joined.pathSteps]
  }
}

/** Builds the analyzer from a grammar file: loads it (once per process) and owns one parser while in scope. */
export const makeWithGrammar = (path: string) =>
  Effect.gen(function* () {
    const language = yield* languages.get(path).pipe(
      Effect.tapError(() => languages.invalidate(path)),
      Effect.mapError(
        ({ error }) =>
          new ShellGrammarLoadError({ path, reason: error instanceof Error ? error.message : String(error) })
      )
    )
    const parser = yield* Effect.acquireRelease(
      Effect.try({
        try: () => new Parser().setLanguage(language),
        catch: (cause) => new ShellGrammarLoadError({ path, reason: String(cause) })
      }),
      (parser) => Effect.sync(() => parser.delete())
    )
    // Code in a string (`bash -c '…'`, `eval …`) is parsed too, to a bounded depth, for the forms rules see.
    // What code in strings hides from enumeration is the line's too (`bash -c 'trap -- "rm x" EXIT'`).
    const codeForms =
      (depth: number, opaque: Array<string>): CodeForms =>
      (code) => {
        if (depth >= maxCodeDepth) return [anything]
        const analysis = withContinuations(code, (text) => analyzeAt(text, depth + 1))
        opaque.push(...(analysis.opaque ?? []))
        return [...analysis.commands.flatMap((command) => command.forms), ...(analysis.parsed ? [] : [anything])]
      }
    const analyzeAt = (command: string, depth: number): ShellAnalysis => {
      const tree = parser.parse(command)
      if (tree === null) return unparsable
      try {
        const inner: Array<string> = []
        return analyzeTree(tree.rootNode, command, codeForms(depth, inner), inner)
      } catch (error) {
        // Fail closed: a pathological input (thousands of nested constructs) exhausts the stack; never auto-allow.
        return error instanceof RangeError
          ? tooComplex
          : { ...tooComplex, dangers: [`analysis failed: ${String(error)}`] }
      } finally {
        tree.delete()
      }
    }
    return ShellAnalyzer.of({ analyze: (command) => withContinuations(command, (text) => analyzeAt(text, 0)) })
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
