/**
 * What a recursive read of a directory (`grep -r`, `rg`) can reach that a Read rule protects: the tree is walked
 * when the call is decided (breadth first, bounded), so a directory that merely *could* hold a protected name
 * (`Read(**\/.env)` and any directory) counts only when it does. A searcher that leaves out hidden files (`rg`)
 * is walked without them, and one that leaves out gitignored files has those removed as git says. Undefined when
 * the walk cannot tell: too many entries, or a symlinked directory (whose contents may be anywhere).
 */
import * as Fs from "node:fs"
import type { Skips } from "../../domain/shell/CommandEffect.js"
import * as GitStored from "./GitStored.js"

/** The most entries looked at for one call, over all its trees. */
export const maxEntries = 20_000

/** Files whose presence gives rg other ignore rules than git's. */
const ignoreFiles = new Set([".ignore", ".rgignore"])

/** Mutable budget shared by the walks of one call. */
export interface Budget {
  left: number
}

/** The protected paths (as `wanted` says) a recursive read of `root` reaches; undefined when unknown. */
export const reachable = (
  root: string,
  skips: Skips | undefined,
  wanted: (path: string) => boolean,
  budget: Budget
): ReadonlyArray<string> | undefined => {
  const found: Array<string> = []
  let otherIgnores = false
  let info: Fs.Stats
  try {
    info = Fs.statSync(root)
  } catch {
    return []
  }
  if (!info.isDirectory()) return wanted(root) ? [root] : []
  const queue = [root]
  while (queue.length > 0) {
    const dir = queue.shift()!
    let entries: ReadonlyArray<Fs.Dirent>
    try {
      entries = Fs.readdirSync(dir, { withFileTypes: true })
    } catch {
      return undefined
    }
    for (const entry of entries) {
      if (--budget.left < 0) return undefined
      if (ignoreFiles.has(entry.name)) otherIgnores = true
      if (skips?.hidden === true && entry.name.startsWith(".")) continue
      const path = `${dir === "/" ? "" : dir}/${entry.name}`
      if (entry.isSymbolicLink()) {
        try {
          if (Fs.statSync(path).isDirectory()) return undefined
        } catch {}
      }
      if (wanted(path)) found.push(path)
      if (entry.isDirectory()) queue.push(path)
    }
  }
  if (skips?.ignored !== true || otherIgnores || found.length === 0) return found
  const ignored = GitStored.ignoredAmong(root, found)
  return ignored === undefined ? found : found.filter((path) => !ignored.has(path))
}
