/**
 * The two Grep engines (docs/tools.md, Grep): `rg` when it is on PATH, and a built-in engine (JS RegExp over the files
 * of FileWalker) otherwise. Both produce the same structured matches; one formatter turns them into ripgrep's output.
 */
import * as ChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { Effect, Fiber, Schema } from "effect"
import picomatch from "picomatch"
import type { FileResult, Line, OutputMode, Query } from "../../domain/GrepQuery.js"
import { byRarity, type Compiled, requiredLiterals, searchText, splitText } from "../../domain/LineSearch.js"
import * as FileWalker from "./FileWalker.js"
import * as GrepReader from "./GrepReader.js"

export type { FileResult, Line, OutputMode, Query } from "../../domain/GrepQuery.js"

/** A search failed (bad pattern, unreadable path, rg error). */
export class GrepError extends Schema.TaggedError<GrepError>()("GrepError", { message: Schema.String }) {}

/** The file types `type` accepts, as in ripgrep's `--type-list`. */
export const fileTypes: Readonly<Record<string, ReadonlyArray<string>>> = {
  c: ["*.[chH]", "*.[chH].in", "*.cats"],
  cpp: ["*.[ChH]", "*.[ChH].in", "*.[ch]pp", "*.[ch]pp.in", "*.[ch]xx", "*.[ch]xx.in", "*.cc", "*.cc.in", "*.hh"],
  cs: ["*.cs"],
  css: ["*.css", "*.scss"],
  docker: ["*Dockerfile*"],
  go: ["*.go"],
  html: ["*.ejs", "*.htm", "*.html"],
  java: ["*.java", "*.jsp", "*.jspx", "*.properties"],
  js: ["*.cjs", "*.js", "*.jsx", "*.mjs", "*.vue"],
  json: ["*.json", "composer.lock"],
  kotlin: ["*.kt", "*.kts"],
  lua: ["*.lua"],
  make: ["*.mak", "*.mk", "[Gg][Nn][Uu]makefile", "[Mm]akefile"],
  markdown: ["*.markdown", "*.md", "*.mdown", "*.mkdn"],
  md: ["*.markdown", "*.md", "*.mdown", "*.mkdn"],
  php: ["*.php", "*.php3", "*.php4", "*.php5", "*.phtml"],
  py: ["*.py", "*.pyi"],
  ruby: ["*.gemspec", "*.rb", "*.rbw", "Gemfile", "Rakefile", "config.ru"],
  rust: ["*.rs"],
  scala: ["*.sbt", "*.scala"],
  sh: ["*.bash", "*.bashrc", "*.csh", "*.ksh", "*.sh", "*.tcsh", "*.zsh"],
  sql: ["*.psql", "*.sql"],
  swift: ["*.swift"],
  toml: ["*.toml", "Cargo.lock"],
  ts: ["*.cts", "*.mts", "*.ts", "*.tsx"],
  txt: ["*.txt"],
  xml: ["*.dtd", "*.xml", "*.xsd", "*.xsl", "*.xslt"],
  yaml: ["*.yaml", "*.yml"]
}

/** True when an `rg` executable is on PATH. */
export const hasRg = (): boolean =>
  (process.env.PATH ?? "").split(Path.delimiter).some((dir) => {
    if (dir.length === 0) return false
    try {
      NodeFs.accessSync(Path.join(dir, "rg"), NodeFs.constants.X_OK)
      return true
    } catch {
      return false
    }
  })

/** Compiles the pattern as ripgrep would use it: `^`/`$` at line ends, `.` crossing lines in multiline mode. */
export const compilePattern = (query: Pick<Query, "pattern" | "caseInsensitive" | "multiline">) => {
  const flags = `gm${query.caseInsensitive ? "i" : ""}${query.multiline ? "s" : ""}`
  return Effect.try({
    try: () => new RegExp(query.pattern, `${flags}u`),
    catch: () => undefined
  }).pipe(
    Effect.orElse(() =>
      Effect.try({
        try: () => new RegExp(query.pattern, flags),
        catch: (e) =>
          new GrepError({ message: `Invalid regular expression: ${e instanceof Error ? e.message : String(e)}` })
      })
    )
  )
}

/** Compiles the pattern into its scanning and per-line forms. */
export const compile = (query: Pick<Query, "pattern" | "caseInsensitive" | "multiline">) =>
  Effect.map(
    compilePattern(query),
    (scan): Compiled => ({
      scan,
      line: new RegExp(scan.source, scan.flags.replace("g", ""))
    })
  )

const byPath = (a: FileResult, b: FileResult): number => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)

