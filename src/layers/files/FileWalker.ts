/**
 * A directory walker with ripgrep's filtering rules, shared by Glob and the built-in Grep engine: `.gitignore`,
 * `.ignore` and `.rgignore` files (in the searched tree and its parent directories, nested ones taking precedence),
 * hidden entries skipped, glob overrides (`-g`, which win over ignore files) and file types. Symbolic links are not
 * followed; `.git` is never entered.
 */
import * as NodeFs from "node:fs"
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
  /** The Read deny guard: paths it names a rule for are skipped (a directory with everything below it). */
  readonly guard?: Guard | undefined
  /**
   * Called with the files kept so far (one array that only grows) each time the walk pauses, and once at its end:
   * a search can start reading before the walk is over.
   */
  readonly onProgress?: ((files: ReadonlyArray<WalkedFile>) => void) | undefined
}

/** The rule (as shown to the model) that forbids reading an absolute path, or undefined. */
export type Guard = (path: string, isDirectory: boolean) => string | undefined

/** How many paths one rule made the walk skip (a skipped directory counts once). */
export interface Skipped {
  readonly rule: string
  readonly count: number
}

/** The files kept by a walk, and what the guard skipped. */
export interface WalkResult {
  readonly files: ReadonlyArray<WalkedFile>
  readonly skipped: ReadonlyArray<Skipped>
  /** The skipped entries (the topmost ones: a skipped directory, not what is under it), relative to the base. */
  readonly denied: ReadonlyArray<string>
}

/** The note telling the model that denied paths were left out, or "" when none were. */
export const skippedNote = (skipped: ReadonlyArray<Skipped>): string => {
  const part = (list: ReadonlyArray<Skipped>, what: string, strip: number) => {
    const total = list.reduce((n, s) => n + s.count, 0)
    return `${total} ${total === 1 ? "path" : "paths"} skipped: ${what} ${list.map((s) => s.rule.slice(strip)).join("; ")}`
  }
  // Ask rules' labels start with "ask:" (ReadGuardLive.askLabel).
  const asked = skipped.filter((s) => s.rule.startsWith("ask:"))
  const denied = skipped.filter((s) => !s.rule.startsWith("ask:"))
  const parts = [
    ...(denied.length > 0 ? [part(denied, "denied by", 0)] : []),
    ...(asked.length > 0 ? [part(asked, "reading them needs approval (use Read to ask) by", 4)] : [])
  ]
  return parts.length === 0 ? "" : `(${parts.join("; ")})`
}

const ignoreFileNames = [".gitignore", ".ignore", ".rgignore"]

type Verdict = "ignore" | "whitelist" | "none"

interface Matcher {
  readonly dir: string
  readonly rules: Ignore
  /**
   * Set when every rule is a bare name (no `/` but a trailing one): then a path's verdict depends only on its name
   * and whether it is a directory, and is computed once per name.
   */
  readonly byName: Map<string, Verdict> | undefined
}

/** Whether a gitignore line is a comment, blank, or a pattern without a `/` other than a trailing one. */
const isNameRule = (line: string): boolean => {
  const pattern = line.trim()
  if (pattern === "" || pattern.startsWith("#")) return true
  const body = pattern.startsWith("!") ? pattern.slice(1) : pattern
  return !(body.endsWith("/") ? body.slice(0, -1) : body).includes("/")
}

/** Reads the ignore files of `dir`; `present` tells which exist (from the directory listing), undefined = try all. */
const loadMatcherSync = (dir: string, present?: ReadonlySet<string>): Matcher | undefined => {
  let rules: Ignore | undefined
  let byName = true
  for (const name of ignoreFileNames) {
    if (present !== undefined && !present.has(name)) continue
    let text: string | undefined
    try {
      text = NodeFs.readFileSync(Path.join(dir, name), "utf8")
    } catch {
      text = undefined
    }
    if (text === undefined) continue
    rules = (rules ?? ignore({ allowRelativePaths: true })).add(text)
    byName = byName && text.split(/\r?\n/).every(isNameRule)
  }
  return rules === undefined ? undefined : { dir, rules, byName: byName ? new Map() : undefined }
}

const existsSync = (path: string): boolean => {
  try {
    NodeFs.statSync(path)
    return true
  } catch {
    return false
  }
}

