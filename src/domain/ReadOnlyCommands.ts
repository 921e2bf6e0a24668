/**
 * Read-only classification of one simple command (SPEC §5.2), as a pure function over its words.
 *
 * Conservative by design: a command is read-only only when it is on the list below and none of its options can
 * write a file, run another program or change the system. Anything unknown is not read-only.
 */

type Argv = ReadonlyArray<string>

/** The words after the command name, up to (not including) a `--` end-of-options marker. */
const optionRegion = (args: Argv): Argv => {
  const end = args.indexOf("--")
  return end === -1 ? args : args.slice(0, end)
}

const isShortCluster = (arg: string): boolean => /^-[A-Za-z0-9]+$/.test(arg)

/**
 * The letters of a short-option cluster such as `-lah`; scanning stops after the first letter that takes an
 * argument (the rest of the cluster is that argument).
 */
const shortLetters = (arg: string, takesArgument: string): ReadonlyArray<string> => {
  const letters: Array<string> = []
  for (const letter of arg.slice(1)) {
    letters.push(letter)
    if (takesArgument.includes(letter)) break
  }
  return letters
}

/** True when some option of the region is a forbidden long option or a cluster containing a forbidden letter. */
const hasOption = (
  args: Argv,
  spec: { readonly long?: ReadonlyArray<string>; readonly short?: string; readonly takesArgument?: string }
): boolean =>
  optionRegion(args).some((arg) => {
    if (arg.startsWith("--")) {
      const name = arg.split("=")[0]
      return (spec.long ?? []).includes(name)
    }
    if (spec.short !== undefined && isShortCluster(arg)) {
      return shortLetters(arg, spec.takesArgument ?? "").some((letter) => spec.short?.includes(letter))
    }
    return false
  })

/** Positional operands, skipping options and the separate argument of options listed in `withArgument`. */
const positionals = (args: Argv, withArgument: ReadonlyArray<string>): Argv => {
  const out: Array<string> = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]
    if (arg === "--") return [...out, ...args.slice(i + 1)]
    if (arg.startsWith("-") && arg !== "-") {
      if (withArgument.includes(arg)) i++
      continue
    }
    out.push(arg)
  }
  return out
}

/** Commands that only read, whatever their options. */
const alwaysReadOnly = new Set([
  "ls",
  "cat",
  "head",
  "tail",
  "wc",
  "grep",
  "egrep",
  "fgrep",
  "echo",
  "pwd",
  "which",
  "type",
  "stat",
  "du",
  "df",
  "basename",
  "dirname",
  "realpath",
  "readlink",
  "uname",
  "whoami",
  "id",
  "printenv",
  "true",
  "false",
  ":",
  "test",
  "[",
  "[[",
  "diff",
  "cmp",
  "cut",
  "tr",
  "nl",
  "jq",
  "cd"
])

const findWriters = new Set([
  "-exec",
  "-execdir",
  "-ok",
  "-okdir",
  "-delete",
  "-fprint",
  "-fprint0",
  "-fprintf",
  "-fls"
])

/** `env` prints the environment when no command follows its options and assignments. */
const envWithoutCommand = (args: Argv): boolean => {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]
    if (arg === "-S" || arg.startsWith("--split-string") || (isShortCluster(arg) && arg.includes("S"))) return false
    if (arg === "-u" || arg === "-C" || arg === "--unset" || arg === "--chdir") {
      i++
      continue
    }
    if (arg.startsWith("-")) continue
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(arg)) continue
    return false
  }
  return true
}

/** sed is read-only only as `sed -n` with print-only scripts (`5p`, `1,10p`, `/re/p`, `$p`), never -i/-f/w. */
const sedReadOnly = (args: Argv): boolean => {
  let quiet = false
  const scripts: Array<string> = []
  const operands: Array<string> = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]
    if (arg === "-e" || arg === "--expression") {
      if (i + 1 >= args.length) return false
      scripts.push(args[++i])
    } else if (arg.startsWith("--expression=")) {
      scripts.push(arg.slice("--expression=".length))
    } else if (arg === "--quiet" || arg === "--silent") {
      quiet = true
    } else if (arg === "--regexp-extended" || arg === "--null-data" || arg === "--separate" || arg === "--unbuffered") {
    } else if (isShortCluster(arg)) {
      if (!/^-[nEersuz]+$/.test(arg)) return false
      if (arg.includes("n")) quiet = true
      if (arg.endsWith("e")) {
        if (i + 1 >= args.length) return false
        scripts.push(args[++i])
      }
    } else if (arg.startsWith("-") && arg !== "-") {
      return false
    } else {
      operands.push(arg)
    }
  }
  if (scripts.length === 0) {
    if (operands.length === 0) return false
    scripts.push(operands[0])
  }
  const address = String.raw`(?:\d+|\$|/[^/\\]*/)`
  const printOnly = new RegExp(
    String.raw`^\s*(?:${address}(?:,${address})?)?p\s*(?:;\s*(?:${address}(?:,${address})?)?p\s*)*;?\s*$`
  )
  return quiet && scripts.every((script) => printOnly.test(script))
}

