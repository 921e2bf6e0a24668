/**
 * What the Bash path stage checks, prepared once per call: the paths a command line reads and writes, the ones only
 * known when it runs, and the Read/Edit rules that apply to them (see BashPaths.ts, which builds and checks it).
 */

import type { Segment } from "../../domain/shell/PathGlob.js"
import type * as ShellPaths from "../shell/ShellPaths.js"
import type { PreparedRule } from "./PreparedRule.js"

/** A Read or Edit rule that applies to Bash paths, with its anchor resolved. */
export interface PathRule extends PreparedRule {
  readonly anchor: string
  readonly pattern: string
  readonly access: "read" | "write"
  /** The segments the rule covers (see `ruleCoverage`), case-insensitive. */
  readonly coverage: ReadonlyArray<Segment>
  /** The anchor in lower case: a path neither above nor below it cannot be covered. */
  readonly lowerAnchor: string
}

/**
 * A path as the stage checks it: for a read by a git command that prints only what git stores, the paths git
 * stores for its repository (undefined when git could not tell: everything under the path counts).
 */
export interface CheckedPath extends ShellPaths.BashPath {
  readonly stored?: ReadonlyArray<string> | undefined
  /**
   * For a directory read with its contents: the paths under it that a Read rule covers and the command reaches
   * (see TreeReach); undefined when unknown (everything under it counts).
   */
  readonly present?: ReadonlyArray<string> | undefined
}

/** What the Bash path stage needs, prepared once per call. */
export interface BashPathCheck {
  readonly paths: ReadonlyArray<CheckedPath>
  readonly unresolved: ReadonlyArray<ShellPaths.UnresolvedPath>
  readonly rules: ReadonlyArray<PathRule>
  /**
   * The line writes somewhere before it may read (so a glob may match a file that does not exist yet): a glob is
   * then checked for every path it could match, not only for those it matches now.
   */
  readonly changesTree: boolean
  /** Writes whose target an earlier command of the line may have replaced (`mv a h && cp x h/y`). */
  readonly afterChange: ReadonlyArray<ShellPaths.ChangedWrite>
  /** Reads whose path an earlier command of the line may have replaced (`cp -r tree c && cat c/link/key`). */
  readonly readAfterChange: ReadonlyArray<ShellPaths.ChangedWrite>
}
