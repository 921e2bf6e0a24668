/**
 * Which paths may not be read: the Read deny rules, as a predicate the search tools (Grep, Glob) apply to every
 * file and directory they visit, so that a search over a directory never returns what Read itself would refuse.
 */
import { Context, type Effect } from "effect"

/**
 * The rule (as shown to the model: the rule as written and its source) that forbids reading an absolute path, or
 * undefined when it may be read. `isDirectory` lets a rule such as `Read(./secrets/**)` prune a whole directory.
 */
export type Check = (path: string, isDirectory: boolean) => string | undefined

/** What one search needs to know. */
export interface SearchScope {
  /** The tool searching (`Grep`, `Glob`): its own deny rules apply besides `Read(...)` ones. */
  readonly tool: string
  /** The absolute directory (or file) searched. */
  readonly root: string
  /** The working directory relative rules are anchored at. */
  readonly cwd: string
}

/** The port. */
export class ReadGuard extends Context.Tag("armature/ReadGuard")<
  ReadGuard,
  {
    /**
     * The check for one search, or undefined when no deny rule can match anything under its root (the search then
     * runs unguarded, at full speed).
     */
    readonly forSearch: (scope: SearchScope) => Effect.Effect<Check | undefined>
  }
>() {}
