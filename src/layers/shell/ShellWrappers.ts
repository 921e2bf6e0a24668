/**
 * The words of one simple command after the wrappers that run another command (`timeout`, `nice`, `env`, …) are
 * stripped, and the dangers hidden in them: `eval`, `source`, `exec`, shells given code, commands run by `xargs`,
 * `find -exec` and `busybox`.
 */
import type { CommandForm } from "../../domain/PermissionRule.js"
import { basename, type CodeForms, commandForms } from "./CommandForms.js"
import type { Word } from "./ShellWords.js"
import { parseWrapper } from "./WrapperParse.js"
import { findActions, shellOptionsWithArgument, shells, wrappers } from "./WrapperTables.js"

/** One command's words with the transparent wrappers stripped, the dangers found, and its forms for rules. */
export interface Stripped {
  readonly argv: ReadonlyArray<Word>
  readonly assignments: ReadonlyArray<string>
  readonly dangers: ReadonlyArray<string>
  /** Every spelling deny and ask rules are matched against (`CommandForms.ts`). */
  readonly forms: ReadonlyArray<CommandForm>
}

/**
 * Strips the transparent wrappers (`timeout`, `time`, `nice`, `nohup`, `stdbuf`, `env`), repeatedly, reading each
 * one's options with its full table. A wrapper whose options are not all known stays: it is then the command.
 */
const stripWrappers = (words: ReadonlyArray<Word>): Omit<Stripped, "forms"> => {
  const assignments: Array<string> = []
  const dangers: Array<string> = []
  let argv = words
  while (argv.length > 0 && argv[0].literal) {
    const wrapper = Object.hasOwn(wrappers, argv[0].value) ? wrappers[argv[0].value] : undefined
    if (wrapper?.transparent !== true) break
    const parsed = parseWrapper(wrapper, argv.slice(1))
    if (parsed._tag === "Split" || parsed._tag === "Opaque") dangers.push(`${argv[0].value} -S`)
    if (parsed._tag !== "Command" || parsed.start + 1 >= argv.length) break
    // A wrapper that writes a file of its own (`time -o out ls`) is a command in its own right.
    if (parsed.options.some((o) => o._tag === "Option" && wrapper.writes?.includes(o.name) === true)) break
    assignments.push(...parsed.assignments)
    argv = argv.slice(parsed.start + 1)
  }
  return { argv, assignments, dangers }
}

// ---------------------------------------------------------------------------------------------------------------
// Dangers of one command's words

export { basename }

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

/** The words of the command a non-transparent wrapper runs (`command`, `xargs`), by its option table. */
const wrappedCommand = (name: string, args: ReadonlyArray<Word>): ReadonlyArray<Word> => {
  const parsed = parseWrapper(wrappers[name], args)
  return parsed._tag === "Command" ? args.slice(parsed.start) : parsed._tag === "Unknown" ? args.slice(parsed.from) : []
}

/** The dangers of a simple command's words (after wrappers), looking into xargs and find -exec commands too. */
const commandDangers = (argv: ReadonlyArray<Word>): ReadonlyArray<string> => {
  if (argv.length === 0) return []
  const head = argv[0]
  if (head.literal && (head.value === "command" || head.value === "builtin")) {
    return dangersOf(wrappedCommand(head.value, argv.slice(1)))
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
  if (name === "busybox") return dangersOf(args)
  if (shells.has(name)) {
    const danger = shellDanger(name, args)
    return danger === undefined ? [] : [danger]
  }
  if (name === "xargs") return dangersOf(wrappedCommand(name, args))
  if (name === "find") {
    const out: Array<string> = []
    args.forEach((arg, at) => {
      if (findActions.has(arg.value)) {
        const rest = args.slice(at + 1)
        const end = rest.findIndex((word) => word.value === ";" || word.value === "+")
        const inner = end === -1 ? rest : rest.slice(0, end)
        if (inner.length > 0) out.push(...dangersOf(inner))
      }
    })
    return out
  }
  return []
}

const dangersOf = (words: ReadonlyArray<Word>): ReadonlyArray<string> => {
  const stripped = stripWrappers(words)
  return [...stripped.dangers, ...commandDangers(stripped.argv)]
}

/**
 * Strips wrappers, finds the dangers of a list of words forming one command, and lists the forms rules see;
 * `code` gives the forms of code in a string (`bash -c '…'`).
 */
export const analyzeWords = (words: ReadonlyArray<Word>, code: CodeForms): Stripped => {
  const stripped = stripWrappers(words)
  return {
    ...stripped,
    dangers: [...stripped.dangers, ...commandDangers(stripped.argv)],
    forms: commandForms(words, code)
  }
}
