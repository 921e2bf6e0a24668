/**
 * The shell's own settings builtins as a script uses them: `set -euo pipefail`, `shopt -s nullglob`, `ulimit -n`.
 * Each setting here changes how later commands fail or print, never which program runs or which file a word names;
 * a setting that could (`set -k`, `shopt -s expand_aliases`, `shopt -s nocaseglob`) is not on the lists, and a word
 * only known at run time is not understood.
 */
import { type ArgWord, type CustomCommand, readsNothing } from "../CommandTable.js"
import * as TableInterpreter from "../TableInterpreter.js"

/** `set` letters that only change error handling, tracing or job control (`-k`, `-p` and `-t` are left out). */
const setLetters = new Set("abefhmnuvxBCEHPT")

/** `set -o NAME` names with the same effects as the letters above. */
const setNames = new Set([
  "allexport",
  "braceexpand",
  "emacs",
  "errexit",
  "errtrace",
  "functrace",
  "hashall",
  "histexpand",
  "history",
  "ignoreeof",
  "monitor",
  "noclobber",
  "noexec",
  "noglob",
  "nolog",
  "notify",
  "nounset",
  "physical",
  "pipefail",
  "verbose",
  "vi",
  "xtrace"
])

const unknownWord = (args: ReadonlyArray<ArgWord>) => args.find((word) => !word.literal)

/**
 * `set` alone (prints the variables), flags like `-e`, `+x`, `-euo pipefail`, and `set -- WORDS` (the positional
 * parameters, which the analyzer never resolves anyway).
 */
export const set: CustomCommand = {
  interpret: (args) => {
    if (unknownWord(args) !== undefined) return TableInterpreter.notKnown("a set word known only at run time")
    for (let at = 0; at < args.length; at++) {
      const value = args[at].value
      if (value === "--" || value === "-") return readsNothing
      if (!/^[-+]/.test(value)) return readsNothing
      const letters = value.slice(1)
      for (let i = 0; i < letters.length; i++) {
        const letter = letters[i]
        if (letter === "o") {
          // `-o` last in its word takes the next word as a name; alone at the end it lists the settings
          if (i !== letters.length - 1) return TableInterpreter.notKnown(`set ${value}`)
          const name = args[at + 1]?.value
          if (name === undefined) return readsNothing
          if (!setNames.has(name)) return TableInterpreter.notKnown(`set -o ${name}`)
          at++
        } else if (!setLetters.has(letter)) return TableInterpreter.notKnown(`set -${letter}`)
      }
    }
    return readsNothing
  }
}

/**
 * `shopt` options a script may set without changing what its words name: glob failures, `dotglob` and `globstar`
 * (whose effect on later globs the path resolver follows), error handling.
 */
const shoptNames = new Set([
  "dotglob",
  "globstar",
  "nullglob",
  "failglob",
  "inherit_errexit",
  "checkwinsize",
  "histappend",
  "cmdhist",
  "lithist"
])

/** `shopt` listing or querying (`-p`, `-q`, names alone) and `-s`/`-u` of the names above. */
export const shopt: CustomCommand = {
  interpret: (args) => {
    if (unknownWord(args) !== undefined) return TableInterpreter.notKnown("a shopt word known only at run time")
    let sets = false
    const names: Array<string> = []
    for (const word of args) {
      if (/^-[psuqo]+$/.test(word.value)) {
        if (/[su]/.test(word.value)) sets = true
        if (word.value.includes("o")) return TableInterpreter.notKnown("shopt -o sets the options of set")
      } else names.push(word.value)
    }
    if (!sets) return readsNothing
    const other = names.find((name) => !shoptNames.has(name))
    if (names.length === 0) return readsNothing
    return other === undefined ? readsNothing : TableInterpreter.notKnown(`shopt option ${other}`)
  }
}

/** `ulimit` printing or lowering/raising the process's resource limits: letters and a number. */
export const ulimit: CustomCommand = {
  interpret: (args) => {
    if (unknownWord(args) !== undefined) return TableInterpreter.notKnown("a ulimit word known only at run time")
    const bad = args.find(
      (word) => !/^-[HSabcdefiklmnpqrstuvxPRT]+$/.test(word.value) && !/^(\d+|unlimited|soft|hard)$/.test(word.value)
    )
    return bad === undefined ? readsNothing : TableInterpreter.notKnown(`ulimit ${bad.value}`)
  }
}

/**
 * `export NAME=value`, `export NAME`, `export -p`: the variables reach every later command, and the analyzer counts
 * them as given to those commands (which stop being read-only unless the names are harmless, `NODE_ENV`, `CI`, …).
 * `export -f` (functions handed to child shells) is not understood.
 */
export const exportVariables: CustomCommand = {
  interpret: (args) => {
    for (const word of args) {
      if (word.literal && /^-[pn]+$/.test(word.value)) continue
      if (/^[A-Za-z_][A-Za-z0-9_]*(?:=|$)/.test(word.value) && (word.literal || word.value.includes("="))) continue
      return TableInterpreter.notKnown(`export ${word.value}`)
    }
    return readsNothing
  }
}
