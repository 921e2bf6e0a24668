/**
 * Read: reads a file from the local filesystem, each line prefixed by its number and a tab, and records its state in
 * the FileStateCache so that Write and Edit can check the model saw the current content.
 */
import * as Crypto from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { StringDecoder } from "node:string_decoder"
import { Effect, Option, Schema } from "effect"
import { ToolResultContent } from "../../domain/Blocks.js"
import { ToolFailure, ToolValidationError } from "../../domain/Errors.js"
import * as Tool from "../../domain/Tool.js"
import { FileStateCache } from "../../services/FileStateCache.js"
import * as FileAccess from "../files/FileAccess.js"
import * as ToolRegistryLive from "../registry/ToolRegistryLive.js"

/** Lines returned when no limit is given. */
export const defaultLimit = 2000

/** Lines longer than this are cut. */
export const maxLineLength = 2000

/** Files larger than this (in bytes) must be read with offset/limit. */
export const maxBytes = 256 * 1024

/** The largest image returned (its base64 form stays under the API's 5 MB). */
export const maxImageBytes = 3_750_000

/** Image extensions returned as image blocks, with their media types. */
export const imageTypes: Readonly<Record<string, string>> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp"
}

const binaryExtensions = new Set(
  (
    ".7z .a .avi .bin .bmp .bz2 .class .dll .dmg .doc .docx .dylib .eot .exe .flac .gz .ico .iso .jar .lib .mkv .mov " +
    ".mp3 .mp4 .o .obj .ogg .otf .pdf .ppt .pptx .pyc .rar .so .sqlite .tar .tgz .tiff .ttf .wasm .wav .woff " +
    ".woff2 .xls .xlsx .xz .zip .zst"
  ).split(" ")
)

/** The note returned for an empty file. */
export const emptyFileNote = "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"

/** The error for a text file too large to read whole. */
export const tooLargeMessage = (size: number): string =>
  `File content (${FileAccess.formatSize(size)}) exceeds maximum allowed size (256 KB). Please use offset and limit ` +
  "parameters to read specific portions of the file, or use the Grep tool to search for specific content."

/** The error for a binary file. */
export const binaryMessage = (path: string): string =>
  `Cannot read binary file: ${path}. Read only returns text files and images (png, jpg, gif, webp); inspect other ` +
  "files with Bash (e.g. `file`, `xxd | head`)."

/** The error for a directory. */
export const directoryMessage = (path: string): string =>
  `${path} is a directory, not a file. Use the Glob tool (or Bash ls) to list its contents.`

const Input = Schema.Struct({
  file_path: Schema.String.annotations({ description: "The absolute path of the file to read." }),
  offset: Schema.optional(
    Schema.Number.pipe(Schema.int(), Schema.nonNegative()).annotations({
      description:
        "The line number to start reading from (1 is the first line). Only for files too large to read whole."
    })
  ),
  limit: Schema.optional(
    Schema.Number.pipe(Schema.int(), Schema.positive()).annotations({
      description: `The number of lines to read (default ${defaultLimit}). Only for files too large to read whole.`
    })
  )
})

/** Read's decoded input. */
export type Input = typeof Input.Type

const description = `Reads a file from the local filesystem and returns its content with line numbers.

Use it to look at a file before you change it (Write and Edit refuse to touch an existing file you have not read in
this session), to inspect source, configuration, logs or images. Do not use it to list a directory (use Glob, or
Bash ls) or to search many files for a string (use Grep). It is safe to read several files at once: call Read for
each of them in the same message.

Parameters:
- file_path: the ABSOLUTE path of the file, e.g. /home/user/project/src/index.ts. Relative paths are rejected.
- offset: the 1-based line to start at. Only give it for files too large to read at once.
- limit: how many lines to return (default ${defaultLimit}). Only give it for large files.

Result: each line as its number, a tab, then the line ("1\\tfirst line"). The line numbers and the tab are not part
of the file: never copy them into Edit's old_string or new_string. Lines longer than
${maxLineLength} characters are cut. Without offset/limit the first ${defaultLimit} lines are returned and a note tells you how
to read the rest. Files larger than 256 KB must be read with offset and limit (or searched with Grep). Images (png,
jpg, gif, webp) are returned as images. Binary files are refused. A missing file is an error, with a suggestion when
a file with a similar name exists next to it. An empty file returns a short warning instead of content.

Examples of misuse: Read with file_path "src/index.ts" (not absolute); Read on a directory; reading a 50 MB log
whole instead of Grep or offset/limit.`

const cutLine = (line: string): string =>
  line.length > maxLineLength
    ? `${line.slice(0, maxLineLength)}... [line truncated, ${line.length} characters in total]`
    : line

/** Formats lines as `N\tline` (no padding), numbering from `first`. */
export const numberLines = (lines: ReadonlyArray<string>, first: number): string =>
  lines.map((line, i) => `${first + i}\t${cutLine(line)}`).join("\n")

const stripCr = (line: string): string => (line.endsWith("\r") ? line.slice(0, -1) : line)

/** Splits text into lines; a final newline does not start another line. */
export const splitLines = (text: string): ReadonlyArray<string> => {
  if (text.length === 0) return []
  const parts = text.split("\n")
  if (parts[parts.length - 1] === "") parts.pop()
  return parts.map(stripCr)
}

const hasNul = (bytes: Uint8Array): boolean => bytes.subarray(0, 8192).includes(0)

interface Window {
  readonly lines: ReadonlyArray<string>
  readonly total: number
  readonly hash: string
  readonly binary: boolean
}

