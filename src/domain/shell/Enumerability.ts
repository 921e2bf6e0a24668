/**
 * Enumerability: a command line is enumerable when the analysis can name every program it may start. Only then may a
 * tool-wide allow (`allow: ["Bash"]`, bypass mode) let it through past Bash deny and ask rules, because only then have
 * the rules seen every command. The shell constructs and builtins the analysis treats as inert are listed here
 * explicitly (an allow-list): anything else — a construct of the grammar not listed, a builtin that evaluates text
 * later (`trap`, `mapfile -C`, `compgen -C`, `fc`), rebinds what a name runs (`declare -n`, `enable`, `BASH_CMDS`), or
 * gives bash a name or a number it evaluates as arithmetic (`read 'a[$(cmd)]'`, `printf -v`, `unset`, `let`) — makes
 * the line not enumerable, and the rules then ask.
 */

import { hiddenAssignment } from "./HiddenCode.js"

/**
 * The tree-sitter-bash node types whose meaning the analysis follows: the commands they hold are visited and
 * enumerated, and what they evaluate besides is checked node by node (arithmetic, subscripts, `${…}` operators and
 * `[[ … ]]` by `CodeEvaluation`). Any other node type (an `ERROR` node, a type a newer grammar adds) is not inert.
 */
export const inertNodeTypes: ReadonlySet<string> = new Set([
  "program",
  "comment",
  "command",
  "command_name",
  "word",
  "number",
  "string",
  "string_content",
  "raw_string",
  "ansi_c_string",
  "translated_string",
  "concatenation",
  "brace_expression",
  "extglob_pattern",
  "regex",
  "array",
  "variable_name",
  "special_variable_name",
  "variable_assignment",
  "variable_assignments",
  "simple_expansion",
  "expansion",
  "subscript",
  "arithmetic_expansion",
  "binary_expression",
  "unary_expression",
  "postfix_expression",
  "parenthesized_expression",
  "ternary_expression",
  "command_substitution",
  "process_substitution",
  "list",
  "pipeline",
  "negated_command",
  "redirected_statement",
  "file_redirect",
  "file_descriptor",
  "heredoc_redirect",
  "heredoc_start",
  "heredoc_body",
  "heredoc_content",
  "heredoc_end",
  "herestring_redirect",
  "subshell",
  "compound_statement",
  "if_statement",
  "elif_clause",
  "else_clause",
  "while_statement",
  "for_statement",
  "c_style_for_statement",
  "do_group",
  "case_statement",
  "case_item",
  "function_definition",
  "test_command",
  "test_operator",
  "declaration_command",
  "unset_command"
])

/** A word as the analyzer sees it: its unquoted value, and whether it holds an expansion. */
export interface EnumWord {
  readonly value: string
  readonly literal: boolean
}

/** Text bash would run if it evaluated the word as arithmetic or as a subscripted name. */
const codeInText = /\$\(|`|\$\{|\$\[/

/**
 * A variable name as a builtin receives it (`read NAME`, `printf -v NAME`, `unset NAME`, `declare NAME=…`): inert when
 * it is a plain name, or an element with a constant subscript (`a[0]`, `a[@]`). Any other subscript is evaluated as
 * arithmetic, where `$(cmd)` runs cmd and a variable's value is evaluated in its turn.
 */
const plainName = /^[A-Za-z_][A-Za-z0-9_]*(?:\[(?:\d+|@|\*)\])?$/

const nameProblem = (builtin: string, word: EnumWord, withValue: boolean): string | undefined => {
  const text = word.value
  const name = withValue && text.includes("=") ? text.slice(0, text.indexOf("=")).replace(/\+$/, "") : text
  if (!word.literal && (!withValue || !text.includes("=") || /[$`]/.test(name))) {
    return `\`${builtin}\` given a variable name known only when the shell runs`
  }
  if (!plainName.test(name)) return `\`${builtin}\` given the name \`${name}\`, whose subscript bash evaluates`
  // `read GIT_SSH_COMMAND`, `printf -v PAGER …`: a variable naming a program, assigned where no word shows its value
  if (hiddenAssignment(name) !== undefined) {
    return `\`${builtin}\` assigning ${name}, which names a program or code that runs`
  }
  return undefined
}

/** Short options of a builtin that take a value (the next word, or the rest of the cluster). */
const valueLetters: Readonly<Record<string, string>> = {
  read: "adinNpstu",
  mapfile: "dnOsuCc",
  readarray: "dnOsuCc",
  printf: "v",
  wait: "p"
}