const typeFilter = (type: string | undefined): ((relative: string) => boolean) | undefined => {
  if (type === undefined) return undefined
  const test = picomatch([...(fileTypes[type] ?? [])], { dot: true })
  return (relative) => test(Path.posix.basename(relative))
}

/** What a search found, and which paths the Read guard kept it from searching. */
export interface Outcome {
  readonly results: ReadonlyArray<FileResult>
  readonly skipped: ReadonlyArray<FileWalker.Skipped>
}

const statPath = (path: string) =>
  Effect.tryPromise({
    try: () => Fs.stat(path),
    catch: () => new GrepError({ message: `Path does not exist: ${path}` })
  })

/** The files a search visits (ripgrep's filters and the guard), or the one file searched. */
const filesOf = (
  query: Query,
  isDirectory: boolean,
  guard: FileWalker.Guard | undefined,
  onProgress?: (files: ReadonlyArray<FileWalker.WalkedFile>) => void
) => {
  if (!isDirectory) {
    const rule = guard?.(query.path, false)
    return Effect.succeed<FileWalker.WalkResult>(
      rule === undefined
        ? { files: [{ path: query.path, relative: Path.basename(query.path) }], skipped: [], denied: [] }
        : { files: [], skipped: [{ rule, count: 1 }], denied: [""] }
    )
  }
  return FileWalker.walk({
    root: query.path,
    hidden: false,
    overrides: query.globs.length > 0 ? FileWalker.compileOverrides(query.globs) : undefined,
    fileFilter: typeFilter(query.type),
    guard,
    onProgress
  }).pipe(Effect.mapError((e) => new GrepError({ message: e.message })))
}

/**
 * The bytes every matching file must contain (see LineSearch.requiredLiterals), rarest first: files without them are
 * not decoded, and lines are looked for by the first.
 */
export const literalsOf = (query: Pick<Query, "pattern" | "caseInsensitive">): ReadonlyArray<Buffer> =>
  byRarity(requiredLiterals(query.pattern, query.caseInsensitive)).map((l) => Buffer.from(l, "latin1"))

/**
 * Walks a directory while worker threads read what it has found so far: the readers start once the walk has found
 * `GrepReader.parallelFrom` files (a smaller tree is read on the calling thread after the walk), so that starting
 * them and most of the reading overlap the rest of the walk. `read` gets every path, in the order found.
 */
const walkAndRead = (
  query: Query,
  guard: FileWalker.Guard | undefined,
  literals: ReadonlyArray<Buffer>,
  linePattern: GrepReader.LinePattern | undefined,
  read: (paths: ReadonlyArray<string>, offset: number, found: ReadonlyArray<GrepReader.Candidate>) => void
): Effect.Effect<FileWalker.WalkResult, GrepError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const paths: Array<string> = []
      let ended = false
      let wake = () => {}
      const feed: GrepReader.Feed = { paths, done: () => ended, subscribe: (f) => (wake = f) }
      const onFound = (offset: number, found: ReadonlyArray<GrepReader.Candidate>) => read(paths, offset, found)
      const enough = Effect.async<void>((resume) => {
        let resumed = false
        const check = () => {
          if (resumed || (paths.length < GrepReader.parallelFrom && !ended)) return
          resumed = true
          resume(Effect.void)
        }
        wake = check
        check()
      })
      const readers = yield* Effect.forkScoped(
        Effect.flatMap(enough, () =>
          paths.length < GrepReader.parallelFrom
            ? Effect.succeed(false)
            : Effect.as(GrepReader.readFed(feed, literals, linePattern, onFound), true)
        )
      )
      const walked = yield* filesOf(query, true, guard, (files) => {
        for (let i = paths.length; i < files.length; i++) paths.push(files[i].path)
        wake()
      })
      ended = true
      wake()
      const parallel = yield* Fiber.join(readers).pipe(
        Effect.mapError((e) => new GrepError({ message: `Search failed: ${e.message}` }))
      )
      if (!parallel) yield* GrepReader.readHere(paths, literals, linePattern, onFound)
      return walked
    })
  )

/**
 * Where the built-in engine reads: worker threads when the machine has a core to spare (`GrepReader.spareCore`) and
 * the tree is large, or always on the calling thread, or on workers whenever the tree is large (tests, benchmarks).
 */
export type Readers = "auto" | "calling" | "workers"

