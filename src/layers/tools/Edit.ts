/**
 * Edit: exact string replacement in a file (docs/tools.md), with the read-before-write and staleness rules of Write and
 * an atomic write. Returns a one-line confirmation; a numbered snippet around the change only when built with
 * `makeWith({ snippet: true })`.
 */
import * as Path from "node:path"
import { Effect, Option, Schema } from "effect"
import * as Tool from "../../domain/Tool.js"
import { FileStateCache } from "../../services/FileStateCache.js"
import * as FileAccess from "../files/FileAccess.js"
import * as ToolRegistryLive from "../registry/ToolRegistryLive.js"
import { numberLines, splitLines } from "./Read.js"

const Input = Schema.Struct({
  file_path: Schema.String.annotations({ description: "The absolute path of the file to modify." }),
  old_string: Schema.String.annotations({
    description: "The exact text to replace (empty only to create a new file)."
  }),
  new_string: Schema.String.annotations({ description: "The text to replace it with (must differ from old_string)." }),
  replace_all: Schema.optional(
    Schema.Boolean.annotations({ description: "Replace every occurrence of old_string (default false)." })
  )
})

/** Edit's decoded input. */
export type Input = typeof Input.Type

/** Lines of context shown around the change. */
const snippetContext = 4

/** The error when old_string equals new_string. */
const sameStringsMessage = "No changes to make: old_string and new_string are exactly the same."

/** The error when old_string does not occur. */
const notFoundStringMessage = (old: string): string => `String to replace not found in file.\nString: ${old}`

/** The error when old_string occurs several times and replace_all is false. */
const multipleMatchesMessage = (count: number, old: string): string =>
  `Found ${count} matches of the string to replace, but replace_all is false. To replace all occurrences, set ` +
  "replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the " +
  `instance.\nString: ${old}`

/** The error when an empty old_string targets a non-empty existing file. */
const fileExistsMessage = "Cannot create new file - file already exists."

const description = `Performs an exact string replacement in a file.

Use it for targeted changes to an existing file: it sends only the change, so nothing else in the file can be lost.
Use Write to create a file or replace all of it. Do not use Bash (sed, awk, perl -i) to edit files.

Rules:
- The file must have been read with Read in this session first, and must not have changed since (if the user or a
  formatter changed it, Read it again). Otherwise the edit is refused and nothing is written.
- old_string must match the file exactly, including whitespace and indentation, and must be unique in the file
  unless replace_all is true. Read shows each line as a line number, a tab, then the content: copy only the content
  after the tab, never the line-number prefix.
- An empty old_string creates a new file containing new_string (refused when the file exists and is not empty).
- The write is atomic: the file is either entirely old or entirely new, never half-written. Its permissions are kept.

Parameters:
- file_path: the ABSOLUTE path of the file, e.g. /home/user/project/src/index.ts. Relative paths are rejected.
- old_string: the exact text to replace. Include enough surrounding lines to make it unique.
- new_string: the replacement; it must differ from old_string.
- replace_all: true to replace every occurrence (e.g. renaming a variable throughout the file). Default false.

Result: "The file {path} has been updated successfully." (with the number of replacements when replace_all replaced
several); "File created successfully at: {path}" when an empty old_string created the file.

Errors you can act on: "String to replace not found in file." (re-Read the file and copy the text exactly);
"Found N matches of the string to replace, but replace_all is false." (add surrounding context, or set replace_all).

Examples of misuse: old_string copied with the "12\\t" line prefix; old_string equal to new_string; editing a
file you have not read.`

interface Plan {
  readonly created: boolean
  readonly text: string
  readonly bom: boolean
  readonly mode: number | undefined
  /** Index in the new text of the first replacement. */
  readonly at: number
  readonly inserted: string
  readonly count: number
}

const occurrences = (text: string, needle: string): ReadonlyArray<number> => {
  const found: Array<number> = []
  let from = text.indexOf(needle)
  while (from !== -1) {
    found.push(from)
    from = text.indexOf(needle, from + needle.length)
  }
  return found
}

const fail = (message: string) => Effect.fail(new FileAccess.FileError({ message }))

/** How Edit reports a change. */
export interface Options {
  /** Append a numbered snippet of the edited region to the confirmation (default false). */
  readonly snippet?: boolean | undefined
}

/** The confirmation for an edit of an existing file. */
export const updatedMessage = (path: string, count: number): string =>
  count > 1
    ? `The file ${path} has been updated successfully. All ${count} occurrences were replaced.`
    : `The file ${path} has been updated successfully.`