/** Streams a large file: keeps only the requested lines, counts all of them and hashes the bytes. */
const scanWindow = (path: string, first: number, count: number): Effect.Effect<Window, FileAccess.FileError> =>
  Effect.acquireUseRelease(
    FileAccess.io(() => Fs.open(path, "r")),
    (handle) =>
      Effect.gen(function* () {
        const hash = Crypto.createHash("sha256")
        const decoder = new StringDecoder("utf8")
        const buffer = Buffer.alloc(1024 * 1024)
        const lines: Array<string> = []
        let total = 0
        let pending = ""
        let start = true
        const take = (line: string) => {
          total += 1
          if (total >= first && total < first + count) lines.push(stripCr(line))
        }
        while (true) {
          const { bytesRead } = yield* Effect.uninterruptible(
            FileAccess.io(() => handle.read(buffer, 0, buffer.length, null))
          )
          if (bytesRead === 0) break
          const chunk = buffer.subarray(0, bytesRead)
          if (start && hasNul(chunk)) return { lines: [], total: 0, hash: "", binary: true }
          hash.update(chunk)
          let text = pending + decoder.write(chunk)
          if (start && text.charCodeAt(0) === 0xfeff) text = text.slice(1)
          start = false
          const parts = text.split("\n")
          pending = parts.pop() ?? ""
          for (const part of parts) take(part)
        }
        pending += decoder.end()
        if (pending.length > 0) take(pending)
        return { lines, total, hash: hash.digest("hex"), binary: false }
      }),
    (handle) => FileAccess.io(() => handle.close()).pipe(Effect.ignore)
  )

/** Makes the Read tool; it records what it reads in the session's FileStateCache. */
export const make = Effect.gen(function* () {
  const cache = yield* FileStateCache

  const readText = (path: string, input: Input, size: number, mtimeMs: number) =>
    Effect.gen(function* () {
      const first = Math.max(1, input.offset ?? 1)
      const count = input.limit ?? defaultLimit
      const explicitWindow = input.offset !== undefined || input.limit !== undefined
      let window: Window
      if (size <= maxBytes) {
        const bytes = yield* FileAccess.readBytes(path)
        if (hasNul(bytes)) return yield* new ToolFailure({ message: binaryMessage(path) })
        const all = splitLines(new TextDecoder("utf-8").decode(bytes))
        window = { lines: all.slice(first - 1, first - 1 + count), total: all.length, hash: "", binary: false }
        yield* cache.record(path, { mtimeMs, hash: FileAccess.hashOf(bytes) })
      } else {
        if (!explicitWindow) return yield* new ToolFailure({ message: tooLargeMessage(size) })
        window = yield* scanWindow(path, first, count)
        if (window.binary) return yield* new ToolFailure({ message: binaryMessage(path) })
        yield* cache.record(path, { mtimeMs, hash: window.hash })
      }
      if (window.total === 0) return emptyFileNote
      if (first > window.total) {
        return (
          `<system-reminder>Warning: the file exists but is shorter than the provided offset (${first}). ` +
          `The file has ${window.total} lines.</system-reminder>`
        )
      }
      const last = first + window.lines.length - 1
      const body = numberLines(window.lines, first)
      return last < window.total || first > 1
        ? `${body}\n\n(Showing lines ${first}-${last} of ${window.total}. Use offset and limit to read other parts.)`
        : body
    })

  const readImage = (path: string, mediaType: string, size: number, mtimeMs: number) =>
    Effect.gen(function* () {
      if (size > maxImageBytes) {
        return yield* new ToolFailure({
          message: `Image file is too large (${FileAccess.formatSize(size)}); the maximum is ${FileAccess.formatSize(maxImageBytes)}.`
        })
      }
      const bytes = yield* FileAccess.readBytes(path)
      yield* cache.record(path, { mtimeMs, hash: FileAccess.hashOf(bytes) })
      const block = {
        type: "image" as const,
        source: { type: "base64" as const, media_type: mediaType, data: Buffer.from(bytes).toString("base64") }
      }
      return [block]
    })

  return yield* Tool.make({
    name: "Read",
    description,
    input: Input,
    output: ToolResultContent,
    category: "file",
    searchHint: "read file view open cat contents lines image",
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    maxResultSizeChars: Number.POSITIVE_INFINITY,
    resources: (input) => [{ key: Path.resolve(input.file_path), access: "read" }],
    summarize: (input) => input.file_path,
    validate: (input) =>
      Path.isAbsolute(input.file_path)
        ? Effect.void
        : Effect.fail(new ToolValidationError({ message: FileAccess.notAbsoluteMessage(input.file_path) })),
    call: (input, ctx) =>
      Effect.gen(function* () {
        const path = FileAccess.resolvePath(ctx.cwd, input.file_path)
        const found = yield* FileAccess.stat(path)
        if (Option.isNone(found)) {
          return yield* new ToolFailure({ message: FileAccess.notFoundMessage(yield* FileAccess.similarSibling(path)) })
        }
        const info = found.value
        if (info.isDirectory()) return yield* new ToolFailure({ message: directoryMessage(path) })
        const ext = Path.extname(path).toLowerCase()
        const mediaType = imageTypes[ext]
        if (mediaType !== undefined) return yield* readImage(path, mediaType, info.size, info.mtimeMs)
        if (binaryExtensions.has(ext)) return yield* new ToolFailure({ message: binaryMessage(path) })
        return yield* readText(path, input, info.size, info.mtimeMs)
      }).pipe(Effect.catchTag("FileError", (e) => Effect.fail(new ToolFailure({ message: e.message })))),
    toResult: (output) => output
  })
})

/** Registers Read; requires ToolRegistry and FileStateCache. */
export const layer = ToolRegistryLive.register(make)