/** The operands of a builtin after its options (`--` ends them), and the values given to each option letter. */
const splitOptions = (builtin: string, args: ReadonlyArray<EnumWord>) => {
  const letters = valueLetters[builtin] ?? ""
  const values: Array<readonly [string, EnumWord]> = []
  let at = 0
  for (; at < args.length; at++) {
    const word = args[at]
    if (word.value === "--") {
      at++
      break
    }
    if (!word.literal || !/^[-+][A-Za-z]/.test(word.value)) break
    const cluster = word.value.slice(1)
    for (let i = 0; i < cluster.length; i++) {
      if (!letters.includes(cluster[i])) continue
      const rest = cluster.slice(i + 1)
      const value = rest !== "" ? { value: rest, literal: true } : args[++at]
      if (value !== undefined) values.push([cluster[i], value])
      break
    }
  }
  return { operands: args.slice(at), values }
}

const declarations = new Set(["declare", "typeset", "local", "export", "readonly"])

/**
 * Why a builtin's words make the line not enumerable, or undefined when the builtin is inert as used. `argv` is the
 * command after assignments and wrappers. Builtins whose code the rules do see (`eval`, `bash -c`, `trap ACTION`,
 * `mapfile -C`, `alias`) get their forms from `CommandForms`; the ones here evaluate what no form can show.
 */
export const builtinOpacity = (argv: ReadonlyArray<EnumWord>): string | undefined => {
  const head = argv[0]
  if (head === undefined || !head.literal) return undefined
  const name = head.value
  const args = argv.slice(1)
  switch (name) {
    case "set":
      // `set -k` (`-o keyword`): every later `NAME=value` word of a command is an assignment for it, not an argument
      return args.some(
        (word, at) =>
          !word.literal ||
          /^-[A-Za-z]*k/.test(word.value) ||
          (/^-[A-Za-z]*o$/.test(word.value) && (args[at + 1]?.literal !== true || args[at + 1]?.value === "keyword"))
      )
        ? "`set -k`, which turns later `NAME=value` arguments into variables of the command"
        : undefined
    case "fc":
      return "`fc`, which runs commands from the shell's history"
    case "enable": {
      const names = args.filter((word) => !word.literal || !word.value.startsWith("-"))
      return names.length > 0 ? "`enable`, which changes which builtins a name runs" : undefined
    }
    case "bind":
      return args.some((word) => !word.literal || /^-[A-Za-z]*x/.test(word.value))
        ? "`bind -x`, which binds a key to shell code"
        : undefined
    case "compgen":
    case "complete":
      return args.some((word) => !word.literal || /^-[A-Za-z]*F/.test(word.value))
        ? `\`${name} -F\`, which runs a shell function by name`
        : undefined
    case "let":
      for (const word of args) {
        if (!word.literal) return "`let` on a word known only when the shell runs (evaluated as arithmetic)"
        if (codeInText.test(word.value) || /\[[^\]]*[^\]\d@*]/.test(word.value)) {
          return `\`let ${word.value}\`, whose subscript or text bash evaluates`
        }
      }
      return undefined
    case "read":
    case "mapfile":
    case "readarray":
    case "printf":
    case "wait": {
      const { operands, values } = splitOptions(name, args)
      const named = values.filter(([letter]) => (name === "read" ? letter === "a" : letter === "v" || letter === "p"))
      const names = name === "read" ? operands : name === "printf" || name === "wait" ? [] : operands.slice(-1)
      for (const word of [...named.map(([, value]) => value), ...names]) {
        const problem = nameProblem(name, word, false)
        if (problem !== undefined) return problem
      }
      return undefined
    }
    case "getopts":
      return args[1] === undefined ? undefined : nameProblem(name, args[1], false)
    case "unset":
      for (const word of args) {
        if (word.literal && word.value.startsWith("-")) continue
        const problem = nameProblem(name, word, false)
        if (problem !== undefined) return problem
      }
      return undefined
  }
  if (declarations.has(name)) {
    for (const word of args) {
      if (word.literal && /^[-+][A-Za-z]*n/.test(word.value)) return `\`${name} -n\`, a name that refers to another`
      if (word.literal && /^[-+]/.test(word.value)) continue
      const problem = nameProblem(name, word, true)
      if (problem !== undefined) return problem
      // `declare -i n='a[$(cmd)]'`: an integer variable evaluates the value it is given.
      if (word.literal && codeInText.test(word.value.slice(word.value.indexOf("=") + 1))) {
        return `\`${name} ${word.value}\`, a value bash may evaluate as arithmetic`
      }
    }
  }
  return undefined
}
