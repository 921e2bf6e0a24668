/**
 * Safety paths: writing inside `.git/`, `.claude/`, `.armature/` or to a shell start-up file always needs approval,
 * whatever the rules and the mode say.
 */
import * as Path from "node:path"
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

/** Why writing this (resolved) path always needs approval, or undefined when it may be written. */
export const protectedReason = (path: string): string | undefined => {
  const segments = path.split(Path.sep).map((s) => s.toLowerCase())
  const dir = protectedDirs.find((d) => segments.includes(d))
  if (dir !== undefined) return `${path} is inside a ${dir}/ directory`
  const base = segments[segments.length - 1]
  return shellStartupFiles.has(base) ? `${path} is a shell startup file` : undefined
}

/** Step 3c: writes to safety paths (`.git/`, `.claude/`, `.armature/`, shell rc files) always ask. */
export const safetyPaths: Stage = (call) => {
  const writes = call.writes
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
