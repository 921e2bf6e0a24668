/**
 * Safety paths: writing inside `.git/`, `.claude/`, `.armature/` or to a shell start-up file always needs approval,
 * whatever the rules and the mode say.
 */
import * as Path from "node:path"
import type { ShellAnalysis } from "../../services/ShellAnalyzer.js"
import { pass, type Stage } from "./Prepared.js"

const protectedDirs: ReadonlyArray<string> = [".git", ".claude", ".armature"]

const shellStartupFiles: ReadonlySet<string> = new Set([
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".bash_logout",
  ".profile",
  ".zshrc",
  ".zshenv",
  ".zprofile",
  ".zlogin",
  ".zlogout",
  ".cshrc",
  ".tcshrc",
  ".kshrc"
])

/** True for a name that is protected wherever it appears (`.git`, `.claude`, `.armature`, shell start-up files). */
export const isProtectedName = (name: string): boolean => {
  const lower = name.toLowerCase()
  return protectedDirs.includes(lower) || shellStartupFiles.has(lower)
}

/** Why writing this (resolved) path always needs approval, or undefined when it may be written. */
export const protectedReason = (path: string): string | undefined => {
  const segments = path.split(Path.sep).map((s) => s.toLowerCase())
  const dir = protectedDirs.find((d) => segments.includes(d))
  if (dir !== undefined) return `${path} is inside a ${dir}/ directory`
  const base = segments[segments.length - 1]
  return shellStartupFiles.has(base) ? `${path} is a shell startup file` : undefined
}

const literalDots = (text: string): string => text.replace(/[.]/g, "\\.")

/** A protected name as a whole path segment anywhere in a command line (`> .git/config`, `cd .claude && …`). */
const mentionPattern = new RegExp(
  `(?:^|[\\s/'"=:<>;|&(){}\`,])(${[...protectedDirs, ...shellStartupFiles].map(literalDots).join("|")})(?=$|[\\s/'"\`;|&()<>,])`,
  "i"
)

/**
 * The protected name a command line that writes mentions, if any. A safety net under the path analysis: a
 * redirection, a `cd` or an expansion may write there without the name being an argument of the command.
 */
export const protectedMention = (command: string): string | undefined => mentionPattern.exec(command)?.[1]

/**
 * Programs that copy, move or extract whole trees (`cp -r`, `mv`, `rsync`, `tar`, `unzip`, `cpio` …): their source may
 * hold a `.claude/` or `.git/`, so naming a working directory (or an ancestor) as a path may replace them. Any `cp`
 * counts, whatever its options say (`--recur`, `--arch` are GNU spellings of `-r`/`-a`).
 */
const treeCopiers: ReadonlySet<string> = new Set([
  "cp",
  "mv",
  "rsync",
  "scp",
  "tar",
  "bsdtar",
  "gtar",
  "unzip",
  "cpio",
  "ditto",
  "pax",
  "busybox"
])

/**
 * True when a command of the line may copy, move or extract whole trees: read from the analysis (quotes and
 * escapes removed, through every wrapper: `command cp`, `xargs cp`, `find -exec cp`), not from the text. A program
 * known only at run time (`$x -r a b`), or a line that does not parse, may be one.
 */
export const copiesTrees = (analysis: ShellAnalysis | undefined): boolean =>
  analysis === undefined ||
  !analysis.parsed ||
  analysis.commands.some((command) =>
    command.forms.some((form) => {
      const program = form[0]
      return program === null || program === undefined || treeCopiers.has(Path.basename(program))
    })
  )

/** Step 3c: writes to safety paths (`.git/`, `.claude/`, `.armature/`, shell rc files) always ask. */
export const safetyPaths: Stage = (call) => {
  const writes = call.writes
  if (writes && call.target._tag === "Command") {
    const name = protectedMention(call.target.command)
    if (name !== undefined) {
      return {
        step: "safetyPaths",
        outcome: "ask",
        reason: `The command writes and names ${name}: writing to ${name} always needs approval`
      }
    }
  }
  if (writes && call.target._tag === "Command" && copiesTrees(call.analysis)) {
    const into = call.paths
      .flatMap((path) => path.forms)
      .find((form) => call.workingDirs.some((dir) => dir === form || dir.startsWith(`${form}${Path.sep}`)))
    if (into !== undefined) {
      return {
        step: "safetyPaths",
        outcome: "ask",
        reason: `The command copies a tree into ${into}, which holds the working directory: it may write its .git/, .claude/ or .armature/, so it always needs approval`
      }
    }
  }
  const tree = call.trees
  if (writes && tree !== undefined) {
    return {
      step: "safetyPaths",
      outcome: "ask",
      reason:
        tree._tag === "Holds"
          ? `The command copies or moves a tree, and ${tree.root} holds ${tree.path}: it may write a .git/, .claude/, .armature/ or shell start-up file, so it always needs approval`
          : `The command copies or moves a tree, and ${tree.root} is too large to check for .git/, .claude/ and .armature/: it always needs approval`
    }
  }
  if (writes) {
    for (const path of call.paths) {
      for (const form of path.forms) {
        const reason = protectedReason(form)
        if (reason !== undefined) {
          return { step: "safetyPaths", outcome: "ask", reason: `${reason}: writing there always needs approval` }
        }
      }
    }
  }
  return pass("safetyPaths", writes ? "no protected path is written" : "the call writes no files")
}