/** The built-in engine: walks with ripgrep's filters and matches with a JS RegExp. */
export const searchBuiltin = (
  query: Query,
  guard?: FileWalker.Guard,
  readers: Readers = "auto"
): Effect.Effect<Outcome, GrepError> =>
  Effect.gen(function* () {
    const compiled = yield* compile(query)
    const info = yield* statPath(query.path)
    const literals = literalsOf(query)
    const results: Array<FileResult> = []
    const linePattern: GrepReader.LinePattern | undefined =
      query.multiline || (query.mode === "content" && (query.before > 0 || query.after > 0))
        ? undefined
        : { source: compiled.line.source, flags: compiled.line.flags, firstOnly: query.mode === "files_with_matches" }
    const match = (paths: ReadonlyArray<string>, offset: number, found: ReadonlyArray<GrepReader.Candidate>) => {
      for (const [index, text] of found) {
        const path = paths[offset + index]
        if (typeof text !== "string") {
          const lines =
            query.mode === "content" ? text.map(([number, t]): Line => ({ number, text: t, match: true })) : []
          results.push({ path, count: text.length, lines })
          continue
        }
        const lines = searchText(text, compiled, query)
        if (lines !== undefined) results.push({ path, ...lines })
      }
    }
    let skipped: ReadonlyArray<FileWalker.Skipped>
    if (info.isDirectory() && (readers === "workers" || (readers === "auto" && GrepReader.spareCore()))) {
      skipped = (yield* walkAndRead(query, guard, literals, linePattern, match)).skipped
    } else {
      const walked = yield* filesOf(query, info.isDirectory(), guard)
      const paths = walked.files.map((file) => file.path)
      yield* GrepReader.readHere(paths, literals, linePattern, (offset, found) => match(paths, offset, found))
      skipped = walked.skipped
    }
    return { results: results.sort(byPath), skipped }
  })

/** The most denied paths passed to rg as exclusion globs; beyond, only the post-filter removes them. */
const maxExcludes = 500

const escapeGlob = (s: string): string => s.replace(/[*?[\]{}\\!]/g, "\\$&")

const rgArgs = (query: Query, excludes: ReadonlyArray<string>): Array<string> => {
  const args = ["--no-config", "--no-require-git", "--no-messages"]
  if (query.caseInsensitive) args.push("-i")
  if (query.multiline) args.push("-U", "--multiline-dotall")
  for (const glob of query.globs) args.push("--glob", glob)
  // Later globs win in ripgrep: these exclusions come after the model's globs so that no glob can re-include them.
  for (const denied of excludes) args.push("--glob", `!/${escapeGlob(denied)}`)
  if (query.type !== undefined) {
    args.push("--type-clear", query.type)
    for (const glob of fileTypes[query.type] ?? []) args.push("--type-add", `${query.type}:${glob}`)
    args.push("--type", query.type)
  }
  if (query.mode === "files_with_matches") args.push("--files-with-matches", "--null")
  else if (query.mode === "count") args.push("--count", "--null", "--with-filename")
  else args.push("--json", "-A", String(query.after), "-B", String(query.before))
  args.push("-e", query.pattern, "--", query.path)
  return args
}

const runRg = (args: ReadonlyArray<string>, cwd: string): Effect.Effect<string, GrepError> =>
  Effect.async<string, GrepError>((resume) => {
    const child = ChildProcess.spawn("rg", args, { cwd, stdio: ["ignore", "pipe", "pipe"] })
    const out: Array<Buffer> = []
    const err: Array<Buffer> = []
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk))
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk))
    child.on("error", (e) => resume(Effect.fail(new GrepError({ message: `Could not run rg: ${e.message}` }))))
    child.on("close", (code) => {
      const stdout = Buffer.concat(out).toString("utf8")
      if (code === 0 || code === 1 || (code === 2 && stdout.length > 0)) resume(Effect.succeed(stdout))
      else
        resume(
          Effect.fail(new GrepError({ message: Buffer.concat(err).toString("utf8").trim() || `rg exited ${code}` }))
        )
    })
    return Effect.sync(() => {
      child.kill("SIGKILL")
    })
  })

interface RgText {
  readonly text?: string
  readonly bytes?: string
}

const rgText = (t: RgText | undefined): string =>
  t === undefined ? "" : t.text !== undefined ? t.text : Buffer.from(t.bytes ?? "", "base64").toString("utf8")

interface RgMessage {
  readonly type: string
  readonly data: { readonly path?: RgText; readonly lines?: RgText; readonly line_number?: number | null }
}

const parseJson = (stdout: string): ReadonlyArray<FileResult> => {
  const files = new Map<string, { count: number; lines: Array<Line> }>()
  for (const raw of stdout.split("\n")) {
    if (raw.length === 0) continue
    const message = JSON.parse(raw) as RgMessage
    if (message.type !== "match" && message.type !== "context") continue
    const path = rgText(message.data.path)
    const entry = files.get(path) ?? { count: 0, lines: [] }
    files.set(path, entry)
    const first = message.data.line_number ?? 0
    const text = rgText(message.data.lines)
    const lines = splitText(text)
    if (message.type === "match") entry.count++
    lines.forEach((line, i) => {
      entry.lines.push({ number: first + i, text: line, match: message.type === "match" })
    })
  }
  return [...files].map(([path, { count, lines }]) => ({ path, count, lines }))
}

