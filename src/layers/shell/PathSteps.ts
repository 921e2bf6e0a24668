/**
 * The path steps of a command line (see `PathStep`): what each simple command and each file redirection hands to
 * whoever resolves paths, taken from the words the analyzer already has.
 */
import type { Node } from "web-tree-sitter"
import type { PathStep } from "../../services/ShellAnalyzer.js"
import { childrenOf, type Word, wordsOf } from "./ShellWords.js"

/** The directory `env` runs its command in: `-C DIR`, `-CDIR`, `-iC DIR`, `--chdir=DIR`, `--ch DIR`. */
const envDirectory = (
  words: ReadonlyArray<Word>
): { readonly chdir?: Word["template"]; readonly chdirUnknown?: string } => {
  let chdir: Word["template"] | undefined
  for (let i = 1; i < words.length; i++) {
    const word = words[i]
    const value = word.value
    if (!word.literal) return { chdirUnknown: `env option ${value} is only known at run time` }
    if (value === "--" || !value.startsWith("-") || value === "-") break
    if (value.startsWith("--")) {
      const [name, attached] = value.includes("=") ? [value.slice(0, value.indexOf("=")), true] : [value, false]
      if (name.length > 2 && "--chdir".startsWith(name)) {
        if (attached) chdir = [{ _tag: "Text", text: value.slice(value.indexOf("=") + 1), quoted: true }]
        else {
          chdir = words[i + 1]?.template
          i++
        }
      } else if (name.length > 2 && "--unset".startsWith(name) && !attached) i++
      continue
    }
    for (let at = 1; at < value.length; at++) {
      const letter = value[at]
      if (letter === "C" || letter === "u") {
        const rest = value.slice(at + 1)
        const operand: Word["template"] | undefined =
          rest === "" ? words[++i]?.template : [{ _tag: "Text", text: rest, quoted: true }]
        if (letter === "C") chdir = operand
        break
      }
    }
  }
  return chdir === undefined ? {} : { chdir }
}

/**
 * The step of one simple command: its words after wrappers (`argv`, a tail of `words`) and the directory an `env`
 * wrapper among the stripped words runs it in.
 */
export const commandStep = (words: ReadonlyArray<Word>, argv: ReadonlyArray<Word>): PathStep => {
  const start = argv.length === 0 ? words.length : words.indexOf(argv[0])
  let chdir: Word["template"] | undefined
  let chdirUnknown: string | undefined
  for (let i = 0; i < start; i++) {
    if (words[i].literal && words[i].value === "env") {
      const found = envDirectory(words.slice(i, start))
      chdir = found.chdir ?? chdir
      chdirUnknown = found.chdirUnknown ?? chdirUnknown
    }
  }
  return { _tag: "Command", words: argv.map((w) => w.template), chdir, chdirUnknown }
}

const fdDuplication = /^(\d+-?|-)$/

/** The step of a file redirection (`< f`, `> f`, `>> f`, `&> f`, `<> f`); undefined for descriptor copies. */
export const redirectStep = (node: Node): PathStep | undefined => {
  const operator = childrenOf(node).find((child) => !child.isNamed)?.type ?? ""
  const destinations = node.childrenForFieldName("destination").filter((child): child is Node => child !== null)
  const target = wordsOf(destinations)[0]
  if (target === undefined) return undefined
  if ((operator.endsWith("&") || operator === "<&-" || operator === ">&-") && fdDuplication.test(target.value)) {
    return undefined
  }
  return { _tag: "Redirect", operator, target: target.template }
}
