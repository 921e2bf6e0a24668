/**
 * A directory walker with ripgrep's filtering rules, shared by Glob and the built-in Grep engine: `.gitignore`,
 * `.ignore` and `.rgignore` files (in the searched tree and its parent directories, nested ones taking precedence),
 * hidden entries skipped, glob overrides (`-g`, which win over ignore files) and file types. Symbolic links are not
 * followed; `.git` is never entered.
 */
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { Effect } from "effect"
import ignore, { type Ignore } from "ignore"
import picomatch from "picomatch"
import { FileError } from "./FileAccess.js"

/** One file found by the walk. */
export interface WalkedFile {
  /** Absolute path. */
  readonly path: string
  /** Path relative to the walk's root, with `/` separators. */
  readonly relative: string
}

/** A compiled set of `-g` globs: the last matching glob decides; `!glob` excludes. */
export interface Overrides {
  readonly match: (relative: string, isDir: boolean) => "include" | "exclude" | "none"
  readonly hasIncludes: boolean
}

/** What the walk keeps. */
export interface WalkOptions {
  /** The directory to walk (absolute). */
  readonly root: string
  /** Paths are matched and reported relative to this directory (absolute; default: root). */
  readonly base?: string | undefined
  /** Enter hidden directories and keep hidden files. */
  readonly hidden: boolean
  readonly overrides?: Overrides | undefined
  /** Keeps only files whose name passes (e.g. a file type); directories are not filtered. */
  readonly fileFilter?: ((relative: string) => boolean) | undefined
}

const ignoreFileNames = [".gitignore", ".ignore", ".rgignore"]

interface Matcher {
  readonly dir: string
  readonly rules: Ignore
}

const loadMatcher = async (dir: string): Promise<Matcher | undefined> => {
  let rules: Ignore | undefined
  for (const name of ignoreFileNames) {
    const text = await Fs.readFile(Path.join(dir, name), "utf8").catch(() => undefined)
    if (text !== undefined) rules = (rules ?? ignore({ allowRelativePaths: true })).add(text)
  }
  return rules === undefined ? undefined : { dir, rules }
}

const exists = (path: string): Promise<boolean> =>
  Fs.stat(path).then(
    () => true,
    () => false
  )

/** Ignore files of the parent directories, up to the enclosing git repository's root (or the filesystem root). */
const parentMatchers = async (root: string): Promise<ReadonlyArray<Matcher>> => {
  const found: Array<Matcher> = []
  let dir = root
  while (true) {
    if (await exists(Path.join(dir, ".git"))) break
    const parent = Path.dirname(dir)
    if (parent === dir) break
    dir = parent
    const matcher = await loadMatcher(dir)
    // A parent's rules that ignore the searched directory itself would ignore everything below it (the `ignore`
    // package also tests parent paths); ripgrep searches an explicitly given directory, so such a matcher is dropped.
    if (matcher !== undefined && !matcher.rules.test(`${toPosix(Path.relative(dir, root))}/`).ignored) {
      found.unshift(matcher)
    }
  }
  return found
}

/**
 * How a search result names a file: relative to the working directory when the file is under it (as ripgrep prints
 * paths searched from there), absolute otherwise.
 */
export const displayPath = (cwd: string, path: string): string => {
  const relative = Path.relative(cwd, path)
  return relative === "" || relative.startsWith("..") || Path.isAbsolute(relative) ? path : relative
}

const toPosix = (p: string): string => (Path.sep === "/" ? p : p.split(Path.sep).join("/"))

/** Decides with the ignore files, deepest first: ignored, explicitly whitelisted, or no opinion. */
const ignoreVerdict = (
  matchers: ReadonlyArray<Matcher>,
  path: string,
  isDir: boolean
): "ignore" | "whitelist" | "none" => {
  for (let i = matchers.length - 1; i >= 0; i--) {
    const matcher = matchers[i]
    const relative = toPosix(Path.relative(matcher.dir, path))
    if (relative === "" || relative.startsWith("..")) continue
    const result = matcher.rules.test(isDir ? `${relative}/` : relative)
    if (result.ignored) return "ignore"
    if (result.unignored) return "whitelist"
  }
  return "none"
}