/** Ignore files of the parent directories, up to the enclosing git repository's root (or the filesystem root). */
const parentMatchers = (root: string): ReadonlyArray<Matcher> => {
  const found: Array<Matcher> = []
  let dir = root
  while (true) {
    if (existsSync(Path.join(dir, ".git"))) break
    const parent = Path.dirname(dir)
    if (parent === dir) break
    dir = parent
    const matcher = loadMatcherSync(dir)
    // Rules of bare names are tested on names only, never on the searched directory or the ones above it.
    if (matcher !== undefined) {
      found.unshift(
        matcher.byName === undefined ? reincludingRoot(matcher, toPosix(Path.relative(dir, root))) : matcher
      )
    }
  }
  return found
}

/** Escapes the characters a gitignore pattern gives a meaning to, so that a name matches only itself. */
const escapeIgnore = (name: string): string => name.replace(/[\\*?[\]!#]/g, "\\$&")

/**
 * A parent directory's rules apply below the searched directory but never to it or to the directories between them:
 * ripgrep searches an explicitly given directory even when a parent's `node_modules/` would ignore it, and still
 * applies that parent's `dist/` (or `node_modules/`, to a nested one) below it. The `ignore` package tests a path's
 * parents too, so the searched directory and the ones above it (up to the ignore file's directory) are re-included
 * by anchored rules added last; they name only those directories, which the walk itself never tests.
 */
const reincludingRoot = (matcher: Matcher, rootRelative: string): Matcher => {
  const segments = rootRelative.split("/").map(escapeIgnore)
  const rules = segments.map((_, i) => `!/${segments.slice(0, i + 1).join("/")}/`)
  return { dir: matcher.dir, rules: matcher.rules.add(rules), byName: undefined }
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

/** `path` relative to `dir` with `/` separators, or undefined when it is not strictly below `dir`. */
const relativeUnder = (dir: string, path: string): string | undefined => {
  if (path.length > dir.length && path.startsWith(dir) && (path[dir.length] === Path.sep || dir.endsWith(Path.sep))) {
    return toPosix(path.slice(dir.endsWith(Path.sep) ? dir.length : dir.length + 1))
  }
  const relative = toPosix(Path.relative(dir, path))
  return relative === "" || relative.startsWith("..") || Path.isAbsolute(relative) ? undefined : relative
}

/** What one matcher says of a path (`name` is its last segment). */
const verdictOf = (matcher: Matcher, path: string, name: string, isDir: boolean): Verdict => {
  const memo = matcher.byName
  if (memo !== undefined) {
    const key = isDir ? `${name}/` : name
    const known = memo.get(key)
    if (known !== undefined) return known
    const result = matcher.rules.test(key)
    const verdict = result.ignored ? "ignore" : result.unignored ? "whitelist" : "none"
    memo.set(key, verdict)
    return verdict
  }
  const relative = relativeUnder(matcher.dir, path)
  if (relative === undefined) return "none"
  const result = matcher.rules.test(isDir ? `${relative}/` : relative)
  return result.ignored ? "ignore" : result.unignored ? "whitelist" : "none"
}

/** Decides with the ignore files, deepest first: ignored, explicitly whitelisted, or no opinion. */
const ignoreVerdict = (matchers: ReadonlyArray<Matcher>, path: string, name: string, isDir: boolean): Verdict => {
  for (let i = matchers.length - 1; i >= 0; i--) {
    const verdict = verdictOf(matchers[i], path, name, isDir)
    if (verdict !== "none") return verdict
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

/** Runs synchronous work in slices of about this many milliseconds, yielding to the event loop between them. */
export const sliceMs = 8

/**
 * A file's modification time now (0 when it cannot be read), synchronously: Glob sorts thousands of matches by it,
 * between the slices of `sliced`, where an asynchronous stat per file would cost more than the walk.
 */
export const mtimeNow = (path: string): number => {
  try {
    return NodeFs.statSync(path).mtimeMs
  } catch {
    return 0
  }
}

const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/**
 * Calls `f` on every item synchronously (fast: no promise per file), yielding to the event loop every `sliceMs`
 * milliseconds so that other fibers and timers keep running; stops early when `signal` is aborted.
 */
export const sliced = async <A>(items: ReadonlyArray<A>, f: (a: A) => void, signal: AbortSignal): Promise<void> => {
  let deadline = performance.now() + sliceMs
  for (let i = 0; i < items.length; i++) {
    f(items[i])
    if ((i & 15) === 15 && performance.now() > deadline) {
      await yieldToLoop()
      if (signal.aborted) return
      deadline = performance.now() + sliceMs
    }
  }
}

/** Counts what the Read guard skipped, by rule. */
const countSkip = (skipped: Map<string, number>, rule: string) => skipped.set(rule, (skipped.get(rule) ?? 0) + 1)

/** The skipped counts as a list, in the order the rules were first hit. */
const skippedList = (skipped: Map<string, number>): ReadonlyArray<Skipped> =>
  [...skipped].map(([rule, count]) => ({ rule, count }))

const walkSliced = async (options: WalkOptions, signal: AbortSignal): Promise<WalkResult> => {
  const base = options.base ?? options.root
  const files: Array<WalkedFile> = []
  const skipped = new Map<string, number>()
  const denied: Array<string> = []
  const overrides = options.overrides
  const guard = options.guard
  const rootRule = guard?.(options.root, true)
  if (rootRule !== undefined) {
    countSkip(skipped, rootRule)
    return { files, skipped: skippedList(skipped), denied: [""] }
  }
  const pending: Array<{ readonly dir: string; readonly matchers: ReadonlyArray<Matcher> }> = [
    { dir: options.root, matchers: parentMatchers(options.root) }
  ]
  let deadline = performance.now() + sliceMs
  while (pending.length > 0) {
    if (performance.now() > deadline) {
      options.onProgress?.(files)
      await yieldToLoop()
      if (signal.aborted) break
      deadline = performance.now() + sliceMs
    }
    const { dir, matchers } = pending.pop()!
    let entries: Array<NodeFs.Dirent>
    try {
      entries = NodeFs.readdirSync(dir, { withFileTypes: true })
    } catch {
      continue
    }
    const names = new Set<string>()
    for (const entry of entries) if (entry.name.startsWith(".")) names.add(entry.name)
    const own = ignoreFileNames.some((n) => names.has(n)) ? loadMatcherSync(dir, names) : undefined
    const active = own === undefined ? matchers : [...matchers, own]
    const prefix = dir === base ? "" : `${relativeUnder(base, dir) ?? toPosix(Path.relative(base, dir))}/`
    for (const entry of entries) {
      const isDir = entry.isDirectory()
      if (!isDir && !entry.isFile()) continue
      if (isDir && entry.name === ".git") continue
      const path = dir.endsWith(Path.sep) ? dir + entry.name : dir + Path.sep + entry.name
      const relative = prefix + entry.name
      const forced = overrides === undefined ? "none" : overrides.match(relative, isDir)
      if (forced === "exclude") continue
      if (forced === "none") {
        if (!isDir && overrides !== undefined && overrides.hasIncludes) continue
        // Each test only drops the entry, so the cheap file filter goes before the ignore files.
        if (!isDir && options.fileFilter !== undefined && !options.fileFilter(relative)) continue
        if (active.length > 0) {
          const verdict = ignoreVerdict(active, path, entry.name, isDir)
          if (verdict === "ignore") continue
          if (verdict === "none" && !options.hidden && entry.name.startsWith(".")) continue
        } else if (!options.hidden && entry.name.startsWith(".")) continue
      }
      const rule = guard?.(path, isDir)
      if (rule !== undefined) {
        countSkip(skipped, rule)
        denied.push(relative)
      } else if (isDir) pending.push({ dir: path, matchers: active })
      else files.push({ path, relative })
    }
  }
  options.onProgress?.(files)
  return { files, skipped: skippedList(skipped), denied }
}

/**
 * Walks a directory tree and returns the files kept by the filters, in no particular order, with what the Read
 * guard skipped. Synchronous file-system calls run in short slices between which the event loop runs.
 */
export const walk = (options: WalkOptions): Effect.Effect<WalkResult, FileError> =>
  Effect.tryPromise({
    try: (signal) => walkSliced(options, signal),
    catch: (e) => new FileError({ message: e instanceof Error ? e.message : String(e) })
  })
