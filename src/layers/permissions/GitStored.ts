/**
 * What a git content command can print: the paths git stores for a repository — the index and every path in the
 * history reachable from any ref or reflog entry. A gitignored `.env` that was never committed is in neither, so
 * `git diff`, `git show` or `git grep` cannot print it. Asked of git itself when a call is decided, bounded in time
 * and size; any failure (not a repository, git missing, too slow, too large) gives `undefined`, and the caller then
 * treats every path under the repository as printable. Answers are kept for the life of the process and reused
 * while git's inputs are unchanged (see GitStamps): an agent's session asks about the same repository all day.
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as GitStamps from "./GitStamps.js"

/** The most bytes of names one query may return before the answer counts as unknown. */
const maxBuffer = 16 * 1024 * 1024
/** The most time one query may take. */
const timeout = 5_000

/** Configuration that keeps git from starting any program while it answers (fsmonitor, signatures, pagers). */
const safeConfig = [
  "-c",
  "core.fsmonitor=false",
  "-c",
  "core.untrackedCache=false",
  "-c",
  "log.showSignature=false",
  "--no-pager",
  "--no-optional-locks"
]

const git = (cwd: string, args: ReadonlyArray<string>): string | undefined => {
  try {
    return ChildProcess.execFileSync("git", [...safeConfig, ...args], {
      cwd,
      encoding: "utf8",
      maxBuffer,
      timeout,
      stdio: ["ignore", "pipe", "ignore"],
      env: { ...process.env, GIT_TERMINAL_PROMPT: "0", GIT_OPTIONAL_LOCKS: "0" }
    })
  } catch {
    return undefined
  }
}

/** Where a repository is: its top directory and its git directories (own and common), as git says. */
interface Location {
  readonly top: string
  readonly gitDirs: ReadonlyArray<string>
}

const locations = new Map<string, { readonly stamp: string; readonly location: Location | undefined }>()

/** The repository holding a directory, or undefined when it is not in one (kept while discovery's stamp holds). */
const locate = (dir: string): Location | undefined => {
  const stamp = GitStamps.discovery(dir)
  const kept = locations.get(dir)
  if (kept !== undefined && kept.stamp === stamp) return kept.location
  const out = git(dir, ["rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir"])
  const [top, gitDir, common] = (out ?? "").split("\n").map((line) => line.trim())
  const location =
    top === undefined || top === "" || gitDir === undefined || gitDir === "" || common === undefined || common === ""
      ? undefined
      : { top, gitDirs: [gitDir, Path.resolve(dir, common)] }
  locations.set(dir, { stamp, location })
  return location
}

/**
 * True when git, run in `dir`, says it is not in a repository (and `grep.fallbackToNoIndex` is not set, which would
 * make `git grep` search the directory anyway). Any other failure (git missing, too slow, an unsafe repository)
 * gives false: the caller then keeps its conservative answer.
 */
export const failsOutsideRepository = (dir: string): boolean => {
  const run = ChildProcess.spawnSync("git", [...safeConfig, "rev-parse", "--git-dir"], {
    cwd: dir,
    encoding: "utf8",
    timeout,
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, GIT_TERMINAL_PROMPT: "0", GIT_OPTIONAL_LOCKS: "0" }
  })
  if (run.status !== 128 || !/not a git repository/i.test(run.stderr ?? "")) return false
  const fallback = ChildProcess.spawnSync(
    "git",
    [...safeConfig, "config", "--bool", "--get", "grep.fallbackToNoIndex"],
    {
      cwd: dir,
      encoding: "utf8",
      timeout,
      stdio: ["ignore", "pipe", "ignore"],
      env: { ...process.env, GIT_TERMINAL_PROMPT: "0", GIT_OPTIONAL_LOCKS: "0" }
    }
  )
  // Exit status 1: the key is not set anywhere git looks.
  return fallback.status === 1 && (fallback.stdout ?? "").trim() === ""
}

/** The repository's top directory for a directory, or undefined when it is not in one. */
export const topLevel = (dir: string): string | undefined => locate(dir)?.top

/** The nearest directory that exists at or above a path (a pathspec such as `*.pem` names no file). */
export const nearestDirectory = (path: string): string => {
  let at = path
  for (;;) {
    try {
      if (Fs.statSync(at).isDirectory()) return at
    } catch {}
    const parent = Path.dirname(at)
    if (parent === at) return at
    at = parent
  }
}

/**
 * Every path (absolute) git stores for the repository holding `path`: the index and all of its reachable
 * history; undefined when git cannot tell.
 */
export const storedPaths = (path: string): ReadonlyArray<string> | undefined => {
  const location = locate(nearestDirectory(path))
  if (location === undefined) return undefined
  const stamp = GitStamps.content(location.gitDirs)
  const kept = stored.get(location.top)
  if (stamp !== undefined && kept !== undefined && kept.stamp === stamp) return kept.paths
  const paths = askStored(location.top)
  if (stamp !== undefined) stored.set(location.top, { stamp, paths })
  return paths
}

const stored = new Map<string, { readonly stamp: string; readonly paths: ReadonlyArray<string> | undefined }>()

const askStored = (top: string): ReadonlyArray<string> | undefined => {
  const index = git(top, ["ls-files", "-z", "--cached"])
  if (index === undefined) return undefined
  // An empty repository has no history: `git log` fails, and the index is all git stores.
  const head = git(top, ["rev-parse", "--verify", "-q", "HEAD"])
  const history =
    head === undefined ? "" : git(top, ["log", "--all", "--reflog", "--format=", "--name-only", "-z", "--no-renames"])
  if (history === undefined) return undefined
  const names = new Set([...index.split("\0"), ...history.split(/[\0\n]/)].filter((name) => name !== ""))
  return [...names].map((name) => Path.join(top, name))
}

/**
 * The paths among `paths` that the ignore rules of their repository exclude (`.gitignore`, `.git/info/exclude`,
 * `core.excludesFile`), as git itself says; undefined when git cannot tell (not a repository).
 */
export const ignoredAmong = (dir: string, paths: ReadonlyArray<string>): ReadonlySet<string> | undefined => {
  const top = topLevel(nearestDirectory(dir))
  if (top === undefined) return undefined
  try {
    const out = ChildProcess.execFileSync("git", [...safeConfig, "check-ignore", "-z", "--no-index", "--stdin"], {
      cwd: top,
      input: paths.map((path) => `${path}\0`).join(""),
      encoding: "utf8",
      maxBuffer,
      timeout,
      stdio: ["pipe", "pipe", "ignore"],
      env: { ...process.env, GIT_TERMINAL_PROMPT: "0", GIT_OPTIONAL_LOCKS: "0" }
    })
    return new Set(out.split("\0").filter((name) => name !== ""))
  } catch (error) {
    // Exit status 1: none of them is ignored.
    if ((error as { status?: number }).status === 1) return new Set()
    return undefined
  }
}
