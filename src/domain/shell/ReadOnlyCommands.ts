/**
 * Read-only classification of one simple command, as a pure function over its words: the command tables
 * (`CommandTables`) interpreted by `CommandEffect`. A command is read-only only when the command, every option and
 * every operand are known to be safe; anything unknown is not read-only.
 */
import * as CommandEffect from "./CommandEffect.js"
import * as CommandTables from "./CommandTables.js"

/**
 * True when the command (its words after stripping assignments and wrappers, unquoted) only reads: it has a table,
 * every option is on the table's read-only list, and no operand is written.
 */
export const isReadOnlyCommand = (argv: ReadonlyArray<string>): boolean => CommandEffect.describe(argv).readOnly

/** The same for words as the analyzer sees them (expansions and globs judged by what they could become). */
export const isReadOnlyWords = (argv: ReadonlyArray<CommandEffect.ArgWord>): boolean =>
  CommandEffect.describeWords(argv).readOnly

/** Commands with their own interpreter that cannot write or run anything, whatever their words. */
const inertCustom = new Set(["echo", "true", "false", ":", "jq", "ps"])

/**
 * True when the command reads whatever its arguments are (its table is inert), so arguments whose final value is
 * unknown when analyzing (expansions like `$X`, globs) cannot make it write or run a program.
 */
export const readsWhateverArguments = (name: string): boolean => {
  const command = CommandTables.lookup(name)
  if (command === undefined) return false
  return "interpret" in command ? inertCustom.has(name) : command.inert === true
}

const riskyAssignment = new RegExp(
  "^(?:" +
    [
      "PATH",
      "IFS",
      "ENV",
      "BASH_ENV",
      "BASH_FUNC_.*",
      "SHELLOPTS",
      "BASHOPTS",
      "PS4",
      "PROMPT_COMMAND",
      "CDPATH",
      "HOME",
      "SHELL",
      "XDG_CONFIG_HOME",
      "TMPDIR",
      "LD_.*",
      "DYLD_.*",
      "GIT_.*",
      ".*PAGER",
      "EDITOR",
      "VISUAL",
      "BROWSER",
      "NODE_OPTIONS",
      "NODE_PATH",
      "npm_config_.*",
      "NPM_CONFIG_.*",
      "PYTHON.*",
      "PERL.*",
      "RUBY.*",
      "JAVA_TOOL_OPTIONS",
      "_JAVA_OPTIONS",
      "CLASSPATH",
      "LESSOPEN",
      "LESSCLOSE",
      "RIPGREP_CONFIG_PATH",
      "GREP_OPTIONS",
      "POSIXLY_CORRECT",
      "GCONV_PATH",
      "LOCPATH",
      "NLSPATH",
      "HOSTALIASES",
      "INPUTRC",
      "EXINIT",
      "VIMINIT",
      "ZDOTDIR"
    ].join("|") +
    ")$"
)

/**
 * True when assigning this variable before (or around) a command can change which code runs: PATH, LD_PRELOAD,
 * BASH_ENV, GIT_*, pagers, RIPGREP_CONFIG_PATH, … A command with such an assignment is never read-only.
 */
export const isRiskyAssignment = (name: string): boolean => riskyAssignment.test(name)
