/**
 * Paths as the OS opens them: `~` expanded, made absolute, symlinks resolved component by component.
 */
import * as Path from "node:path"
import { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import type { PreparedPath } from "./Prepared.js"

/**
 * Resolves an absolute path the way the OS opens it: component by component, following each symlink before the
 * next `..` is applied (Node's `fs.realpath` collapses `..` first, which a symlink can escape). Components past the
 * longest existing prefix are appended lexically.
 */
export const realpathLoose = (path: string): Effect.Effect<string, never, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    let current = "/"
    let exists = true
    for (const segment of path.split("/")) {
      if (segment === "" || segment === ".") continue
      if (segment === "..") {
        current = Path.dirname(current)
        continue
      }
      const next = Path.join(current, segment)
      if (!exists) {
        current = next
        continue
      }
      const real = yield* fs.realPath(next).pipe(Effect.option)
      if (real._tag === "Some") current = real.value
      else {
        exists = false
        current = next
      }
    }
    return current
  })

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
