/**
 * Which directories to watch so that an edit of a settings file is seen (docs/library.md, "Live configuration").
 * A file is watched through its directory, since editors often replace a file (write elsewhere, rename over it) and
 * a watch on the file itself would end there. A directory that does not exist yet is watched for through its
 * nearest existing ancestor.
 */
import * as Path from "node:path"

/** One directory, watched without its subdirectories, and the names in it whose change means "read again". */
export interface WatchTarget {
  readonly dir: string
  readonly names: ReadonlyArray<string>
}

/** The targets for `files`, given the directories that exist now; one target per directory, in first-seen order. */
export const targetsOf = (files: ReadonlyArray<string>, existing: ReadonlySet<string>): ReadonlyArray<WatchTarget> => {
  const names = new Map<string, Array<string>>()
  const add = (dir: string, name: string) => {
    const list = names.get(dir) ?? []
    if (!list.includes(name)) list.push(name)
    names.set(dir, list)
  }
  for (const file of files) {
    let child = Path.resolve(file)
    let dir = Path.dirname(child)
    while (!existing.has(dir) && Path.dirname(dir) !== dir) {
      child = dir
      dir = Path.dirname(dir)
    }
    if (existing.has(dir)) add(dir, Path.basename(child))
  }
  return [...names].map(([dir, list]) => ({ dir, names: list }))
}

/** Every directory `targetsOf` may need to know about for `files`: each file's ancestors, nearest first. */
export const candidateDirs = (files: ReadonlyArray<string>): ReadonlyArray<string> => {
  const dirs: Array<string> = []
  for (const file of files) {
    let dir = Path.dirname(Path.resolve(file))
    for (;;) {
      if (!dirs.includes(dir)) dirs.push(dir)
      const parent = Path.dirname(dir)
      if (parent === dir) break
      dir = parent
    }
  }
  return dirs
}

/** Whether a watch event's path (a name relative to the target, or an absolute path) is one of the target's names. */
export const concerns = (target: WatchTarget, eventPath: string): boolean =>
  target.names.includes(Path.basename(eventPath))

/** Two target lists watch the same things. */
export const sameTargets = (a: ReadonlyArray<WatchTarget>, b: ReadonlyArray<WatchTarget>): boolean =>
  a.length === b.length &&
  a.every(
    (t, i) => t.dir === b[i].dir && t.names.length === b[i].names.length && t.names.every((n, j) => n === b[i].names[j])
  )
