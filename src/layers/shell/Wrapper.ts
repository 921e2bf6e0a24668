/**
 * The data format of a wrapper table entry: how a command that runs another command given as its arguments (`env`,
 * `timeout`, `xargs`, …) parses its own options and where the wrapped command starts. The entries are in
 * WrapperTables.ts and RunnerWrappers.ts.
 */
import type { OptionTable } from "../../domain/shell/OptionParser.js"

/** How a wrapper runs its command. */
export interface Wrapper {
  readonly options: OptionTable
  /** Operands before the command (`timeout`'s DURATION, `chroot`'s NEWROOT, `taskset`'s MASK). */
  readonly leading?: number
  /** `NAME=VALUE` words before the command set its environment (`env`, `sudo`). */
  readonly assignments?: boolean
  /** Options whose value is a command line split into words (`env -S`): they may name the command. */
  readonly split?: ReadonlyArray<string>
  /** Options with which no command runs (`command -v` only looks it up). */
  readonly noCommand?: ReadonlyArray<string>
  /** The command gets more words from the input (`xargs`); with no command, it runs `echo`. */
  readonly appends?: boolean
  /** Options whose value is replaced in the command's words by input (`xargs -I {}`; `-i` means `{}`). */
  readonly replace?: ReadonlyArray<string>
  /**
   * Options whose value is shell code the wrapper hands to a shell (`flock -c CMD`, `su -c CMD`), also when they
   * stand first in place of the command (`flock FILE -c CMD`).
   */
  readonly code?: ReadonlyArray<string>
  /** The command's words are joined with blanks and run by a shell (`watch`, `sg`), so they are code. */
  readonly joined?: boolean
  /** A lone `-` is an option (`env -` is `env -i`). */
  readonly dash?: boolean
  /**
   * Transparent: allow rules and the read-only analysis see the wrapped command (`timeout 5 ls` is `ls`). The others
   * (`sudo`, `xargs`, …) are commands in their own right for those; deny and ask rules look through all of them.
   */
  readonly transparent?: boolean
  /**
   * Options whose value is a file the wrapper itself writes (`time -o FILE`): a transparent wrapper given one is not
   * stripped, so the line is judged with the write (never read-only, the file checked as a path).
   */
  readonly writes?: ReadonlyArray<string>
}
