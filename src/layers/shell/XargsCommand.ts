/**
 * `xargs [OPTIONS] CMD ARGS…`: the command xargs runs, with the words it reads from its input in place (appended,
 * or where `-I STR` puts them). Those words are only known at run time: the command is read-only when it is
 * read-only whatever they are (any word, an option included), and the paths they name are those its input lists
 * (see ListedNames.ts) or else unknown; with `-a FILE` the words come from that file and are always unknown. `--process-slot-var` is left out.
 */
import type { Template } from "../../domain/shell/ShellExpansion.js"
import { basename } from "./CommandForms.js"
import type { Word } from "./ShellWords.js"
import { parseWrapper } from "./WrapperParse.js"
import { wrappers } from "./WrapperTables.js"

/** What the words xargs adds are called in reasons. */
export const inputText = "what xargs reads from its input"

/** The template of the words xargs adds. */
export const inputTemplate: Template = [{ _tag: "Opaque", text: inputText }]

/** True for the template standing for the words xargs adds. */
export const isInput = (template: Template): boolean =>
  template.length === 1 && template[0]._tag === "Opaque" && template[0].text === inputText

const inputWord: Word = { value: "$XARGS_INPUT", literal: false, glob: false, template: inputTemplate }

/** The command xargs runs, as the analysis sees it. */
export interface XargsCommand {
  /** The command's words with the input in place. */
  readonly words: ReadonlyArray<Word>
  /** The input is split at blanks, quotes and backslashes are interpreted (no `-0`, no `-d`). */
  readonly split: boolean
  /**
   * `-a FILE`: the words come from that file, not from the pipeline before xargs (whatever that lists); xargs reads
   * its contents as `< FILE` would.
   */
  readonly argFile?: string | undefined
}

const refused = new Set(["--process-slot-var"])
const fromFile = new Set(["-a", "--arg-file"])
const delimited = new Set(["-0", "--null", "-d", "--delimiter"])
const replacing = new Set(["-I", "-i", "--replace"])

/** The command an `xargs` command runs; undefined when it is not `xargs` or its options are not all understood. */
export const xargsCommand = (argv: ReadonlyArray<Word>): XargsCommand | undefined => {
  const head = argv[0]
  if (head === undefined || !head.literal || basename(head.value) !== "xargs") return undefined
  const args = argv.slice(1)
  if (!args.every((word) => word.literal)) return undefined
  const parsed = parseWrapper(wrappers.xargs, args)
  if (parsed._tag !== "Command") return undefined
  const options = parsed.options.flatMap((option) => (option._tag === "Option" ? [option] : []))
  if (options.some((option) => refused.has(option.name))) return undefined
  const split = !options.some((option) => delimited.has(option.name))
  const fileOption = options.find((option) => fromFile.has(option.name))
  const file = fileOption === undefined ? {} : { argFile: fileOption.value ?? "" }
  const replace = options.find((option) => replacing.has(option.name))
  // Without a command, xargs runs `echo`.
  const command =
    parsed.start < args.length
      ? args.slice(parsed.start)
      : [
          {
            ...inputWord,
            value: "echo",
            literal: true,
            template: [{ _tag: "Text", text: "echo", quoted: true }]
          } satisfies Word
        ]
  if (replace === undefined) return { words: [...command, inputWord], split, ...file }
  const mark = replace.value === undefined || replace.value === "" ? "{}" : replace.value
  return { words: command.map((word, at) => (at > 0 && word.value.includes(mark) ? inputWord : word)), split, ...file }
}
