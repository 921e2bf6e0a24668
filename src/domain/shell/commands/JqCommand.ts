/**
 * `jq`: a filter language that cannot write files or run programs. Its own argument parser matches long options
 * exactly and some take two words (`--arg NAME VALUE`, `--rawfile NAME FILE`), so it has its own small table.
 * Files are read from operands, `--slurpfile`/`--rawfile`/`--argfile`, `-L DIR` and a filter given by `-f`;
 * a filter that imports modules (`import`, `include`) reads files that no word names, which is not understood.
 */

import type { ArgWord, CustomCommand, Role } from "../CommandTable.js"
import type { PathOperand } from "../FileEffect.js"
import * as TableInterpreter from "../TableInterpreter.js"

/** Long options by name: the roles of the words they take (none for a flag). */
const long: Readonly<Record<string, ReadonlyArray<Role>>> = {
  slurp: [],
  "raw-input": [],
  "null-input": [],
  "compact-output": [],
  tab: [],
  indent: ["text"],
  "color-output": [],
  "monochrome-output": [],
  "ascii-output": [],
  unbuffered: [],
  "sort-keys": [],
  "raw-output": [],
  "raw-output0": [],
  "join-output": [],
  "exit-status": [],
  seq: [],
  stream: [],
  "stream-errors": [],
  "from-file": [],
  arg: ["text", "text"],
  argjson: ["text", "text"],
  slurpfile: ["text", "read"],
  rawfile: ["text", "read"],
  argfile: ["text", "read"],
  args: [],
  jsonargs: [],
  binary: [],
  help: [],
  version: [],
  "build-configuration": []
}

/** Short options: flags, except `-L DIR` (the module search path). */
const shortFlags = new Set("srncCMaSjehVbf".split(""))

const modules = /\b(?:import|include)\b/

/** `jq [OPTIONS] FILTER [FILE…]`. */
export const jq: CustomCommand = {
  interpret: (args: ReadonlyArray<ArgWord>) => {
    const reads: Array<PathOperand> = []
    const operands: Array<number> = []
    let fromFile = false
    let positionalArgs = false
    let endOfOptions = false
    for (let at = 0; at < args.length; at++) {
      const word = args[at]
      const value = word.value
      if (endOfOptions || !value.startsWith("-") || value === "-" || !word.literal) {
        operands.push(at)
        continue
      }
      if (value === "--") {
        endOfOptions = true
        continue
      }
      if (value.startsWith("--")) {
        const roles = long[value.slice(2)]
        if (roles === undefined) return TableInterpreter.notKnown(`unknown jq option ${value}`)
        if (value === "--from-file") fromFile = true
        if (value === "--args" || value === "--jsonargs") positionalArgs = true
        for (const role of roles) {
          at++
          if (at >= args.length) return TableInterpreter.notKnown(`jq ${value} needs more arguments`)
          if (role === "read") reads.push({ index: at + 1, value: args[at].value })
        }
        continue
      }
      const letters = value.slice(1)
      if (letters.startsWith("L")) {
        const attached = letters.slice(1)
        if (attached === "") at++
        if (at >= args.length) return TableInterpreter.notKnown("jq -L needs a directory")
        reads.push({ index: at + 1, value: attached === "" ? args[at].value : attached })
        continue
      }
      const unknown = [...letters].find((letter) => !shortFlags.has(letter))
      if (unknown !== undefined) return TableInterpreter.notKnown(`unknown jq option -${unknown}`)
      if (letters.includes("f")) fromFile = true
    }
    const [filter, ...rest] = operands
    if (filter !== undefined) {
      const word = args[filter]
      if (fromFile || TableInterpreter.isOpaque(word)) reads.push({ index: filter + 1, value: word.value })
      else if (modules.test(word.value)) return TableInterpreter.notKnown("a jq filter that imports modules")
    }
    // After --args the operands are strings, but a word only known at run time may still become an option.
    for (const at of rest) {
      const word = args[at]
      if (word.value !== "-" && (!positionalArgs || TableInterpreter.isOpaque(word)))
        reads.push({ index: at + 1, value: word.value })
    }
    return { known: true, readOnly: true, reads, writes: [] }
  }
}
