/**
 * The file system a permission decision asks: the platform's, with the calls a decision makes by the dozen (a
 * directory's names, a link's target, a path's real form) answered synchronously. They are small metadata calls
 * whose cost is dominated by the round trip through libuv's thread pool and back into the fiber scheduler when
 * made asynchronously: measured on the corpora's commands, the decision's median fell from about 3.6 ms to under
 * a millisecond with the same answers (bench/BashCorpusDecision.bench.ts). The semantics are Node's own
 * (`fs.realpathSync` is the same JavaScript resolution as `fs.realpath`). The other calls stay as they were.
 */
import * as Fs from "node:fs"
import { type FileSystem, Error as PlatformError } from "@effect/platform"
import { Effect } from "effect"

const failure = (method: string, path: string, error: unknown) => {
  const code = (error as NodeJS.ErrnoException).code
  return new PlatformError.SystemError({
    reason: code === "ENOENT" ? "NotFound" : code === "EACCES" ? "PermissionDenied" : "Unknown",
    module: "FileSystem",
    method,
    pathOrDescriptor: path,
    syscall: (error as NodeJS.ErrnoException).syscall,
    description: (error as Error).message,
    cause: error
  })
}

const sync = <A>(method: string, path: string, run: () => A) =>
  Effect.try({ try: run, catch: (error) => failure(method, path, error) })

/** `fs` with its directory listings, link reads and real paths made synchronously. */
export const of = (fs: FileSystem.FileSystem): FileSystem.FileSystem => ({
  ...fs,
  readDirectory: (path, options) =>
    options?.recursive === true
      ? fs.readDirectory(path, options)
      : sync("readDirectory", path, () => Fs.readdirSync(path)),
  readLink: (path) => sync("readLink", path, () => Fs.readlinkSync(path)),
  realPath: (path) => sync("realPath", path, () => Fs.realpathSync(path))
})
