/**
 * The Bash path stage: which words of a command are checked as paths (safety paths, acceptEdits, read-only inside
 * the working directories). Kept apart so the resolution of shell paths can grow here without touching the stages.
 */
import type { ShellAnalysis } from "../../services/ShellAnalyzer.js"

/** The words of a command checked as paths: every non-empty argument not starting with `-`, of every command. */
export const bashPathWords = (analysis: ShellAnalysis | undefined): ReadonlyArray<string> =>
  (analysis?.commands ?? []).flatMap((c) => c.argv.slice(1).filter((a) => a !== "" && !a.startsWith("-")))
