/**
 * Shell command analysis for permissions and read-only detection (docs/permissions.md, docs/read-only-commands.md).
 */
import { Context } from "effect"
import type { CommandForm } from "../domain/PermissionRule.js"
import type { Template } from "../domain/shell/ShellExpansion.js"

/** One simple command of a compound command line, after stripping assignments and wrappers. */
export interface SimpleCommand {
  /** The command's source text as written (including assignments and wrappers). */
  readonly text: string
  /** The words after stripping leading `VAR=value` assignments and wrappers (`env`, `timeout`, …), unquoted. */
  readonly argv: ReadonlyArray<string>
  /** `argv` joined with single spaces: what `Bash(...)` allow rules are matched against. */
  readonly normalized: string
  /**
   * Every spelling deny and ask rules are matched against: as written, by base name, through every wrapper
   * (`sudo`, `xargs`, `find -exec`, `busybox`, …), `git` without its global options, code in `bash -c '…'`.
   * A `null` word is known only at run time and may be anything.
   */
  readonly forms: ReadonlyArray<CommandForm>
  /** The variables assigned for this command: leading `NAME=value` words and those of `env`/`sudo` around it. */
  readonly assigned?: ReadonlyArray<string> | undefined
  /** False when this command is not read-only (reasons then name it rather than another command of the line). */
  readonly readOnly?: boolean | undefined
}

/**
 * What a command line does to paths, in the order the shell meets it: each simple command's words (after
 * assignments and wrappers) as templates to expand, the directory a wrapper runs it in (`env -C`), and each file
 * redirection. `cd`, `pushd` and `popd` are commands like the others; whoever resolves the paths follows them.
 */
export type PathStep =
  | {
      readonly _tag: "Command"
      readonly words: ReadonlyArray<Template>
      /** `env -C DIR` / `env --chdir=DIR` around the command. */
      readonly chdir?: Template | undefined
      /** Why the wrapper's directory is not known (an `env` option the analyzer does not understand). */
      readonly chdirUnknown?: string | undefined
      /**
       * For the command `xargs` runs (its words hold the input's place): the command whose output is that input,
       * after line filters (`find … | grep x | xargs wc -l` gives `find …`), and whether xargs splits it at blanks.
       */
      readonly input?: { readonly producer: ReadonlyArray<Template>; readonly split: boolean } | undefined
      /** The line gives the command `SIMPLE_BACKUP_SUFFIX` (the suffix of `cp -b`, `mv -b` backups) at run time. */
      readonly backupSuffixAssigned?: boolean | undefined
    }
  | { readonly _tag: "Redirect"; readonly operator: string; readonly target: Template }

/** What the analyzer found in a command line. */
export interface ShellAnalysis {
  /** False when the input does not parse (tree-sitter reported errors); such input is never auto-allowed. */
  readonly parsed: boolean
  readonly commands: ReadonlyArray<SimpleCommand>
  /**
   * Constructs that an allow rule may never auto-allow (stricter than Claude Code; docs/permissions.md): command or
   * process substitution, eval, source/., exec, sh -c / bash -c, output redirection to anything but /dev/null or &N,
   * unparsable input. Each entry is a short human reason, e.g. "command substitution $(…)".
   */
  readonly dangers: ReadonlyArray<string>
  /**
   * Why the line is not enumerable: constructs and builtins through which it may start a program the analysis cannot
   * name (`trap` with code, `${x@P}`, arithmetic on a name, `declare -n`, …; see `Enumerability.ts`). Absent or
   * empty: every program the line can start is among `commands` and their forms.
   */
  readonly opaque?: ReadonlyArray<string> | undefined
  /** True only when every simple command is read-only and there are no dangers. */
  readonly readOnly: boolean
  /** The line's commands and redirections as paths are concerned, in order (absent: nothing known). */
  readonly pathSteps?: ReadonlyArray<PathStep> | undefined
}

/** The port. `analyze` is synchronous: the grammar is loaded when the layer is built. */
export class ShellAnalyzer extends Context.Tag("armature/ShellAnalyzer")<
  ShellAnalyzer,
  {
    readonly analyze: (command: string) => ShellAnalysis
  }
>() {}

/** A call's analysis, kept beside the call's decoded input. */
interface CallAnalysis {
  readonly analyzer: ShellAnalyzer["Type"]
  readonly command: string
  readonly analysis: ShellAnalysis
}

const byInput = new WeakMap<object, CallAnalysis>()

/**
 * The analysis of a call's command line, made once per call. It is kept beside the call's decoded input: that one
 * object travels from the executor's admission (`isConcurrencySafe`) through the permission decision
 * (`RulePermissionPolicy`, `isReadOnly`) and the result cache to the tool's own body (Bash's sandbox plan and its
 * lenient exit codes), so all of them read the same analysis and the command line is parsed once. A replaced input
 * (a hook's or the approver's `updatedInput`) is a new object, analysed once in its turn. Inputs that are not objects
 * are analysed each time.
 */
export const analysisOf = (analyzer: ShellAnalyzer["Type"], input: unknown, command: string): ShellAnalysis => {
  if (typeof input !== "object" || input === null) return analyzer.analyze(command)
  const known = byInput.get(input)
  if (known !== undefined && known.analyzer === analyzer && known.command === command) return known.analysis
  const analysis = analyzer.analyze(command)
  byInput.set(input, { analyzer, command, analysis })
  return analysis
}
