/**
 * Safety paths: writing a protected path (src/domain/ProtectedPaths.ts: `.git/`, `.claude/`, `.armature/`, `.husky/`,
 * `.vscode/`, `.gitconfig`, shell start-up files, …) always needs approval, whatever the rules and the mode say; so
 * does a file tool writing a device or kernel file (`/dev/…`, `/proc/…`, `/sys/…`).
 */
import * as Path from "node:path"
import * as ProtectedPaths from "../../domain/ProtectedPaths.js"
import * as DeviceWrites from "../../domain/shell/DeviceWrites.js"
import * as Expansion from "../../domain/shell/ShellExpansion.js"
import type { ShellAnalysis } from "../../services/ShellAnalyzer.js"
import { pass, type Stage } from "./Prepared.js"

/**
 * True for a path (relative to a tree being copied) that is or lies in a protected entry (ProtectedPaths: `.git/`,
 * `.claude/`, `.husky/`, `.vscode/`, shell start-up files, `.gitconfig`, …).
 */
export const isProtectedPath = (relative: string): boolean => ProtectedPaths.entryFor(relative) !== undefined

/** Why writing this (resolved) path always needs approval, or undefined when it may be written. */
export const protectedReason = (path: string): string | undefined => ProtectedPaths.reasonFor(path)

/** Why writing this (resolved) path, a device or a kernel file, always needs approval; undefined for others. */
export const deviceReason = (path: string): string | undefined =>
  /^\/(?:dev|proc|sys)(?:\/|$)/.test(path)
    ? `${path} is a device or kernel file (writing one as root changes the system)`
    : undefined

const literal = (text: string): string => text.replace(/[.]/g, "\\.").replace(/\//g, "[\\\\/]")

/** A protected name as a whole path segment anywhere in a command line (`> .git/config`, `cd .claude && …`). */
const mentionPattern = new RegExp(
  `(?:^|[\\s/'"=:<>;|&(){}\`,])(${ProtectedPaths.names.map(literal).join("|")})(?=$|[\\s/'"\`;|&()<>,])`,
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

/**
 * The extractor a command form runs writing files: an archive (`tar x`, `unzip`, `cpio -i`, `7z x`, `ar x`, `pax -r`)
 * or a patch (`patch`) names the files it writes inside itself, so any of them may be `.git/hooks/…` or another
 * protected path, wherever the extraction lands; undefined when the form only lists, tests or prints to stdout.
 */
export const extraction = (form: ReadonlyArray<string | null>): string | undefined => {
  const program = form[0]
  if (program === null || program === undefined) return undefined
  const name = Path.basename(program)
  const args = form.slice(1).map((word) => word ?? "")
  const cluster = (letter: string) => (word: string) =>
    new RegExp(`^-[A-Za-z0-9]*${letter}`).test(word) && !word.startsWith("--")
  switch (name) {
    case "tar":
    case "gtar":
    case "bsdtar": {
      const first = args[0] ?? ""
      const extracts =
        (!first.startsWith("-") && first.includes("x")) ||
        args.some((word) => cluster("x")(word) || /^--(ex|get)/.test(word))
      const toStdout = args.some((word) => cluster("O")(word) || /^--to-(stdout|command)/.test(word))
      return extracts && !toStdout ? `\`${name}\` extracting an archive` : undefined
    }
    case "unzip":
      return args.some((word) => /^-[A-Za-z]*[lptvzZ]/.test(word)) ? undefined : "`unzip` extracting an archive"
    case "cpio":
      return args.some((word) => cluster("i")(word) || cluster("p")(word) || /^--(extract|pass-through)/.test(word))
        ? "`cpio` extracting an archive"
        : undefined
    case "7z":
    case "7za":
    case "7zr":
      return args[0] === "x" || args[0] === "e" ? `\`${name} ${args[0]}\` extracting an archive` : undefined
    case "ar":
      return /^-?[a-wyz]*x/.test(args[0] ?? "") ? "`ar x` extracting an archive" : undefined
    case "pax":
      return args.some(cluster("r")) ? "`pax -r` extracting an archive" : undefined
    case "git":
      // `git apply --unsafe-paths` writes wherever the patch says, `.git/hooks/…` included (without it git refuses)
      return args.includes("apply") && args.some((word) => word.startsWith("--unsafe-paths"))
        ? "`git apply --unsafe-paths` writing the files its patch names"
        : undefined
    case "patch":
      return args.some((word) => word === "--dry-run" || word === "-o" || word.startsWith("--output"))
        ? undefined
        : "`patch` writing the files its patch names"
  }
  return undefined
}

/** Writes to protected paths (ProtectedPaths), and file tools writing devices, always ask. */
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
  // In the modes that allow writes without a rule (a tool-wide Bash allow is the user's own choice in default mode)
  if (writes && call.target._tag === "Command" && (call.mode === "acceptEdits" || call.mode === "bypassPermissions")) {
    const found = call.analysis?.commands
      .flatMap((command) => command.forms.map(extraction))
      .find((e) => e !== undefined)
    if (found !== undefined) {
      return {
        step: "safetyPaths",
        outcome: "ask",
        reason: `The command runs ${found}: the names it writes come from its input, and any may be in .git/, .claude/ or another protected path, so it always needs approval`
      }
    }
  }
  // A write under what an earlier command of the line may have replaced: where it lands is only known at run time.
  const changed = call.bash?.afterChange[0]
  if (writes && changed !== undefined) {
    return {
      step: "safetyPaths",
      outcome: "ask",
      reason: `The command writes ${changed.given} after ${changed.by} earlier on the line may have replaced what it names (a link into .git/ or another protected path): it always needs approval`
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
        // A file tool writing a device (Write of /dev/null replaces it as root); Bash redirections are not this.
        const reason = protectedReason(form) ?? (call.target._tag === "Paths" ? deviceReason(form) : undefined)
        if (reason !== undefined) {
          return { step: "safetyPaths", outcome: "ask", reason: `${reason}: writing there always needs approval` }
        }
      }
    }
  }
  const device = writes ? bashDeviceWrite(call) : undefined
  if (device !== undefined)
    return { step: "safetyPaths", outcome: "ask", reason: `${device}: it always needs approval` }
  return pass("safetyPaths", writes ? "no protected path is written" : "the call writes no files")
}

/** The program and arguments of the line's step `index`, as plain words (`command`/`builtin` skipped). */
const stepProgram = (call: Parameters<Stage>[0], index: number | undefined) => {
  const step = index === undefined ? undefined : call.analysis?.pathSteps?.[index]
  if (step === undefined || step._tag !== "Command") return {}
  const words = step.words.map((word) => Expansion.plainText(word) ?? "")
  let at = 0
  while (words[at] === "command" || words[at] === "builtin") at++
  return { program: Path.basename(words[at] ?? ""), args: words.slice(at + 1) }
}

/** Why a Bash write of a device or kernel file needs approval (see DeviceWrites), or undefined. */
const bashDeviceWrite = (call: Parameters<Stage>[0]): string | undefined => {
  for (const path of call.bash?.paths ?? []) {
    if (path.access !== "write") continue
    const writer = {
      given: path.given,
      redirect: path.redirect === true,
      guessed: path.guessed === true,
      ...stepProgram(call, path.step)
    }
    for (const form of path.forms) {
      const reason = DeviceWrites.reason(form, writer)
      if (reason !== undefined) return reason
    }
  }
  return undefined
}
