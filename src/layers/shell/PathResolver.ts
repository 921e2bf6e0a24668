/**
 * Paths resolved the way the OS opens them, cached for one permission decision: component by component, each
 * symlink followed before the next `..` is applied, a dangling symlink followed to the target it would create.
 * Each directory is listed at most once (a name it does not hold needs no further system call), and each distinct
 * prefix is resolved once, so a command naming 50,000 paths costs one listing per directory, not 50,000 lookups.
 */
import * as Path from "node:path"
import { FileSystem } from "@effect/platform"
import { Effect, Option } from "effect"

/** The most symlinks followed for one path (as the kernel's ELOOP limit). */
const maxLinks = 40

/** Resolves absolute paths; the cache lives as long as the resolver. */
export interface PathResolver {
  /** The path with every symlink of an existing prefix resolved (a dangling link: its target). */
  readonly resolve: (path: string) => Effect.Effect<string>
  /** The names in a directory (symlinks not followed), or undefined when it cannot be listed. */
  readonly list: (dir: string) => Effect.Effect<ReadonlySet<string> | undefined>
}

/** Builds a resolver with an empty cache. */
export const make = Effect.gen(function* () {
  const fs = yield* FileSystem.FileSystem
  const listings = new Map<string, ReadonlySet<string> | undefined>()
  /** Resolved form of `real dir + "/" + name`, and whether it exists. */
  const entries = new Map<string, { readonly path: string; readonly exists: boolean }>()

  const list = (dir: string): Effect.Effect<ReadonlySet<string> | undefined> => {
    const cached = listings.get(dir)
    if (cached !== undefined || listings.has(dir)) return Effect.succeed(cached)
    return fs.readDirectory(dir).pipe(
      Effect.map((names): ReadonlySet<string> | undefined => new Set(names)),
      Effect.orElseSucceed(() => undefined),
      Effect.tap((names) => Effect.sync(() => listings.set(dir, names)))
    )
  }

  const entry = (
    dir: string,
    name: string,
    depth: number
  ): Effect.Effect<{ readonly path: string; readonly exists: boolean }> =>
    Effect.gen(function* () {
      const next = dir === "/" ? `/${name}` : `${dir}/${name}`
      const cached = entries.get(next)
      if (cached !== undefined) return cached
      const names = yield* list(dir)
      let found: { readonly path: string; readonly exists: boolean }
      if (names !== undefined && !names.has(name)) found = { path: next, exists: false }
      else {
        const real = yield* fs.realPath(next).pipe(Effect.option)
        if (Option.isSome(real)) found = { path: real.value, exists: true }
        else {
          const target = yield* fs.readLink(next).pipe(Effect.option)
          found =
            Option.isSome(target) && depth < maxLinks
              ? yield* walk(Path.isAbsolute(target.value) ? target.value : `${dir}/${target.value}`, depth + 1)
              : { path: next, exists: false }
        }
      }
      entries.set(next, found)
      return found
    })

  const walk = (path: string, depth: number): Effect.Effect<{ readonly path: string; readonly exists: boolean }> =>
    Effect.gen(function* () {
      let current = "/"
      let exists = true
      for (const segment of path.split("/")) {
        if (segment === "" || segment === ".") continue
        if (segment === "..") {
          current = Path.dirname(current)
          continue
        }
        if (!exists) {
          current = current === "/" ? `/${segment}` : `${current}/${segment}`
          continue
        }
        const found = yield* entry(current, segment, depth)
        current = found.path
        exists = found.exists
      }
      return { path: current, exists }
    })

  return {
    resolve: (path: string) => walk(path, 0).pipe(Effect.map((found) => found.path)),
    list
  } satisfies PathResolver
})
