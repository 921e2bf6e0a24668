/**
 * What a recursive read of a directory (`grep -r`, `rg`) can reach that a Read rule protects: the tree is walked
 * when the call is decided (breadth first, bounded), so a directory that merely *could* hold a protected name
 * (`Read(**\/.env)` and any directory) counts only when it does. A searcher that leaves out hidden files (`rg`)
 * is walked without them, and one that leaves out gitignored files has those removed as git says; one given a name
 * filter (`rg -g '*.js'`) reaches only the files the filter passes. For names xargs splits at blanks (`split`), a
 * name holding a blank or a quote makes the answer unknown. A command known to keep the links inside the tree as
 * links (`cp -r`, `grep -r`, `rg` without `-L`) reads nothing through them: a link is then only a name (still counted
 * when a rule covers it). Undefined when the walk cannot tell: too many entries, or a symlinked directory met by a
 * command that may follow it (its contents may be anywhere).
 */
import * as Fs from "node:fs"
import type { Skips } from "../../domain/shell/CommandEffect.js"
import * as NameFilter from "../../domain/shell/NameFilter.js"
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
  budget: Budget,
  split = false,
  followsLinks = true
): ReadonlyArray<string> | undefined => {
  const found: Array<string> = []
  let otherIgnores = false
  let info: Fs.Stats
  try {
    info = Fs.statSync(root)
  } catch {
    return []
  }
  const only = skips?.only
  const passes = (path: string) => only === undefined || NameFilter.passes(only, path)
  if (!info.isDirectory()) return wanted(root) && passes(root) ? [root] : []
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
      // Names xargs splits at blanks or unquotes may become any other name.
      if (split && /[\s'"\\]/.test(entry.name)) return undefined
      const path = `${dir === "/" ? "" : dir}/${entry.name}`
      if (entry.isSymbolicLink()) {
        if (!followsLinks) {
          if (wanted(path) && passes(path)) found.push(path)
          continue
        }
        try {
          if (Fs.statSync(path).isDirectory()) return undefined
        } catch {}
      }
      const directory = entry.isDirectory()
      // Under a name filter, a directory is only walked: what is read are the files in it the filter passes.
      if (wanted(path) && (only === undefined || (!directory && passes(path)))) found.push(path)
      if (directory) queue.push(path)
    }
  }
  if (skips?.ignored !== true || otherIgnores || found.length === 0) return found
  const ignored = GitStored.ignoredAmong(root, found)
  return ignored === undefined ? found : found.filter((path) => !ignored.has(path))
}
