/**
 * Glob: finds files by name pattern (docs/tools.md), honouring .gitignore files, newest first, at most 100 paths.
 */
import * as Path from "node:path"
import { Effect, Option, Schema } from "effect"
import picomatch from "picomatch"
import * as Tool from "../../domain/Tool.js"
import * as FileAccess from "../files/FileAccess.js"
import * as FileWalker from "../files/FileWalker.js"
import * as ReadGuardLive from "../permissions/ReadGuardLive.js"
import * as ToolRegistryLive from "../registry/ToolRegistryLive.js"
import { searchFlags } from "./SearchTool.js"

/** The most paths returned. */
export const maxResults = 100

/** The note added when more than `maxResults` files match. */
const truncatedNote = "(Results are truncated. Consider using a more specific path or pattern.)"

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
"${truncatedNote}" when there are more; "No files found" when nothing matches. Paths the Read deny rules
forbid are left out, and a note says how many and which rule.

Examples of misuse: Glob "*.ts" to find every TypeScript file of a project (use "**/*.ts"); Glob to find text inside
files (use Grep).`

const stripDotSlash = (p: string): string => (p.startsWith("./") ? stripDotSlash(p.slice(2)) : p)

/** What Glob found: paths newest first (ties by path), and what the Read guard kept it from listing. */
export interface Found {
  readonly paths: ReadonlyArray<string>
  readonly skipped: ReadonlyArray<FileWalker.Skipped>
}

/** The directory a pattern is walked from, the directory its paths are relative to, and the glob left. */
const rootOf = (pattern: string, dir: string) => {
  const absolute = Path.isAbsolute(pattern)
  const scan = picomatch.scan(absolute ? pattern : stripDotSlash(pattern))
  const base = absolute ? scan.base : dir
  const prefix = absolute ? "" : scan.base
  return { root: Path.join(base, prefix), base, glob: absolute ? scan.glob : stripDotSlash(pattern), absolute, prefix }
}

/** Finds the files matching a glob under a directory, newest first (ties by path), skipping what `guard` denies. */
const findGuarded = (
  pattern: string,
  dir: string,
  guard?: FileWalker.Guard
): Effect.Effect<Found, FileAccess.FileError> =>
  Effect.gen(function* () {
    const { absolute, base, glob, prefix, root } = rootOf(pattern, dir)
    const exists = yield* FileAccess.stat(root).pipe(
      Effect.map((found) => Option.isSome(found) && found.value.isDirectory()),
      Effect.orElseSucceed(() => false)
    )
    if (!exists) {
      return absolute || prefix === ""
        ? yield* new FileAccess.FileError({ message: `Directory does not exist: ${root}` })
        : { paths: [], skipped: [] }
    }
    const hidden = /(^|\/)\.[^./]/.test(glob)
    const isMatch = picomatch(glob === "" ? "**" : glob, { dot: hidden })
    const walked = yield* FileWalker.walk({ root, base, hidden, guard })
    const dated: Array<{ readonly path: string; readonly mtime: number }> = []
    yield* Effect.promise((signal) =>
      FileWalker.sliced(
        walked.files,
        (f) => {
          if (isMatch(f.relative)) dated.push({ path: f.path, mtime: FileWalker.mtimeNow(f.path) })
        },
        signal
      )
    )
    const paths = dated
      .sort((a, b) => b.mtime - a.mtime || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
      .map((d) => d.path)
    return { paths, skipped: walked.skipped }
  })

/** Finds the files matching a glob under a directory, newest first (ties by path). */
export const find = (pattern: string, dir: string): Effect.Effect<ReadonlyArray<string>, FileAccess.FileError> =>
  Effect.map(findGuarded(pattern, dir), (found) => found.paths)

/** Formats Glob's result, naming files relative to `cwd` when they are under it; notes what was skipped. */
export const format = (paths: ReadonlyArray<string>, cwd: string, skipped: ReadonlyArray<FileWalker.Skipped> = []) => {
  const note = FileWalker.skippedNote(skipped)
  const shown = paths.slice(0, maxResults).map((p) => FileWalker.displayPath(cwd, p))
  const body =
    paths.length === 0
      ? "No files found"
      : paths.length > maxResults
        ? `${shown.join("\n")}\n${truncatedNote}`
        : shown.join("\n")
  return note === "" ? body : `${body}\n\n${note}`
}

/** Makes the Glob tool; it skips what the Read deny rules forbid (see ReadGuardLive.current). */
export const make = Effect.flatMap(ReadGuardLive.current, (readGuard) =>
  Tool.make({
    name: "Glob",
    description,
    input: Input,
    output: Schema.String,
    failure: FileAccess.FileError,
    category: "search",
    searchHint: "find files glob pattern name list",
    ...searchFlags,
    summarize: (input) => input.pattern,
    call: (input, ctx) =>
      Effect.gen(function* () {
        const dir = Path.resolve(ctx.cwd, input.path ?? ".")
        const guard = yield* readGuard.forSearch({ tool: "Glob", root: rootOf(input.pattern, dir).root, cwd: ctx.cwd })
        const found = yield* findGuarded(input.pattern, dir, guard)
        return format(found.paths, ctx.cwd, found.skipped)
      })
  })
)

/** Registers Glob; requires only ToolRegistry. */
export const layer = ToolRegistryLive.register(make)