const parseRg = (query: Query, stdout: string): Array<FileResult> => {
  if (query.mode === "files_with_matches") {
    return stdout
      .split("\0")
      .filter((p) => p.length > 0)
      .map((path) => ({ path, count: 1, lines: [] }))
  }
  if (query.mode === "count") {
    return stdout
      .split("\n")
      .filter((l) => l.length > 0)
      .map((line) => {
        const at = line.lastIndexOf("\0")
        return { path: line.slice(0, at), count: Number(line.slice(at + 1)), lines: [] }
      })
  }
  return [...parseJson(stdout)]
}

/**
 * The ripgrep engine: runs `rg` and reads its output into the shared structure. With a guard, the tree is first
 * walked with the same filters to find (and count) the denied paths, which rg is told to exclude; its output is
 * filtered through the guard again, so nothing denied is returned even when the tree changes in between.
 */
export const searchRg = (query: Query, guard?: FileWalker.Guard): Effect.Effect<Outcome, GrepError> =>
  Effect.gen(function* () {
    const info = yield* statPath(query.path)
    const isDirectory = info.isDirectory()
    const walked = guard === undefined ? undefined : yield* filesOf(query, isDirectory, guard)
    const skipped = walked?.skipped ?? []
    if (walked?.denied.includes("")) return { results: [], skipped }
    const denied = walked?.denied ?? []
    const excludes = isDirectory && denied.length <= maxExcludes ? denied : []
    // Globs with a "/" are anchored at rg's working directory: run it in the searched directory.
    const stdout = yield* runRg(rgArgs(query, excludes), isDirectory ? query.path : Path.dirname(query.path))
    const parsed = parseRg(query, stdout)
    const results = guard === undefined ? parsed : parsed.filter((r) => guard(r.path, false) === undefined)
    return { results: results.sort(byPath), skipped }
  })

/** Lines longer than this are cut in content output. */
export const maxLineLength = 500

const cut = (text: string): string =>
  text.length > maxLineLength ? `${text.slice(0, maxLineLength)} [... line truncated]` : text

/** Options of the formatter. */
export interface FormatOptions {
  readonly mode: OutputMode
  readonly lineNumbers: boolean
  readonly context: boolean
  /** At most this many output lines (content), files or counts; 0 means no limit. */
  readonly headLimit: number
}

/** Formats results like ripgrep: `path:line:text`, context lines with `-`, `--` between groups; counts; files. */
export const format = (results: ReadonlyArray<FileResult>, options: FormatOptions): string => {
  const limit = options.headLimit > 0 ? options.headLimit : Number.POSITIVE_INFINITY
  const truncated = (shown: number, total: number, what: string) =>
    total > shown
      ? `\n\n(Results are truncated: showing the first ${shown} ${what} of ${total}. Use a more specific pattern, ` +
        "path, glob or type, or raise head_limit.)"
      : ""
  if (options.mode === "files_with_matches") {
    if (results.length === 0) return "No files found"
    const shown = results.slice(0, limit)
    const noun = results.length === 1 ? "file" : "files"
    return (
      `Found ${results.length} ${noun}\n${shown.map((r) => r.path).join("\n")}` +
      truncated(shown.length, results.length, "files")
    )
  }
  if (options.mode === "count") {
    if (results.length === 0) return "No matches found"
    const shown = results.slice(0, limit)
    const total = results.reduce((n, r) => n + r.count, 0)
    const noun = results.length === 1 ? "file" : "files"
    return (
      shown.map((r) => `${r.path}:${r.count}`).join("\n") +
      truncated(shown.length, results.length, "files") +
      `\n\nFound ${total} total ${total === 1 ? "occurrence" : "occurrences"} across ${results.length} ${noun}.`
    )
  }
  const out: Array<string> = []
  for (const result of results) {
    let previous = -1
    for (const line of result.lines) {
      if (options.context && out.length > 0 && line.number !== previous + 1) out.push("--")
      const sep = line.match ? ":" : "-"
      const number = options.lineNumbers ? `${line.number}${sep}` : ""
      out.push(`${result.path}${sep}${number}${cut(line.text)}`)
      previous = line.number
    }
  }
  if (out.length === 0) return "No matches found"
  const shown = out.slice(0, limit)
  return shown.join("\n") + truncated(shown.length, out.length, "lines")
}
