/**
 * Glob: finds files by name pattern (SPEC §9), honouring .gitignore files, newest first, at most 100 paths.
 */
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { Effect, Schema } from "effect"
import picomatch from "picomatch"
import { ToolFailure } from "../../domain/Errors.js"
import * as Tool from "../../domain/Tool.js"
import * as FileWalker from "../files/FileWalker.js"
import * as ToolRegistryLive from "../registry/ToolRegistryLive.js"

/** The most paths returned. */
export const maxResults = 100

/** The note added when more than `maxResults` files match. */
export const truncatedNote = "(Results are truncated. Consider using a more specific path or pattern.)"

const Input = Schema.Struct({
  pattern: Schema.String.annotations({
    description: 'The glob pattern to match file paths against, e.g. "**/*.ts" or "src/**/test_*.py".'
  }),
  path: Schema.optional(
    Schema.String.annotations({
      description:
        "The directory to search in (absolute, or relative to the working directory). Omit it to search the working directory."
    })
  )
})

/** Glob's decoded input. */
export type Input = typeof Input.Type

const description = `Finds files whose path matches a glob pattern, newest first.

Use it to locate files by name or extension ("**/*.test.ts", "src/components/**/*.tsx", "**/package.json"). To search
inside files use Grep; to read a file use Read. When you need several patterns, call Glob for each in the same message.

Patterns are matched against paths relative to the searched directory: "*.ts" only matches files directly in it,
"**/*.ts" matches at any depth. Braces ("*.{js,ts}") and character classes work. Files ignored by .gitignore are
skipped, and so are hidden files and directories unless the pattern names them (".github/**/*.yml").

Parameters:
- pattern: the glob pattern.
- path: the directory to search; omit it for the working directory (do not pass "undefined" or "null").

Result: paths relative to the working directory (absolute for files outside it), one per line, most recently
modified first; at most ${maxResults}, followed by
"${truncatedNote}" when there are more; "No files found" when nothing matches.

Examples of misuse: Glob "*.ts" to find every TypeScript file of a project (use "**/*.ts"); Glob to find text inside
files (use Grep).`

const stripDotSlash = (p: string): string => (p.startsWith("./") ? stripDotSlash(p.slice(2)) : p)

/** Finds the files matching a glob under a directory, newest first (ties by path). */
export const find = (pattern: string, dir: string): Effect.Effect<ReadonlyArray<string>, ToolFailure> =>
  Effect.gen(function* () {
    const absolute = Path.isAbsolute(pattern)
    const scan = picomatch.scan(absolute ? pattern : stripDotSlash(pattern))
    const base = absolute ? scan.base : dir
    const glob = absolute ? scan.glob : stripDotSlash(pattern)
    const prefix = absolute ? "" : scan.base
    const root = Path.join(base, prefix)
    const exists = yield* Effect.promise(() =>
      Fs.stat(root).then(
        (s) => s.isDirectory(),
        () => false
      )
    )
    if (!exists) {
      return absolute || prefix === "" ? yield* new ToolFailure({ message: `Directory does not exist: ${root}` }) : []
    }
    const hidden = /(^|\/)\.[^./]/.test(glob)
    const isMatch = picomatch(glob === "" ? "**" : glob, { dot: hidden })
    const walked = yield* FileWalker.walk({ root, base, hidden }).pipe(
      Effect.mapError((e) => new ToolFailure({ message: e.message }))
    )
    const matches = walked.filter((f) => isMatch(f.relative))
    const dated = yield* Effect.forEach(
      matches,
      (f) =>
        Effect.promise(() =>
          Fs.stat(f.path).then(
            (s) => ({ path: f.path, mtime: s.mtimeMs }),
            () => ({ path: f.path, mtime: 0 })
          )
        ),
      { concurrency: 32 }
    )
    return dated
      .sort((a, b) => b.mtime - a.mtime || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
      .map((d) => d.path)
  })

/** Formats Glob's result, naming files relative to `cwd` when they are under it. */
export const format = (paths: ReadonlyArray<string>, cwd: string): string => {
  if (paths.length === 0) return "No files found"
  const shown = paths.slice(0, maxResults).map((p) => FileWalker.displayPath(cwd, p))
  return paths.length > maxResults ? `${shown.join("\n")}\n${truncatedNote}` : shown.join("\n")
}

/** Makes the Glob tool. */
export const make = Tool.make({
  name: "Glob",
  description,
  input: Input,
  output: Schema.String,
  category: "search",
  searchHint: "find files glob pattern name list",
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  resources: (input) =>
    input.path !== undefined && Path.isAbsolute(input.path) ? [{ key: Path.resolve(input.path), access: "read" }] : [],
  summarize: (input) => input.pattern,
  call: (input, ctx) =>
    Effect.map(find(input.pattern, Path.resolve(ctx.cwd, input.path ?? ".")), (paths) => format(paths, ctx.cwd))
})

/** Registers Glob; requires only ToolRegistry. */
export const layer = ToolRegistryLive.register(make)
