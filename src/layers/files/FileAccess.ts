/**
 * File primitives shared by the file tools (Read, Write, Edit): typed errors around node:fs, content hashes,
 * the read-before-write check against the FileStateCache, and an atomic, interruption-safe write.
 */

import * as Crypto from "node:crypto"
import type * as NodeFs from "node:fs"
import * as NodeFsSync from "node:fs"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { Effect, Exit, Option, Schema } from "effect"
import { ToolValidationError } from "../../domain/Errors.js"
import * as PersistedOutput from "../../domain/PersistedOutput.js"
import { type FileRecord, type FileStateCache, modifiedMessage, notReadMessage } from "../../services/FileStateCache.js"

/** A file operation failed; the message is meant for the model. */
export class FileError extends Schema.TaggedError<FileError>()("FileError", {
  message: Schema.String,
  /** The node:fs error code (`ENOENT`, `EACCES`, …), when there is one. */
  code: Schema.optional(Schema.String)
}) {}

const codeOf = (e: unknown): string | undefined =>
  typeof e === "object" && e !== null && "code" in e && typeof e.code === "string" ? e.code : undefined

const toFileError = (e: unknown): FileError =>
  new FileError({ message: e instanceof Error ? e.message : String(e), code: codeOf(e) })

/** Runs a node:fs promise as an Effect failing with a FileError. */
export const io = <A>(f: () => Promise<A>): Effect.Effect<A, FileError> =>
  Effect.tryPromise({ try: f, catch: toFileError })

/** The stats of a path, or none when it does not exist. */
export const stat = (path: string): Effect.Effect<Option.Option<NodeFs.Stats>, FileError> =>
  io(() => Fs.stat(path)).pipe(
    Effect.map(Option.some),
    Effect.catchIf(
      (e) => e.code === "ENOENT" || e.code === "ENOTDIR",
      () => Effect.succeed(Option.none())
    )
  )

/**
 * Whether a path exists now, synchronously: for predicates such as Write's `isDestructive`, which are plain functions
 * of the input.
 */
export const existsNow = (path: string): boolean => NodeFsSync.existsSync(path)

/** Reads a whole file. */
export const readBytes = (path: string): Effect.Effect<Uint8Array, FileError> => io(() => Fs.readFile(path))

/** The SHA-256 of some bytes, in hex. */
export const hashOf = (bytes: Uint8Array | string): string => Crypto.createHash("sha256").update(bytes).digest("hex")

/** Resolves a model-given path against the working directory and normalizes it. */
export const resolvePath = (cwd: string, path: string): string => Path.resolve(cwd, path)

/** The validation message for a file path that is not absolute. */
export const notAbsoluteMessage = (path: string): string =>
  `file_path must be an absolute path (for example /home/user/project/src/index.ts), got: ${path}`

/**
 * The `validate` of a file-writing tool: an absolute path, then the tool's own check of what the write would do,
 * with its failure worded for the model.
 */
export const validateWrite = <A>(
  filePath: string,
  cwd: string,
  check: (path: string) => Effect.Effect<A, FileError>
): Effect.Effect<void, ToolValidationError> =>
  Path.isAbsolute(filePath)
    ? check(resolvePath(cwd, filePath)).pipe(
        Effect.asVoid,
        Effect.mapError((e) => new ToolValidationError({ message: e.message }))
      )
    : Effect.fail(new ToolValidationError({ message: notAbsoluteMessage(filePath) }))

/** Formats a byte count for messages (`812 bytes`, `300.5KB`, `2.1MB`), as large-result previews do. */
export const formatSize = PersistedOutput.formatSize

/**
 * Checks that the model may overwrite an existing file: it was read (or written by a tool) in this session, and it
 * did not change since. The content's hash decides, whatever the modification time says: a changed mtime with
 * identical content (a `touch`) is fine and refreshes the record, and changed content under the old mtime and size
 * (`touch -r`, a tool that restores times) is refused.
 */
