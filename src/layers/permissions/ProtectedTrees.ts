/**
 * Protected names inside the trees a recursive copy or move touches: `cp -r evil/. sub/` rewrites `sub/.git/hooks`
 * when `evil/` holds a `.git/`, and `cp -r repo sub/` plants a `.claude/` wherever `repo/` holds one. The policy
 * walks the directories such a command names (sources and destinations) and asks when one holds a protected path
 * (src/domain/ProtectedPaths.ts) at any depth, or is too large to look through.
 */
import * as Fs from "node:fs"
import { Effect } from "effect"

/** What a walk of one directory found. */
export type TreeFinding =
  | { readonly _tag: "Holds"; readonly root: string; readonly path: string }
  | { readonly _tag: "TooLarge"; readonly root: string }

/** The most entries looked at for one call, over all its trees: past it, the trees count as holding anything. */
export const maxEntries = 20_000

/**
 * Walks each directory (breadth first, not through symlinked directories, which a plain recursive copy copies as
 * links) until an entry's path relative to its root is one `isProtected` names (`sub/.git`, `.config/fish`);
 * stops at the first finding or when `budget` entries were seen. Paths that are not directories hold nothing.
 */
export const findProtected = (
  roots: ReadonlyArray<string>,
  isProtected: (relative: string) => boolean,
  budget: number = maxEntries
): Effect.Effect<TreeFinding | undefined> =>
  Effect.sync(() => {
    let seen = 0
    for (const root of roots) {
      const queue = [root]
      while (queue.length > 0) {
        const dir = queue.shift()!
        let entries: ReadonlyArray<Fs.Dirent>
        try {
          entries = Fs.readdirSync(dir, { withFileTypes: true })
        } catch {
          continue
        }
        for (const entry of entries) {
          seen++
          const path = `${dir === "/" ? "" : dir}/${entry.name}`
          if (isProtected(path.slice(root.length + (root === "/" ? 0 : 1))))
            return { _tag: "Holds", root, path } as const
          if (seen > budget) return { _tag: "TooLarge", root } as const
          if (entry.isDirectory()) queue.push(path)
        }
      }
    }
    return undefined
  })
