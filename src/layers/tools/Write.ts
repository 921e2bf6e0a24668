/**
 * Write: creates or overwrites a file atomically (docs/tools.md). An existing file must have been read in this session
 * and not changed since (FileStateCache); the original permissions are kept.
 */
import * as Path from "node:path"
import { Effect, Option, Schema } from "effect"
import * as Tool from "../../domain/Tool.js"
import { FileStateCache } from "../../services/FileStateCache.js"
import * as FileAccess from "../files/FileAccess.js"
import * as ToolRegistryLive from "../registry/ToolRegistryLive.js"

const Input = Schema.Struct({
  file_path: Schema.String.annotations({
    description: "The absolute path of the file to write (it is created, with its parent directories, if missing)."
  }),
  content: Schema.String.annotations({ description: "The complete new content of the file." })
})

/** Write's decoded input. */
export type Input = typeof Input.Type

/** The result for a new file. */
const createdMessage = (path: string): string => `File created successfully at: ${path}`

/** The result for an overwritten file. */
export const updatedMessage = (path: string): string => `The file ${path} has been updated successfully.`

const description = `Writes a file to the local filesystem, replacing its whole content.

Use it to create a new file, or to rewrite an existing file completely. To change part of an existing file prefer
Edit: it sends only the change and cannot drop content by accident. Do not create documentation or README files unless
asked to. Do not use Bash (echo, cat <<EOF, sed -i) to write files.

Rules:
- An existing file must have been read with Read in this session first, and must not have changed since (if the user
  or a formatter changed it, Read it again). Otherwise the write is refused and nothing is written.
- The write is atomic: the file is either entirely old or entirely new, never half-written. Its permissions are kept.
- Missing parent directories are created.

Parameters:
- file_path: the ABSOLUTE path of the file, e.g. /home/user/project/src/new.ts. Relative paths are rejected.
- content: the full content to write (not a diff, no line numbers).

Result: "File created successfully at: {path}" for a new file, "The file {path} has been updated successfully." for
an existing one.

Examples of misuse: writing an existing file you never read; passing Read's line-number prefixes in content; rewriting
a 2,000-line file to change one line (use Edit).`

/** Makes the Write tool; it checks and updates the session's FileStateCache. */
export const make = Effect.gen(function* () {
  const cache = yield* FileStateCache

  /** Checks the target; returns the original mode when the file exists. */
  const prepare = (path: string) =>
    Effect.flatMap(FileAccess.stat(path), (found) => {
      if (Option.isNone(found)) return Effect.succeed(Option.none<number>())
      if (found.value.isDirectory()) {
        return Effect.fail(new FileAccess.FileError({ message: `${path} is a directory, not a file.` }))
      }
      return Effect.as(FileAccess.checkFresh(cache, path, found.value), Option.some(found.value.mode & 0o7777))
    })

  return yield* Tool.make({
    name: "Write",
    description,
    input: Input,
    output: Schema.String,
    failure: FileAccess.FileError,
    category: "file",
    searchHint: "write create file save overwrite",
    isDestructive: (input) => FileAccess.existsNow(input.file_path),
    resources: (input) => [{ key: Path.resolve(input.file_path), access: "write" }],
    summarize: (input) => input.file_path,
    validate: (input, ctx) => FileAccess.validateWrite(input.file_path, ctx.cwd, (path) => prepare(path)),
    call: (input, ctx) =>
      Effect.gen(function* () {
        const path = FileAccess.resolvePath(ctx.cwd, input.file_path)
        const mode = yield* prepare(path)
        if (Option.isNone(mode)) yield* FileAccess.makeParents(path)
        yield* FileAccess.writeAtomic(path, Buffer.from(input.content, "utf8"), Option.getOrUndefined(mode), (r) =>
          cache.record(path, r)
        )
        return Option.isNone(mode) ? createdMessage(path) : updatedMessage(path)
      })
  })
})

/** Registers Write; requires ToolRegistry and FileStateCache. */
export const layer = ToolRegistryLive.register(make)
