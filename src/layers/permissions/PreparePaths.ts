/**
 * Paths as the OS opens them: `~` expanded, made absolute, symlinks resolved component by component.
 */
import * as Path from "node:path"
import { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import { child, walkWith } from "../shell/PathResolver.js"
import type { PreparedPath } from "./Prepared.js"

/**
 * Resolves an absolute path the way the OS opens it: component by component, following each symlink before the
 * next `..` is applied (Node's `fs.realpath` collapses `..` first, which a symlink can escape). Components past the
 * longest existing prefix are appended lexically.
 */
export const realpathLoose = (path: string): Effect.Effect<string, never, FileSystem.FileSystem> =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    walkWith(path, ({ dir, name }) =>
      fs.realPath(child(dir, name)).pipe(
        Effect.match({
          onFailure: () => ({ path: child(dir, name), exists: false }),
          onSuccess: (real) => ({ path: real, exists: true })
        })
      )
    )
  ).pipe(Effect.map((found) => found.path))

const expand = (given: string, cwd: string, home: string): string => {
  if (given === "~") return home
  if (given.startsWith("~/")) return `${home}/${given.slice(2)}`
  if (Path.isAbsolute(given)) return given
  return `${cwd.replace(/\/+$/, "")}/${given}`
}

/**
 * A path in both forms it may be opened as: as the OS would follow it (symlink, then `..`) and as a tool that
 * normalizes `..` first would; each with symlinks resolved.
 */
export const preparePath = (given: string, cwd: string, home: string) =>
  Effect.gen(function* () {
    const raw = expand(given, cwd, home)
    const forms = [yield* realpathLoose(raw), yield* realpathLoose(Path.resolve(raw))]
    return { given, forms: [...new Set(forms)] } satisfies PreparedPath
  })
