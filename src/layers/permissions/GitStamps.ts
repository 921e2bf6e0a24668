/**
 * Stamps of what git's answers depend on, so an answer can be kept for the life of the process and reused only
 * while the stamp is unchanged. Starting git costs milliseconds; a stamp is a few `lstat` calls.
 *
 * - Discovery (which repository holds a directory): git looks at `.git` (a directory or a `gitdir:` file) and, for
 *   a bare repository, at `HEAD` in the directory and each of its parents, under the environment variables and the
 *   configuration that move or stop the search (`GIT_DIR`, `GIT_CEILING_DIRECTORIES`, `safe.directory`). The stamp
 *   holds each ancestor's identity and those entries' identity and modification time, the variables and the
 *   configuration files' stamps.
 * - Content (the paths git stores): the index, refs, packed refs, reflogs and the configuration all live in the git
 *   directory (and the common directory of a linked worktree); git replaces a file by renaming a new one into place,
 *   which changes its inode, and appends to reflogs, which changes their size. Objects never change once written,
 *   so `objects/` is left out. A git directory with more entries than the bound gets no stamp (no reuse).
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

/** The most entries of a git directory looked at for one stamp. */
const maxEntries = 4_000

/** Directories of a git directory that cannot change what git stores or where it is. */
const skipped = new Set(["objects", "hooks", "modules", "lfs"])

const variables = [
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_COMMON_DIR",
  "GIT_INDEX_FILE",
  "GIT_OBJECT_DIRECTORY",
  "GIT_CEILING_DIRECTORIES",
  "GIT_DISCOVERY_ACROSS_FILESYSTEM",
  "GIT_CONFIG",
  "GIT_CONFIG_GLOBAL",
  "GIT_CONFIG_SYSTEM",
  "GIT_CONFIG_NOSYSTEM",
  "GIT_CONFIG_COUNT",
  "HOME",
  "XDG_CONFIG_HOME"
]

const entryStamp = (path: string): string => {
  try {
    const s = Fs.lstatSync(path, { bigint: true })
    return `${s.dev}:${s.ino}:${s.mode}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`
  } catch {
    return "-"
  }
}

/** The configuration files every git command reads (global and system), with the environment that names them. */
const configStamp = (): string => {
  const home = process.env.HOME ?? Os.homedir()
  const xdg = process.env.XDG_CONFIG_HOME ?? Path.join(home, ".config")
  const files = [Path.join(home, ".gitconfig"), Path.join(xdg, "git", "config"), "/etc/gitconfig"]
  const env = variables.map((name) => `${name}=${process.env[name] ?? ""}`)
  // Configuration given through GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n.
  for (const [name, value] of Object.entries(process.env)) {
    if (/^GIT_CONFIG_(KEY|VALUE)_\d+$/.test(name)) env.push(`${name}=${value}`)
  }
  return [...env, ...files.map((file) => `${file}=${entryStamp(file)}`)].join("\n")
}

/** What git's discovery of the repository holding `dir` depends on. */
export const discovery = (dir: string): string => {
  const parts = [configStamp()]
  let at = dir
  for (;;) {
    parts.push(`${at}|${entryStamp(at)}|${entryStamp(Path.join(at, ".git"))}|${entryStamp(Path.join(at, "HEAD"))}`)
    const parent = Path.dirname(at)
    if (parent === at) break
    at = parent
  }
  return parts.join("\n")
}

/** What the paths a repository stores depend on; undefined when the git directories are too large to stamp. */
export const content = (gitDirs: ReadonlyArray<string>): string | undefined => {
  const parts = [configStamp()]
  let left = maxEntries
  const walk = (dir: string, top: boolean): boolean => {
    parts.push(`${dir}|${entryStamp(dir)}`)
    let entries: ReadonlyArray<Fs.Dirent>
    try {
      entries = Fs.readdirSync(dir, { withFileTypes: true })
    } catch {
      return true
    }
    for (const entry of entries) {
      if (--left < 0) return false
      if (top && skipped.has(entry.name)) continue
      const path = Path.join(dir, entry.name)
      if (entry.isDirectory()) {
        if (!walk(path, false)) return false
      } else parts.push(`${path}|${entryStamp(path)}`)
    }
    return true
  }
  for (const dir of new Set(gitDirs)) if (!walk(dir, true)) return undefined
  return parts.join("\n")
}
