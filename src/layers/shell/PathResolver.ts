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

/** Where a path component leads, and whether it exists. */
export interface Found {
  readonly path: string
  readonly exists: boolean
}

/** One component to resolve: `name` inside the already resolved directory `dir`. */
export interface Lookup {
  readonly dir: string
  readonly name: string
}

/** `dir/name` without doubling the root's slash. */
export const child = (dir: string, name: string): string => (dir === "/" ? `/${name}` : `${dir}/${name}`)

const parent = (dir: string): string => {
  const slash = dir.lastIndexOf("/")
  return slash <= 0 ? "/" : dir.slice(0, slash)
}

/**
 * The walk every resolver shares, as the OS opens a path: `.` skipped, `..` taken from the resolved directory (so
 * after a symlink, not lexically), each other component of the existing prefix handed out as a {@link Lookup} and
 * replaced by where it leads; components past the first missing one are appended as written. Drive it with
 * {@link walkWith} (effectful lookups) or step it by hand (lookups answered from a cache).
 */
export function* components(path: string): Generator<Lookup, Found, Found> {
  let current = "/"
  let exists = true
  for (const name of path.split("/")) {
    if (name === "" || name === ".") continue
    if (name === "..") {
      current = parent(current)
      continue
    }
    if (!exists) {
      current = child(current, name)
      continue
    }
    const found: Found = yield { dir: current, name }
    current = found.path
    exists = found.exists
  }
  return { path: current, exists }
}

/** Runs {@link components} with an effectful lookup per component. */
export const walkWith = <E, R>(
  path: string,
  lookup: (step: Lookup) => Effect.Effect<Found, E, R>
): Effect.Effect<Found, E, R> =>
  Effect.suspend(() => {
    const steps = components(path)
    const loop = (next: IteratorResult<Lookup, Found>): Effect.Effect<Found, E, R> =>
      next.done ? Effect.succeed(next.value) : Effect.flatMap(lookup(next.value), (found) => loop(steps.next(found)))
    return loop(steps.next())
  })

/**
 * A path inside one process's `/proc` directory (`/proc/self/cwd/…`, `/proc/thread-self/root/…`, `/proc/42/fd/3`):
 * what it names depends on the process that opens it, which is the shell, not this one. It is never resolved.
 */
export const isProcessPath = (path: string): boolean => {
  const parts = path.split("/").filter((part) => part !== "" && part !== ".")
  return parts.length > 2 && parts[0] === "proc" && /^(?:self|thread-self|\d+)$/.test(parts[1])
}

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
  const entries = new Map<string, Found>()

  const list = (dir: string): Effect.Effect<ReadonlySet<string> | undefined> => {
    const cached = listings.get(dir)
    if (cached !== undefined || listings.has(dir)) return Effect.succeed(cached)
    return fs.readDirectory(dir).pipe(
      Effect.map((names): ReadonlySet<string> | undefined => new Set(names)),
      Effect.orElseSucceed(() => undefined),
      Effect.tap((names) => Effect.sync(() => listings.set(dir, names)))
    )
  }

  const entry = (dir: string, name: string, depth: number): Effect.Effect<Found> =>
    Effect.gen(function* () {
      const next = child(dir, name)
      const cached = entries.get(next)
      if (cached !== undefined) return cached
      // Inside /proc/<pid>/ the links (cwd, root, fd/N) lead where this process's do: left as written.
      if (isProcessPath(next)) return { path: next, exists: true }
      const names = yield* list(dir)
      let found: Found
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

  const walk = (path: string, depth: number): Effect.Effect<Found> =>
    walkWith(path, (step) => entry(step.dir, step.name, depth))

  /** A component answered from the caches alone (a listing that lacks the name proves it missing), else undefined. */
  const known = (step: Lookup): Found | undefined => {
    const next = child(step.dir, step.name)
    const found = entries.get(next)
    if (found !== undefined) return found
    const names = listings.get(step.dir)
    if (names === undefined || names.has(step.name)) return undefined
    const missing = { path: next, exists: false }
    entries.set(next, missing)
    return missing
  }

  /** The resolved path from the caches alone, or undefined when the file system must be asked. */
  const cached = (path: string): string | undefined => {
    const steps = components(path)
    let next = steps.next()
    while (!next.done) {
      const found = known(next.value)
      if (found === undefined) return undefined
      next = steps.next(found)
    }
    return next.value.path
  }

  return {
    resolve: (path: string) =>
      Effect.suspend(() => {
        const hit = cached(path)
        return hit !== undefined ? Effect.succeed(hit) : walk(path, 0).pipe(Effect.map((found) => found.path))
      }),
    list
  } satisfies PathResolver
})
