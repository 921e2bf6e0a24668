/**
 * The one list of protected paths: directories and files whose contents configure or run code (git's hooks and
 * config, editor and agent settings, shell start-up files, direnv, git hooks managers). Writing one always needs
 * approval from the permission layer, whatever the mode (acceptEdits and bypassPermissions included), and the OS
 * sandbox keeps them read-only inside the directories it makes writable. See docs/permissions.md ("Safety paths")
 * and docs/sandbox.md.
 */
import * as Path from "node:path"

/** One protected name: a directory (everything below it) or a file, matched at any depth. */
export interface ProtectedEntry {
  /** The path as it appears below any directory: one segment (`.git`, `.bashrc`) or several (`.config/fish`). */
  readonly name: string
  readonly kind: "dir" | "file"
  /** Why it is protected, as reasons show it. */
  readonly why: string
  /**
   * What the sandbox denies writing below a writable directory, relative to it. Usually the entry itself; `.git`
   * only its hooks and config, since git itself must write the rest of it.
   */
  readonly sandbox: ReadonlyArray<string>
}

const dir = (name: string, why: string, sandbox: ReadonlyArray<string> = [name]): ProtectedEntry => ({
  name,
  kind: "dir",
  why,
  sandbox
})

const file = (name: string, why: string): ProtectedEntry => ({ name, kind: "file", why, sandbox: [name] })

const startup = "a shell start-up file"

/** Every protected entry (Claude Code's list and the sandbox runtime's, in one). */
export const entries: ReadonlyArray<ProtectedEntry> = [
  dir(".git", "git's directory (hooks and config run code)", [".git/hooks", ".git/config"]),
  dir(".claude", "the agent's settings directory"),
  dir(".armature", "Armature's state directory"),
  dir(".husky", "git hooks run by husky"),
  dir(".vscode", "editor settings that can run tasks"),
  dir(".idea", "editor settings that can run tools"),
  dir(".config/fish", "fish's start-up files"),
  dir(".config/git", "git's configuration (aliases and hooks run code)"),
  file(".gitconfig", "git's configuration (aliases and hooks run code)"),
  file(".gitmodules", "git's submodule configuration"),
  file(".mcp.json", "the project's MCP servers (commands the agent starts)"),
  file(".envrc", "direnv's start-up script"),
  file(".ripgreprc", "ripgrep's configuration (it can name a preprocessor to run)"),
  file(".bashrc", startup),
  file(".bash_profile", startup),
  file(".bash_login", startup),
  file(".bash_logout", startup),
  file(".profile", startup),
  file(".zshrc", startup),
  file(".zshenv", startup),
  file(".zprofile", startup),
  file(".zlogin", startup),
  file(".zlogout", startup),
  file(".cshrc", startup),
  file(".tcshrc", startup),
  file(".kshrc", startup),
  file(".mkshrc", startup),
  file(".yashrc", startup),
  file(".login", startup),
  file(".logout", startup),
  file(".xprofile", "an X session start-up script"),
  file(".xinitrc", "an X session start-up script"),
  file(".xsession", "an X session start-up script"),
  file(".xsessionrc", "an X session start-up script"),
  file(".pam_environment", "variables set for every login"),
  dir(".ssh", "ssh's keys and configuration (authorized_keys, rc and config admit or run commands)"),
  dir(".config/autostart", "programs the desktop starts at login"),
  dir(".config/systemd", "systemd user units (services it starts)"),
  dir(".config/environment.d", "variables set for every user service"),
  file(".claude.json", "the agent's user configuration (its MCP servers are commands it starts)"),
  file(".gdbinit", "commands gdb runs when it starts"),
  file(".vimrc", "commands vim runs when it starts"),
  file(".exrc", "commands vi runs when it starts"),
  file(".tmux.conf", "tmux's configuration (run-shell runs commands)"),
  file(".npmrc", "npm's configuration (script-shell and node-options change what package scripts run)"),
  file(".yarnrc", "yarn's configuration (yarn-path runs a program)"),
  file(".yarnrc.yml", "yarn's configuration (yarnPath runs a program)")
]

const segmentsOf = (path: string): ReadonlyArray<string> =>
  path
    .split(/[\\/]+/)
    .filter((s) => s !== "")
    .map((s) => s.toLowerCase())

const entrySegments = entries.map((entry) => ({ entry, segments: segmentsOf(entry.name) }))

/** True when `inner` occurs as consecutive items of `outer` starting at `at`. */
const at = (outer: ReadonlyArray<string>, inner: ReadonlyArray<string>, index: number): boolean =>
  inner.every((s, k) => outer[index + k] === s)

/**
 * The protected entry a path is (a file entry as its last segments) or lies in (a directory entry anywhere in it),
 * compared case-insensitively (a case-insensitive file system opens `.GIT/config` as `.git/config`); undefined for
 * any other path.
 */
export const entryFor = (path: string): ProtectedEntry | undefined => {
  const segments = segmentsOf(path)
  for (const { entry, segments: name } of entrySegments) {
    if (entry.kind === "file") {
      if (segments.length >= name.length && at(segments, name, segments.length - name.length)) return entry
      continue
    }
    for (let i = 0; i + name.length <= segments.length; i++) if (at(segments, name, i)) return entry
  }
  return undefined
}

/** Why writing this path always needs approval, or undefined when it may be written. */
export const reasonFor = (path: string): string | undefined => {
  const entry = entryFor(path)
  if (entry === undefined) return undefined
  return entry.kind === "dir" ? `${path} is inside a ${entry.name}/ directory` : `${path} is ${entry.why}`
}

/** The names a command line that writes may not mention (each entry as written, for a text search). */
export const names: ReadonlyArray<string> = entries.map((e) => e.name)

/** The paths the sandbox keeps read-only below one writable directory. */
export const sandboxDenyWrites = (root: string): ReadonlyArray<string> =>
  entries.flatMap((entry) => entry.sandbox.map((rel) => Path.join(root, rel)))