export const checkFresh = (
  cache: FileStateCache["Type"],
  path: string,
  current: NodeFs.Stats
): Effect.Effect<void, FileError> =>
  Effect.flatMap(cache.get(path), (recorded) => {
    if (Option.isNone(recorded)) return Effect.fail(new FileError({ message: notReadMessage }))
    return Effect.flatMap(readBytes(path), (bytes) => {
      const hash = hashOf(bytes)
      if (hash !== recorded.value.hash) return Effect.fail(new FileError({ message: modifiedMessage }))
      return recorded.value.mtimeMs === current.mtimeMs
        ? Effect.void
        : cache.record(path, { mtimeMs: current.mtimeMs, hash })
    })
  })

const chunkSize = 64 * 1024

const writeAll = (handle: Fs.FileHandle, data: Uint8Array): Effect.Effect<void, FileError> =>
  Effect.gen(function* () {
    let offset = 0
    while (offset < data.length) {
      const length = Math.min(chunkSize, data.length - offset)
      const position = offset
      // Each chunk completes before an interruption is seen; between chunks the write can be interrupted.
      const { bytesWritten } = yield* Effect.uninterruptible(io(() => handle.write(data, position, length, position)))
      offset += bytesWritten
    }
  })

/** Temp files older than this are stale whoever wrote them (a dead writer whose pid was reused). */
export const staleTempMs = 60 * 60 * 1000

/**
 * The temp file of an atomic write of `target`: `.{name}.{pid}-{random}.armature.tmp` beside it. The writer's pid
 * in the name lets a later process tell a crashed write's leftover from a write in progress.
 */
export const tempNameFor = (target: string, pid: number = process.pid): string =>
  Path.join(
    Path.dirname(target),
    `.${Path.basename(target)}.${pid}-${Crypto.randomBytes(6).toString("hex")}.armature.tmp`
  )

const tempPattern = /^\..+\.(?:(\d+)-)?[0-9a-f]{12}\.armature\.tmp$/

const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * Whether a temp file name is a leftover of a write that will never finish: its writer's pid (when the name has
 * one) is not running, or it is older than `staleTempMs`. A name without a pid (an older version's) is stale only
 * by age. Names that are not Armature temp files never are.
 */
export const isStaleTemp = (name: string, mtimeMs: number, now: number): boolean => {
  const match = tempPattern.exec(name)
  if (match === null) return false
  if (now - mtimeMs > staleTempMs) return true
  const pid = match[1] === undefined ? undefined : Number(match[1])
  return pid !== undefined && pid !== process.pid && !isRunning(pid)
}

/**
 * Removes the stale Armature temp files of a directory (see `isStaleTemp`); returns the paths removed. Errors are
 * ignored: cleaning is a courtesy, never a reason for a write to fail.
 */
export const removeStaleTemps = (dir: string): Effect.Effect<ReadonlyArray<string>> =>
  io(async () => {
    const removed: Array<string> = []
    const now = Date.now()
    for (const name of await Fs.readdir(dir)) {
      if (!name.endsWith(".armature.tmp")) continue
      const path = Path.join(dir, name)
      try {
        const stats = await Fs.lstat(path)
        if (stats.isFile() && isStaleTemp(name, stats.mtimeMs, now)) {
          await Fs.unlink(path)
          removed.push(path)
        }
      } catch {
        // Gone already, or not ours to remove.
      }
    }
    return removed
  }).pipe(Effect.orElseSucceed((): ReadonlyArray<string> => []))

/** Directories this process has already cleaned of stale temp files. */
const cleanedDirs = new Set<string>()

/**
 * Removes the stale temp files of each directory at once (a command's start does this for its working directories,
 * so a write killed by SIGKILL leaves nothing behind past the next start); returns the paths removed. Only names of
 * Armature's own temp pattern whose writer is gone (or that are over an hour old) are touched.
 */
export const sweepStaleTemps = (dirs: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<string>> =>
  Effect.map(
    Effect.forEach([...new Set(dirs.map((dir) => Path.resolve(dir)))], (dir) =>
      Effect.suspend(() => {
        cleanedDirs.add(dir)
        return removeStaleTemps(dir)
      })
    ),
    (removed) => removed.flat()
  )

/** Removes stale temp files from `dir` the first time this process writes into it. */
const cleanOnce = (dir: string): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (cleanedDirs.has(dir)) return Effect.void
    cleanedDirs.add(dir)
    return Effect.asVoid(removeStaleTemps(dir))
  })

