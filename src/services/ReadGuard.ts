/**
 * Which paths may not be read: the Read deny rules, as a predicate the search tools (Grep, Glob) apply to every
 * file and directory they visit, so that a search over a directory never returns what Read itself would refuse.
 */
import { Context, Layer } from "effect"

/** The port. */
export class ReadGuard extends Context.Tag("armature/ReadGuard")<
  ReadGuard,
  {
    /**
     * The rule (as written, with its source) that forbids reading this absolute path, or undefined when it may be
     * read. `isDirectory` lets a rule such as `Read(./secrets/**)` prune the whole directory.
     */
    readonly deniedBy: (path: string, isDirectory: boolean) => string | undefined
  }
>() {}

/** A guard that denies nothing (no Read deny rules). */
export const layerAllowAll: Layer.Layer<ReadGuard> = Layer.succeed(
  ReadGuard,
  ReadGuard.of({ deniedBy: () => undefined })
)