/** Makes the Edit tool with options; it checks and updates the session's FileStateCache. */
export const makeWith = (options: Options) =>
  Effect.gen(function* () {
    const cache = yield* FileStateCache

    /** Reads the file and computes the edit, failing with a message the model can act on. */
    const plan = (path: string, input: Input): Effect.Effect<Plan, FileAccess.FileError> =>
      Effect.gen(function* () {
        if (input.old_string === input.new_string) return yield* fail(sameStringsMessage)
        const found = yield* FileAccess.stat(path)
        if (Option.isNone(found)) {
          if (input.old_string === "") {
            const plan: Plan = {
              created: true,
              text: input.new_string,
              bom: false,
              mode: undefined,
              at: 0,
              inserted: input.new_string,
              count: 1
            }
            return plan
          }
          return yield* fail(FileAccess.notFoundMessage(yield* FileAccess.similarSibling(path)))
        }
        if (found.value.isDirectory()) return yield* fail(`${path} is a directory, not a file.`)
        yield* FileAccess.checkFresh(cache, path, found.value)
        const mode = found.value.mode & 0o7777
        const raw = new TextDecoder("utf-8", { ignoreBOM: true }).decode(yield* FileAccess.readBytes(path))
        const bom = raw.charCodeAt(0) === 0xfeff
        const text = bom ? raw.slice(1) : raw
        if (input.old_string === "") {
          if (text.length > 0) return yield* fail(fileExistsMessage)
          return { created: false, text: input.new_string, bom, mode, at: 0, inserted: input.new_string, count: 1 }
        }
        let oldString = input.old_string
        let newString = input.new_string
        let at = occurrences(text, oldString)
        if (at.length === 0 && text.includes("\r\n") && oldString.includes("\n") && !oldString.includes("\r\n")) {
          // The model usually sends "\n"; the file uses CRLF line endings.
          oldString = oldString.replaceAll("\n", "\r\n")
          newString = newString.replaceAll("\n", "\r\n")
          at = occurrences(text, oldString)
        }
        if (at.length === 0) return yield* fail(notFoundStringMessage(input.old_string))
        if (at.length > 1 && input.replace_all !== true) {
          return yield* fail(multipleMatchesMessage(at.length, input.old_string))
        }
        const next =
          input.replace_all === true
            ? text.split(oldString).join(newString)
            : text.slice(0, at[0]) + newString + text.slice(at[0] + oldString.length)
        return { created: false, text: next, bom, mode, at: at[0], inserted: newString, count: at.length }
      })

    const snippet = (done: Plan): string => {
      const lines = splitLines(done.text)
      const firstLine = done.text.slice(0, done.at).split("\n").length
      const insertedLines = splitLines(done.inserted).length
      const lastLine = firstLine + Math.max(0, insertedLines - 1)
      const from = Math.max(1, firstLine - snippetContext)
      const to = Math.min(lines.length, lastLine + snippetContext)
      return numberLines(lines.slice(from - 1, to), from)
    }

    return yield* Tool.make({
      name: "Edit",
      description,
      input: Input,
      output: Schema.String,
      category: "file",
      failure: FileAccess.FileError,
      searchHint: "edit modify replace change file string",
      resources: (input) => [{ key: Path.resolve(input.file_path), access: "write" }],
      summarize: (input) => input.file_path,
      validate: (input, ctx) => FileAccess.validateWrite(input.file_path, ctx.cwd, (path) => plan(path, input)),
      call: (input, ctx) =>
        Effect.gen(function* () {
          const path = FileAccess.resolvePath(ctx.cwd, input.file_path)
          const done = yield* plan(path, input)
          if (done.created) yield* FileAccess.makeParents(path)
          const bytes = Buffer.from(done.bom ? `\ufeff${done.text}` : done.text, "utf8")
          yield* FileAccess.writeAtomic(path, bytes, done.mode, (r) => cache.record(path, r))
          if (done.created) return `File created successfully at: ${path}`
          const what = updatedMessage(path, done.count)
          return options.snippet === true ? `${what} The edited region:\n${snippet(done)}` : what
        })
    })
  })

/** Makes the Edit tool with a one-line confirmation. */
export const make = makeWith({})

/** Registers Edit; requires ToolRegistry and FileStateCache. */
export const layer = ToolRegistryLive.register(make)
