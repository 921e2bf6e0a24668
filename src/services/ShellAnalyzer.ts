/**
 * Shell command analysis for permissions and read-only detection (SPEC §5.2).
 */
import { Context } from "effect"
import type { CommandForm } from "../domain/PermissionRule.js"

/** One simple command of a compound command line, after stripping assignments and wrappers. */
export interface SimpleCommand {
  /** The command's source text as written (including assignments and wrappers). */
  readonly text: string
  /** The words after stripping leading `VAR=value` assignments and the wrappers of SPEC §5.2, unquoted. */
  readonly argv: ReadonlyArray<string>
  /** `argv` joined with single spaces: what `Bash(...)` allow rules are matched against. */
  readonly normalized: string
  /**
   * Every spelling deny and ask rules are matched against: as written, by base name, through every wrapper
   * (`sudo`, `xargs`, `find -exec`, `busybox`, …), `git` without its global options, code in `bash -c '…'`.
   * A `null` word is known only at run time and may be anything.
   */
  readonly forms: ReadonlyArray<CommandForm>
}

/** What the analyzer found in a command line. */
export interface ShellAnalysis {
  /** False when the input does not parse (tree-sitter reported errors); such input is never auto-allowed. */
  readonly parsed: boolean
  readonly commands: ReadonlyArray<SimpleCommand>
  /**
   * Constructs that an allow rule may never auto-allow (SPEC §5.2 stricter): command or process substitution,
   * eval, source/., exec, sh -c / bash -c, output redirection to anything but /dev/null or &N, unparsable input.
   * Each entry is a short human reason, e.g. "command substitution $(…)".
   */
  readonly dangers: ReadonlyArray<string>
  /** True only when every simple command is read-only and there are no dangers. */
  readonly readOnly: boolean
}

/** The port. `analyze` is synchronous: the grammar is loaded when the layer is built. */
export class ShellAnalyzer extends Context.Tag("armature/ShellAnalyzer")<
  ShellAnalyzer,
  {
    readonly analyze: (command: string) => ShellAnalysis
  }
>() {}
