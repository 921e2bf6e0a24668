/**
 * Read on a fake disk: the tool's `call` needs a FileSystem in its type, the layer that registers it provides one, and
 * any FileSystem serves. Here an in-memory one built from `FileSystem.layerNoop` (whose every other operation fails),
 * with nothing on the real disk at those paths.
 */
import { FileSystem } from "@effect/platform"
import { SystemError } from "@effect/platform/Error"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as Tool from "../../../src/domain/Tool.js"
import * as FileStateCacheLive from "../../../src/layers/files/FileStateCacheLive.js"
import * as ToolRegistryLive from "../../../src/layers/registry/ToolRegistryLive.js"
import * as Read from "../../../src/layers/tools/Read.js"
import { FileStateCache } from "../../../src/services/FileStateCache.js"
import { ToolRegistry } from "../../../src/services/ToolRegistry.js"
import { contextFor } from "./FileToolHarness.js"

const mtime = new Date(Date.UTC(2026, 0, 2, 3, 4, 5))

/** A disk of one directory, `/fake`, holding the given files. */
const fakeDisk = (files: Readonly<Record<string, string>>) => {
  const encoder = new TextEncoder()
  const notFound = (method: string, path: string) =>
    new SystemError({ reason: "NotFound", module: "FileSystem", method, pathOrDescriptor: path, syscall: method })
  const info = (type: FileSystem.File.Type, size: number): FileSystem.File.Info => ({
    type,
    mtime: Option.some(mtime),
    atime: Option.none(),
    birthtime: Option.none(),
    dev: 0,
    ino: Option.none(),
    mode: 0o644,
    nlink: Option.none(),
    uid: Option.none(),
    gid: Option.none(),
    rdev: Option.none(),
    size: FileSystem.Size(size),
    blksize: Option.none(),
    blocks: Option.none()
  })
  return FileSystem.layerNoop({
    stat: (path) =>
      path === "/fake"
        ? Effect.succeed(info("Directory", 0))
        : path in files
          ? Effect.succeed(info("File", encoder.encode(files[path]).length))
          : Effect.fail(notFound("stat", path)),
    readFile: (path) =>
      path in files ? Effect.succeed(encoder.encode(files[path])) : Effect.fail(notFound("readFile", path)),
    readDirectory: (path) =>
      path === "/fake"
        ? Effect.succeed(Object.keys(files).map((f) => f.slice("/fake/".length)))
        : Effect.fail(notFound("readDirectory", path))
  })
}

const registered = (files: Readonly<Record<string, string>>) =>
  Read.layer.pipe(Layer.provideMerge(Layer.mergeAll(ToolRegistryLive.layer, FileStateCacheLive.layer, fakeDisk(files))))

const callRead = (input: { readonly file_path: string }) =>
  Effect.gen(function* () {
    const read = Option.getOrThrow(yield* (yield* ToolRegistry).lookup("Read"))
    return yield* Effect.either(read.call(input, yield* contextFor("/fake")))
  })

describe("Read on a fake FileSystem", () => {
  it.effect("reads a file that exists only on the fake disk and records its state", () =>
    Effect.gen(function* () {
      const result = yield* callRead({ file_path: "/fake/notes.txt" })
      if (result._tag === "Left") throw new Error(`expected content, got ${String(result.left)}`)
      expect(result.right).toBe("1\tfirst\n2\tsecond")
      const record = yield* (yield* FileStateCache).get("/fake/notes.txt")
      expect(Option.map(record, (r) => r.mtimeMs)).toEqual(Option.some(mtime.getTime()))
    }).pipe(Effect.provide(registered({ "/fake/notes.txt": "first\nsecond\n" })))
  )

  it.effect("a missing file fails with the tool's own refusal, naming the similar file of the fake directory", () =>
    Effect.gen(function* () {
      const read = Option.getOrThrow(yield* (yield* ToolRegistry).lookup("Read"))
      const result = yield* callRead({ file_path: "/fake/Notes.txt" })
      if (result._tag === "Right") throw new Error("expected a failure")
      expect(result.left).toBeInstanceOf(Read.ReadRefused)
      expect(Tool.failureText(read, result.left)).toBe("File does not exist. Did you mean /fake/notes.txt?")
    }).pipe(Effect.provide(registered({ "/fake/notes.txt": "first\n" })))
  )

  it.effect("a failure of the disk reaches the model as the platform error's message", () =>
    Effect.gen(function* () {
      const read = Option.getOrThrow(yield* (yield* ToolRegistry).lookup("Read"))
      // the directory is listed, but reading the file's bytes is not served by this disk
      const result = yield* callRead({ file_path: "/fake/a.txt" })
      if (result._tag === "Right") throw new Error("expected a failure")
      expect(Tool.failureText(read, result.left)).toContain("NotFound: FileSystem.readFile (/fake/a.txt)")
    }).pipe(
      Effect.provide(
        Read.layer.pipe(
          Layer.provideMerge(
            Layer.mergeAll(
              ToolRegistryLive.layer,
              FileStateCacheLive.layer,
              FileSystem.layerNoop({
                stat: () =>
                  Effect.succeed({
                    type: "File",
                    mtime: Option.some(mtime),
                    size: FileSystem.Size(3)
                  } as FileSystem.File.Info)
              })
            )
          )
        )
      )
    )
  )
})
