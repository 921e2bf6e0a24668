/**
 * Read: reads a file through the platform's FileSystem, each line prefixed by its number and a tab, and records its
 * state in the FileStateCache so that Write and Edit can check the model saw the current content. Its `call` needs
 * `FileSystem | FileStateCache`, provided by the layer that registers it; any FileSystem serves (a fake disk in
 * test/layers/tools/ReadFakeDisk.test.ts).
 */
import * as Crypto from "node:crypto"
import * as Path from "node:path"
import { StringDecoder } from "node:string_decoder"
import { FileSystem } from "@effect/platform"
import { PlatformError } from "@effect/platform/Error"
import { Effect, Option, Schema } from "effect"
import { ToolResultContent } from "../../domain/Blocks.js"
import { ToolValidationError } from "../../domain/Errors.js"
import * as Tool from "../../domain/Tool.js"
import { FileStateCache } from "../../services/FileStateCache.js"
import * as FileAccess from "../files/FileAccess.js"
import * as ToolRegistryLive from "../registry/ToolRegistryLive.js"

/** Lines returned when no limit is given. */
const defaultLimit = 2000

/** Lines longer than this are cut. */
export const maxLineLength = 2000

/** Files larger than this (in bytes) must be read with offset/limit. */
export const maxBytes = 256 * 1024

/** The largest image returned (its base64 form stays under the API's 5 MB). */
const maxImageBytes = 3_750_000

/** Image extensions returned as image blocks, with their media types. */
const imageTypes: Readonly<Record<string, string>> = {
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
const emptyFileNote = "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"

/** The error for a text file too large to read whole. */
const tooLargeMessage = (size: number): string =>
  `File content (${FileAccess.formatSize(size)}) exceeds maximum allowed size (256 KB). Please use offset and limit ` +
  "parameters to read specific portions of the file, or use the Grep tool to search for specific content."

/** The error for a binary file. */
const binaryMessage = (path: string): string =>
  `Cannot read binary file: ${path}. Read only returns text files and images (png, jpg, gif, webp); inspect other ` +
  "files with Bash (e.g. `file`, `xxd | head`)."

/** The error for a directory. */
const directoryMessage = (path: string): string =>
  `${path} is a directory, not a file. Use the Glob tool (or Bash ls) to list its contents.`

/** Read refused the file (missing, a directory, binary, too large); the message is meant for the model. */
export class ReadRefused extends Schema.TaggedError<ReadRefused>()("ReadRefused", { message: Schema.String }) {}

/** What Read's `call` fails with: its own refusals, or the file system's errors. */
export const Failure = Schema.Union(ReadRefused, PlatformError)

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

const refuse = (message: string) => Effect.fail(new ReadRefused({ message }))

/** Streams a large file: keeps only the requested lines, counts all of them and hashes the bytes. */
const scanWindow = (fs: FileSystem.FileSystem, path: string, first: number, count: number) =>
  Effect.scoped(
    Effect.gen(function* () {
      const file = yield* fs.open(path, { flag: "r" })
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
        const bytesRead = Number(yield* Effect.uninterruptible(file.read(buffer)))
        if (bytesRead === 0) break
        const chunk = buffer.subarray(0, bytesRead)
        if (start && hasNul(chunk)) return { lines: [], total: 0, hash: "", binary: true } satisfies Window
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
      return { lines, total, hash: hash.digest("hex"), binary: false } satisfies Window
    })
  )

const readText = Effect.fnUntraced(function* (path: string, input: Input, size: number, mtimeMs: number) {
  const fs = yield* FileSystem.FileSystem
  const cache = yield* FileStateCache
  const first = Math.max(1, input.offset ?? 1)
  const count = input.limit ?? defaultLimit
  const explicitWindow = input.offset !== undefined || input.limit !== undefined
  let window: Window
  if (size <= maxBytes) {
    const bytes = yield* fs.readFile(path)
    if (hasNul(bytes)) return yield* refuse(binaryMessage(path))
    const all = splitLines(new TextDecoder("utf-8").decode(bytes))
    window = { lines: all.slice(first - 1, first - 1 + count), total: all.length, hash: "", binary: false }
    yield* cache.record(path, { mtimeMs, hash: FileAccess.hashOf(bytes) })
  } else {
    if (!explicitWindow) return yield* refuse(tooLargeMessage(size))
    window = yield* scanWindow(fs, path, first, count)
    if (window.binary) return yield* refuse(binaryMessage(path))
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

const readImage = Effect.fnUntraced(function* (path: string, mediaType: string, size: number, mtimeMs: number) {
  if (size > maxImageBytes) {
    return yield* refuse(
      `Image file is too large (${FileAccess.formatSize(size)}); the maximum is ${FileAccess.formatSize(maxImageBytes)}.`
    )
  }
  const fs = yield* FileSystem.FileSystem
  const bytes = yield* fs.readFile(path)
  yield* (yield* FileStateCache).record(path, { mtimeMs, hash: FileAccess.hashOf(bytes) })
  const block = {
    type: "image" as const,
    source: { type: "base64" as const, media_type: mediaType, data: Buffer.from(bytes).toString("base64") }
  }
  return [block]
})

/** The file's info, or none when it does not exist (or a parent is not a directory). */
const statOf = (fs: FileSystem.FileSystem, path: string) =>
  fs.stat(path).pipe(
    Effect.map(Option.some),
    Effect.catchIf(
      (e) =>
        e._tag === "SystemError" && (e.reason === "NotFound" || (e.reason === "BadResource" && e.syscall === "stat")),
      () => Effect.succeedNone
    )
  )

/** The not-found refusal, naming a sibling with a similar name when there is one. */
const notFound = (fs: FileSystem.FileSystem, path: string) =>
  fs.readDirectory(Path.dirname(path)).pipe(
    Effect.map((entries) => FileAccess.closestSibling(path, entries)),
    Effect.orElseSucceed(() => Option.none<string>()),
    Effect.flatMap((similar) => refuse(FileAccess.notFoundMessage(similar)))
  )

/** Reads one file for the model. */
const read = Effect.fn("Read.call")(function* (input: Input, ctx: Tool.ToolContext) {
  const fs = yield* FileSystem.FileSystem
  const path = FileAccess.resolvePath(ctx.cwd, input.file_path)
  const found = yield* statOf(fs, path)
  if (Option.isNone(found)) return yield* notFound(fs, path)
  const info = found.value
  if (info.type === "Directory") return yield* refuse(directoryMessage(path))
  const size = Number(info.size)
  const mtimeMs = Option.match(info.mtime, { onNone: () => 0, onSome: (d) => d.getTime() })
  const ext = Path.extname(path).toLowerCase()
  const mediaType = imageTypes[ext]
  if (mediaType !== undefined) return yield* readImage(path, mediaType, size, mtimeMs)
  if (binaryExtensions.has(ext)) return yield* refuse(binaryMessage(path))
  return yield* readText(path, input, size, mtimeMs)
})

/** Makes the Read tool; its `call` needs the FileSystem and the session's FileStateCache, where it records reads. */
export const make = Tool.make({
  name: "Read",
  description,
  input: Input,
  output: ToolResultContent,
  failure: Failure,
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
  call: read,
  toResult: (output) => output
})

/** What Read's `call` needs. */
export type Requirements = FileSystem.FileSystem | FileStateCache

/** Registers Read; requires ToolRegistry, FileSystem and FileStateCache. */
export const layer = ToolRegistryLive.register(make)
