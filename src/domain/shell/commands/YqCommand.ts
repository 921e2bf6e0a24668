/**
 * `yq` (the Go yq, v4): `yq [eval|eval-all] [FLAGS] EXPRESSION [FILE…]`. It writes with `-i` (in place) and
 * `-s` (one file per document), and an expression can read any file with `load…` operators: those forms are not
 * read-only. Otherwise it reads the files it is given and prints.
 */
import type { ArgWord, CustomCommand } from "../CommandTable.js"
import type { PathOperand } from "../FileEffect.js"
import * as TableInterpreter from "../TableInterpreter.js"

/** Flags without a value. */
const flags = new Set([
  "-C",
  "--colors",
  "-M",
  "--no-colors",
  "-e",
  "--exit-status",
  "-P",
  "--prettyPrint",
  "-r",
  "--unwrapScalar",
  "-N",
  "--no-doc",
  "-j",
  "--tojson",
  "-n",
  "--null-input",
  "-0",
  "--nul-output",
  "-v",
  "--verbose",
  "-h",
  "--help",
  "-V",
  "--version"
])

/** Options that take a text value (`-o json`, `--output-format=json`). */
const valued = new Set(["-I", "--indent", "-o", "--output-format", "-p", "--input-format"])

const subcommands = new Set(["eval", "e", "eval-all", "ea"])

/** Operators of yq's expression language that read a file named inside the expression. */
const loads = /\bload(?:_str|_xml|_props|_base64|_csv|_tsv|_toml)?\b/

export const yq: CustomCommand = {
  interpret: (args: ReadonlyArray<ArgWord>) => {
    const operands: Array<number> = []
    let endOfOptions = false
    let at = 0
    if (args[0]?.literal === true && subcommands.has(args[0].value)) at = 1
    for (; at < args.length; at++) {
      const word = args[at]
      if (!word.literal) {
        // A word known only at run time may become `-i`: not understood.
        if (!endOfOptions) return TableInterpreter.notKnown("a yq word known only at run time")
        operands.push(at)
        continue
      }
      const value = word.value
      if (endOfOptions || !value.startsWith("-") || value === "-") {
        operands.push(at)
        continue
      }
      if (value === "--") {
        endOfOptions = true
        continue
      }
      const name = value.includes("=") ? value.slice(0, value.indexOf("=")) : value
      if (flags.has(value)) continue
      if (valued.has(name)) {
        if (name === value) at++
        continue
      }
      if (/^-[oIp]./.test(value)) continue
      return TableInterpreter.notKnown(`yq option ${value}`)
    }
    const [expression, ...files] = operands
    const reads: Array<PathOperand> = []
    if (expression !== undefined) {
      const word = args[expression]
      if (TableInterpreter.isOpaque(word)) return TableInterpreter.notKnown("a yq expression known only at run time")
      if (loads.test(word.value)) return TableInterpreter.notKnown("a yq expression that loads files")
    }
    for (const index of files) if (args[index].value !== "-") reads.push({ index: index + 1, value: args[index].value })
    return { known: true, readOnly: true, reads, writes: [] }
  }
}