/**
 * Writes a file atomically: the bytes go to a temporary file in the same directory, which is synced and renamed over
 * the target. The target is never seen half-written; an interruption or failure before the rename removes the
 * temporary file and leaves the target as it was. `mode` (e.g. the original file's permissions) is applied to the
 * temporary file before the rename. `onCommit` runs in the same uninterruptible step as the rename (to record the new
 * state in the FileStateCache). Returns the written file's record. A write killed outright (SIGKILL, power loss) leaves
 * its temp file behind; the first write of a later process into that directory removes it (`removeStaleTemps`).
 */
export const writeAtomic = (
  path: string,
  data: Uint8Array,
  mode: number | undefined,
  onCommit: (record: FileRecord) => Effect.Effect<void> = () => Effect.void
): Effect.Effect<FileRecord, FileError> =>
  Effect.gen(function* () {
    const target = yield* io(() => Fs.realpath(path)).pipe(Effect.orElseSucceed(() => path))
    yield* cleanOnce(Path.dirname(target))
    const temp = tempNameFor(target)
    return yield* Effect.acquireUseRelease(
      io(() => Fs.open(temp, "wx", mode ?? 0o666)),
      (handle) =>
        Effect.gen(function* () {
          yield* writeAll(handle, data)
          yield* Effect.uninterruptible(io(() => handle.sync()))
          if (mode !== undefined) yield* Effect.uninterruptible(io(() => handle.chmod(mode)))
          return yield* Effect.uninterruptible(
            Effect.zipRight(
              io(() => Fs.rename(temp, target)),
              Effect.map(
                io(() => Fs.stat(target)),
                (s): FileRecord => ({ mtimeMs: s.mtimeMs, hash: hashOf(data) })
              )
            ).pipe(Effect.tap(onCommit))
          )
        }),
      (handle, exit) =>
        Effect.zipRight(
          io(() => handle.close()).pipe(Effect.ignore),
          Exit.isFailure(exit) ? io(() => Fs.unlink(temp)).pipe(Effect.ignore) : Effect.void
        )
    )
  })

/** Creates the parent directories of a path. */
export const makeParents = (path: string): Effect.Effect<void, FileError> =>
  Effect.asVoid(io(() => Fs.mkdir(Path.dirname(path), { recursive: true })))

/** The error for a missing file (with an optional suggestion). */
export const notFoundMessage = (suggestion: Option.Option<string>): string =>
  Option.match(suggestion, {
    onNone: () => "File does not exist.",
    onSome: (s) => `File does not exist. Did you mean ${s}?`
  })

const editDistance = (a: string, b: string): number => {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1))
      diagonal = above
    }
  }
  return row[b.length]
}

/**
 * Of the entries of `path`'s directory, the one whose name is most like `path`'s (same name ignoring case or
 * extension, or a small typo), as a path, if any.
 */
export const closestSibling = (path: string, entries: ReadonlyArray<string>): Option.Option<string> => {
  const dir = Path.dirname(path)
  const name = Path.basename(path)
  const stem = (n: string) => n.slice(0, n.length - Path.extname(n).length).toLowerCase()
  const scored = entries
    .map((entry) => {
      const score =
        entry.toLowerCase() === name.toLowerCase()
          ? 0
          : stem(entry) === stem(name) && stem(name).length > 0
            ? 1
            : editDistance(entry.toLowerCase(), name.toLowerCase()) + 1
      return { entry, score }
    })
    .filter(({ score }) => score <= Math.min(3, Math.max(1, Math.floor(name.length / 4)) + 1))
    .sort((a, b) => a.score - b.score || (a.entry < b.entry ? -1 : 1))
  return Option.map(Option.fromNullable(scored[0]), ({ entry }) => Path.join(dir, entry))
}

/** A sibling file with a similar name (same name ignoring case or extension, or a small typo), if any. */
export const similarSibling = (path: string): Effect.Effect<Option.Option<string>> =>
  io(() => Fs.readdir(Path.dirname(path))).pipe(
    Effect.map((entries) => closestSibling(path, entries)),
    Effect.orElseSucceed(() => Option.none())
  )
