/**
 * The words of one simple command after the wrappers that run another command (`timeout`, `nice`, `env`, …) are
 * stripped, and the dangers hidden in them: `eval`, `source`, `exec`, shells given code, commands run by `xargs`,
 * `find -exec` and `busybox`.
 */
import type { Word } from "./ShellWords.js"

const assignmentWord = /^([A-Za-z_][A-Za-z0-9_]*)=/

export interface Stripped {
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

export const basename = (path: string): string => path.slice(path.lastIndexOf("/") + 1)

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
export const analyzeWords = (words: ReadonlyArray<Word>): Stripped => {
  const stripped = stripWrappers(words)
  return { ...stripped, dangers: [...stripped.dangers, ...commandDangers(stripped.argv)] }
}
