/**
 * Grep: searches file contents with ripgrep's semantics and output (docs/tools.md). Runs `rg` when it is on PATH, else
 * the built-in engine of GrepEngine; both give the same output.
 */
import * as Path from "node:path"
import { Effect, Schema } from "effect"
import { ToolValidationError } from "../../domain/Errors.js"
import * as Tool from "../../domain/Tool.js"
import * as FileWalker from "../files/FileWalker.js"
import * as GrepEngine from "../files/GrepEngine.js"
import * as ReadGuardLive from "../permissions/ReadGuardLive.js"
import * as ToolRegistryLive from "../registry/ToolRegistryLive.js"
import { searchFlags } from "./SearchTool.js"

/** Output entries (lines, files or counts) returned when head_limit is not given. */
const defaultHeadLimit = 250

const count = Schema.Number.pipe(Schema.int(), Schema.nonNegative())

const Input = Schema.Struct({
  pattern: Schema.String.annotations({
    description: 'The regular expression to search for (ripgrep syntax, e.g. "log.*Error", "function\\s+\\w+").'
  }),
  path: Schema.optional(
    Schema.String.annotations({
      description:
        "The file or directory to search (absolute, or relative to the working directory). Default: the working directory."
    })
  ),
  glob: Schema.optional(
    Schema.String.annotations({
      description:
        'Only search files matching this glob (rg --glob), e.g. "*.ts", "*.{ts,tsx}", "src/**/*.go", "!*.min.js".'
    })
  ),
  type: Schema.optional(
    Schema.String.annotations({
      description: "Only search files of this type (rg --type), e.g. js, ts, py, rust, go, java, md, json."
    })
  ),
  output_mode: Schema.optional(
    Schema.Literal("content", "files_with_matches", "count").annotations({
      description:
        '"files_with_matches" (default): the paths of matching files; "content": the matching lines; "count": matches per file.'
    })
  ),
  "-i": Schema.optional(Schema.Boolean.annotations({ description: "Case-insensitive search (rg -i)." })),
  "-n": Schema.optional(
    Schema.Boolean.annotations({ description: "Show line numbers (rg -n); content mode only. Default true." })
  ),
  "-A": Schema.optional(count.annotations({ description: "Lines of context after each match; content mode only." })),
  "-B": Schema.optional(count.annotations({ description: "Lines of context before each match; content mode only." })),
  "-C": Schema.optional(
    count.annotations({ description: "Lines of context before and after each match; content mode only." })
  ),
  multiline: Schema.optional(
    Schema.Boolean.annotations({
      description: "Let the pattern span lines and `.` match newlines (rg -U --multiline-dotall). Default false."
    })
  ),
  head_limit: Schema.optional(
    count.annotations({
      description: `Return at most this many output lines (content), files or counts. Default ${defaultHeadLimit}; 0 for no limit.`
    })
  )
})

/** Grep's decoded input. */
export type Input = typeof Input.Type

const description = `Searches the contents of files with regular expressions, like ripgrep (rg).

Use it to find where something is defined or used, which files mention a term, or how often. ALWAYS use Grep for
content search: never run grep or rg through Bash. To find files by name use Glob; to read a file you already know,
use Read. For open-ended searches that need several rounds, narrow down with glob/type and files_with_matches first.

It skips files ignored by .gitignore (and .ignore) files, hidden files and directories, and binary files.

Parameters:
- pattern: a regular expression (ripgrep syntax). Escape special characters to search literally: "interface\\{\\}"
  for "interface{}", "\\.then\\(" for ".then(".
- path: a file or directory to search; default the working directory.
- glob: only files matching the glob ("*.ts", "*.{ts,tsx}", "src/**/*.rs"); a glob without "/" matches file names at
  any depth; several globs separated by spaces or commas; "!glob" excludes.
- type: a file type, more efficient than glob for standard languages: ${Object.keys(GrepEngine.fileTypes).join(", ")}.
- output_mode: "files_with_matches" (default) lists matching files; "content" shows matching lines; "count" shows the
  number of matching lines per file.
- -i: case-insensitive. -n: line numbers in content mode (default true).
- -A / -B / -C: lines of context after / before / around each match, in content mode.
- multiline: let a match span lines ("struct \\{[\\s\\S]*?field"); "." then also matches newlines.
- head_limit: at most this many output lines, files or counts (default ${defaultHeadLimit}; 0 = no limit).

Result:
Paths are relative to the working directory (absolute for files outside it).
- files_with_matches: "Found N files" then one path per line, sorted; "No files found" when none.
- content: "path:line:text" per matching line (context lines "path-line-text", groups separated by "--"); lines
  longer than ${GrepEngine.maxLineLength} characters are cut; "No matches found" when none.
- count: "path:N" per file, then the total.
A note says when head_limit cut the output, and another how many paths were skipped because a Read deny rule forbids
reading them (and which rule).

Examples of misuse: Bash "grep -r foo ."; a huge content search with no glob/type/path when you only need file names.`