/**
 * Compiles `-g` globs with ripgrep's rules: a glob without `/` matches the name at any depth, one with `/` matches the
 * path relative to the searched directory; globs match hidden names; a later glob wins over an earlier one.
 */
export const compileOverrides = (globs: ReadonlyArray<string>): Overrides => {
  const compiled = globs.map((raw) => {
    const exclude = raw.startsWith("!")
    const glob = exclude ? raw.slice(1) : raw
    const anchored = glob.includes("/")
    const pattern = glob.startsWith("/") ? glob.slice(1) : glob
    const test = picomatch(pattern, { dot: true })
    return { exclude, test: (relative: string) => test(anchored ? relative : Path.posix.basename(relative)) }
  })
  return {
    hasIncludes: compiled.some((g) => !g.exclude),
    match: (relative) => {
      for (let i = compiled.length - 1; i >= 0; i--) {
        if (compiled[i].test(relative)) return compiled[i].exclude ? "exclude" : "include"
      }
      return "none"
    }
  }
}

/** Splits a `glob` parameter into globs: whitespace or commas separate them, except inside braces. */
export const splitGlobs = (value: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  let depth = 0
  let current = ""
  for (const ch of value) {
    if (ch === "{") depth++
    if (ch === "}") depth = Math.max(0, depth - 1)
    if (depth === 0 && (ch === "," || /\s/.test(ch))) {
      if (current.length > 0) out.push(current)
      current = ""
    } else current += ch
  }
  if (current.length > 0) out.push(current)
  return out
}

const walkAsync = async (options: WalkOptions, signal: AbortSignal): Promise<ReadonlyArray<WalkedFile>> => {
  const base = options.base ?? options.root
  const files: Array<WalkedFile> = []
  const inherited = await parentMatchers(options.root)
  const overrides = options.overrides
  const visit = async (dir: string, matchers: ReadonlyArray<Matcher>): Promise<void> => {
    if (signal.aborted) return
    const own = await loadMatcher(dir)
    const active = own === undefined ? matchers : [...matchers, own]
    const entries = await Fs.readdir(dir, { withFileTypes: true }).catch(() => [])
    const subdirs: Array<string> = []
    for (const entry of entries) {
      const isDir = entry.isDirectory()
      if (!isDir && !entry.isFile()) continue
      if (isDir && entry.name === ".git") continue
      const path = Path.join(dir, entry.name)
      const relative = toPosix(Path.relative(base, path))
      const forced = overrides === undefined ? "none" : overrides.match(relative, isDir)
      if (forced === "exclude") continue
      if (forced === "none") {
        if (!isDir && overrides !== undefined && overrides.hasIncludes) continue
        const verdict = ignoreVerdict(active, path, isDir)
        if (verdict === "ignore") continue
        if (verdict === "none" && !options.hidden && entry.name.startsWith(".")) continue
        if (!isDir && options.fileFilter !== undefined && !options.fileFilter(relative)) continue
      }
      if (isDir) subdirs.push(path)
      else files.push({ path, relative })
    }
    for (let i = 0; i < subdirs.length; i += 16) {
      await Promise.all(subdirs.slice(i, i + 16).map((sub) => visit(sub, active)))
    }
  }
  await visit(options.root, inherited)
  return files
}

/** Walks a directory tree and returns the files kept by the filters, in no particular order. */
export const walk = (options: WalkOptions): Effect.Effect<ReadonlyArray<WalkedFile>, FileError> =>
  Effect.tryPromise({
    try: (signal) => walkAsync(options, signal),
    catch: (e) => new FileError({ message: e instanceof Error ? e.message : String(e) })
  })