const gitBranchWriters = new Set([
  "--delete",
  "--move",
  "--copy",
  "--force",
  "--set-upstream-to",
  "--set-upstream",
  "--unset-upstream",
  "--edit-description",
  "--track",
  "--no-track",
  "--create-reflog",
  "--recurse-submodules"
])

const gitBranchListOnly = (args: Argv): boolean => {
  if (hasOption(args, { long: [...gitBranchWriters], short: "dDmMcCfut" })) return false
  const listing = args.includes("--list") || args.some((arg) => isShortCluster(arg) && arg.includes("l"))
  const rest = positionals(args, [
    "--contains",
    "--no-contains",
    "--merged",
    "--no-merged",
    "--points-at",
    "--sort",
    "--format"
  ])
  return rest.length === 0 || listing
}

const gitConfigReadOnly = (args: Argv): boolean => {
  if (args[0] === "get" || args[0] === "list") return true
  const writers = ["--add", "--unset", "--unset-all", "--replace-all", "--rename-section", "--remove-section", "--edit"]
  if (hasOption(args, { long: writers, short: "e" })) return false
  const reading = ["--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list"]
  return args.some((arg) => reading.includes(arg.split("=")[0]) || arg === "-l")
}

const gitReadOnly = (args: Argv): boolean => {
  let i = 0
  while (i < args.length && args[i].startsWith("-")) {
    const arg = args[i]
    if (arg === "-C") i += 2
    else if (arg === "--no-pager" || arg === "-P" || arg === "--no-optional-locks") i += 1
    else return false
  }
  const sub = args[i]
  const rest = args.slice(i + 1)
  const noOutputFile = !hasOption(rest, { long: ["--output", "--ext-diff"] })
  switch (sub) {
    case "status":
    case "rev-parse":
    case "ls-files":
    case "blame":
      return true
    case "log":
    case "diff":
    case "show":
      return noOutputFile
    case "branch":
      return gitBranchListOnly(rest)
    case "remote":
      return rest.length === 0 || (rest.length === 1 && (rest[0] === "-v" || rest[0] === "--verbose"))
    case "config":
      return gitConfigReadOnly(rest)
    default:
      return false
  }
}

/**
 * True when the command reads whatever its arguments are, so arguments whose final value is unknown when
 * analyzing (expansions like `$X`, globs) cannot make it write.
 */
export const readsWhateverArguments = (name: string): boolean => alwaysReadOnly.has(name)

/**
 * True when the command (its words after stripping assignments and wrappers, unquoted) only reads: it is on the
 * read-only list and uses none of the options that write files, run programs or change state.
 */
export const isReadOnlyCommand = (argv: Argv): boolean => {
  if (argv.length === 0) return false
  const [name, ...args] = argv
  if (alwaysReadOnly.has(name)) return true
  switch (name) {
    case "rg":
      return !hasOption(args, { long: ["--pre"] })
    case "find":
      return !args.some((arg) => findWriters.has(arg))
    case "printf":
      return !(args[0] ?? "").startsWith("-v")
    case "file":
      return !hasOption(args, { long: ["--compile"], short: "C", takesArgument: "mefFP" })
    case "tree":
      return !hasOption(args, { short: "oR", takesArgument: "LPIH" })
    case "date":
      return !hasOption(args, { long: ["--set"], short: "s", takesArgument: "dfIr" })
    case "sort":
      return !hasOption(args, { long: ["--output", "--compress-program"], short: "o", takesArgument: "ktST" })
    case "uniq":
      return positionals(args, ["-f", "-s", "-w"]).length <= 1
    case "env":
      return envWithoutCommand(args)
    case "command":
      return (args[0] === "-v" || args[0] === "-V") && args.slice(1).every((arg) => !arg.startsWith("-"))
    case "sed":
      return sedReadOnly(args)
    case "git":
      return gitReadOnly(args)
    default:
      return false
  }
}

const riskyAssignment =
  /^(?:PATH|IFS|ENV|BASH_ENV|BASH_FUNC_.*|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|CDPATH|HOME|XDG_CONFIG_HOME|TMPDIR|LD_.*|DYLD_.*|GIT_.*|PAGER|MANPAGER|EDITOR|VISUAL|NODE_OPTIONS|PYTHON.*|PERL.*|RUBY.*|LESSOPEN|LESSCLOSE|RIPGREP_CONFIG_PATH|GCONV_PATH)$/

/**
 * True when assigning this variable before (or around) a command can change which code runs: PATH, LD_PRELOAD,
 * BASH_ENV, GIT_*, RIPGREP_CONFIG_PATH, … A command with such an assignment is never read-only.
 */
export const isRiskyAssignment = (name: string): boolean => riskyAssignment.test(name)