/** Which engine Grep runs. */
export type Engine = "rg" | "builtin"

/** The engine chosen from `ARMATURE_GREP_ENGINE` (rg|builtin), else `rg` when it is on PATH. */
const defaultEngine = (): Engine => {
  const forced = process.env.ARMATURE_GREP_ENGINE
  if (forced === "rg" || forced === "builtin") return forced
  return GrepEngine.hasRg() ? "rg" : "builtin"
}

/** Turns a decoded input into an engine query. */
export const toQuery = (input: Input, cwd: string): GrepEngine.Query => {
  const mode = input.output_mode ?? "files_with_matches"
  const context = mode === "content" ? (input["-C"] ?? 0) : 0
  return {
    pattern: input.pattern,
    path: Path.resolve(cwd, input.path ?? "."),
    globs: input.glob === undefined ? [] : FileWalker.splitGlobs(input.glob),
    type: input.type,
    mode,
    caseInsensitive: input["-i"] === true,
    multiline: input.multiline === true,
    before: mode === "content" ? (input["-B"] ?? context) : 0,
    after: mode === "content" ? (input["-A"] ?? context) : 0
  }
}

/** Runs a search with the given engine and formats it for the model; `guard` skips what Read may not read. */
export const search = (
  engine: Engine,
  input: Input,
  cwd: string,
  guard?: FileWalker.Guard
): Effect.Effect<string, GrepEngine.GrepError> => {
  const query = toQuery(input, cwd)
  const run = engine === "rg" ? GrepEngine.searchRg(query, guard) : GrepEngine.searchBuiltin(query, guard)
  return Effect.map(run, ({ results, skipped }) => {
    const body = GrepEngine.format(
      results.map((r) => ({ ...r, path: FileWalker.displayPath(cwd, r.path) })),
      {
        mode: query.mode,
        lineNumbers: input["-n"] ?? true,
        context: query.before > 0 || query.after > 0,
        headLimit: input.head_limit ?? defaultHeadLimit
      }
    )
    const note = FileWalker.skippedNote(skipped)
    return note === "" ? body : `${body}\n\n${note}`
  })
}

/** Makes Grep with a given engine; it skips what the Read deny rules forbid (see ReadGuardLive.current). */
export const makeWith = (engine: Engine) =>
  Effect.flatMap(ReadGuardLive.current, (readGuard) =>
    Tool.make({
      name: "Grep",
      description,
      input: Input,
      output: Schema.String,
      failure: GrepEngine.GrepError,
      category: "search",
      searchHint: "search grep ripgrep rg find text regex content",
      ...searchFlags,
      summarize: (input) => input.pattern,
      validate: (input) =>
        input.type !== undefined && GrepEngine.fileTypes[input.type] === undefined
          ? Effect.fail(
              new ToolValidationError({
                message: `Unknown file type "${input.type}". Known types: ${Object.keys(GrepEngine.fileTypes).join(", ")}.`
              })
            )
          : Effect.void,
      call: (input, ctx) =>
        Effect.flatMap(
          readGuard.forSearch({ tool: "Grep", root: Path.resolve(ctx.cwd, input.path ?? "."), cwd: ctx.cwd }),
          (guard) => search(engine, input, ctx.cwd, guard)
        )
    })
  )

/** Makes Grep with the engine chosen at build time (see `defaultEngine`). */
export const make = Effect.suspend(() => makeWith(defaultEngine()))

/** Registers Grep; requires only ToolRegistry. */
export const layer = ToolRegistryLive.register(make)
