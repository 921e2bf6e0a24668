import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as FileStateCacheLive from "../../../src/layers/files/FileStateCacheLive.js"
import * as Read from "../../../src/layers/tools/Read.js"
import { FileStateCache } from "../../../src/services/FileStateCache.js"
import { put, run, tempDir } from "./FileToolHarness.js"

const setup = Effect.gen(function* () {
  const dir = yield* tempDir
  const tool = yield* Read.make
  const cache = yield* FileStateCache
  return { dir, tool, cache }
})

const numbered = (lines: ReadonlyArray<string>, first = 1) => lines.map((l, i) => `${first + i}\t${l}`).join("\n")

describe("Read", () => {
  it.scoped("returns lines numbered N<tab> without padding and records the file state", () =>
    Effect.gen(function* () {
      const { cache, dir, tool } = yield* setup
      const file = Path.join(dir, "a.ts")
      yield* put(file, "const a = 1\r\n\tindented\nlast")
      const out = yield* run(tool, { file_path: file }, dir)
      expect(out).toEqual({ content: "1\tconst a = 1\n2\t\tindented\n3\tlast", isError: false })
      const record = yield* cache.get(file)
      expect(Option.isSome(record)).toBe(true)
      const stat = yield* Effect.promise(() => Fs.stat(file))
      expect(Option.getOrThrow(record).mtimeMs).toBe(stat.mtime.getTime())
      expect(tool.isReadOnly({ file_path: file })).toBe(true)
      expect(tool.isConcurrencySafe({ file_path: file })).toBe(true)
      expect(tool.maxResultSizeChars).toBe(Number.POSITIVE_INFINITY)
      expect(tool.category).toBe("file")
      expect(tool.resources({ file_path: file })).toEqual([{ key: file, access: "read" }])
    }).pipe(Effect.provide(FileStateCacheLive.layer))
  )

  it.scoped("rejects relative paths with a clear message", () =>
    Effect.gen(function* () {
      const { dir, tool } = yield* setup
      const out = yield* run(tool, { file_path: "src/a.ts" }, dir)
      expect(out).toEqual({
        content:
          "<tool_use_error>file_path must be an absolute path (for example /home/user/project/src/index.ts), got: " +
          "src/a.ts</tool_use_error>",
        isError: true
      })
    }).pipe(Effect.provide(FileStateCacheLive.layer))
  )

  it.scoped("returns 2,000 lines by default, then a note; offset and limit pick a window", () =>
    Effect.gen(function* () {
      const { dir, tool } = yield* setup
      const file = Path.join(dir, "long.txt")
      const lines = Array.from({ length: 2500 }, (_, i) => `line ${i + 1}`)
      yield* put(file, `${lines.join("\n")}\n`)
      const all = yield* run(tool, { file_path: file }, dir)
      expect(all.content).toBe(
        `${numbered(lines.slice(0, 2000))}\n\n(Showing lines 1-2000 of 2500. Use offset and limit to read other parts.)`
      )
      const window = yield* run(tool, { file_path: file, offset: 2499, limit: 5 }, dir)
      expect(window.content).toBe(
        `${numbered(["line 2499", "line 2500"], 2499)}\n\n(Showing lines 2499-2500 of 2500. Use offset and limit to read other parts.)`
      )
      const beyond = yield* run(tool, { file_path: file, offset: 3000 }, dir)
      expect(beyond).toEqual({
        content:
          "<system-reminder>Warning: the file exists but is shorter than the provided offset (3000). The file has 2500 " +
          "lines.</system-reminder>",
        isError: false
      })
    }).pipe(Effect.provide(FileStateCacheLive.layer))
  )

  it.scoped("cuts lines longer than 2,000 characters", () =>
    Effect.gen(function* () {
      const { dir, tool } = yield* setup
      const file = Path.join(dir, "wide.txt")
      yield* put(file, `${"x".repeat(2500)}\nshort\n`)
      const out = yield* run(tool, { file_path: file }, dir)
      expect(out.content).toBe(`1\t${"x".repeat(2000)}... [line truncated, 2500 characters in total]\n2\tshort`)
    }).pipe(Effect.provide(FileStateCacheLive.layer))
  )

  it.scoped("refuses files over 256 KiB without offset/limit, and streams a window with them", () =>
    Effect.gen(function* () {
      const { cache, dir, tool } = yield* setup
      const file = Path.join(dir, "big.log")
      const lines = Array.from({ length: 30_000 }, (_, i) => `entry ${String(i + 1).padStart(5, "0")} ${"-".repeat(4)}`)
      yield* put(file, `${lines.join("\n")}\n`)
      const size = (yield* Effect.promise(() => Fs.stat(file))).size
      expect(size).toBeGreaterThan(256 * 1024)
      const whole = yield* run(tool, { file_path: file }, dir)
      expect(whole).toEqual({
        content:
          `File content (${(size / 1024).toFixed(1)}KB) exceeds maximum allowed size (256 KB). Please use offset and ` +
          "limit parameters to read specific portions of the file, or use the Grep tool to search for specific content.",
        isError: true
      })
      expect(Option.isNone(yield* cache.get(file))).toBe(true)
      const part = yield* run(tool, { file_path: file, offset: 29_999, limit: 10 }, dir)
      expect(part.content).toBe(
        `${numbered(lines.slice(29_998), 29_999)}\n\n(Showing lines 29999-30000 of 30000. Use offset and limit to read other parts.)`
      )
      const head = yield* run(tool, { file_path: file, limit: 2 }, dir)
      expect(head.content).toBe(
        `${numbered(lines.slice(0, 2))}\n\n(Showing lines 1-2 of 30000. Use offset and limit to read other parts.)`
      )
      expect(Option.isSome(yield* cache.get(file))).toBe(true)
    }).pipe(Effect.provide(FileStateCacheLive.layer))
  )

  it.scoped("missing files, directories, empty files and binary files", () =>
    Effect.gen(function* () {
      const { dir, tool } = yield* setup
      yield* put(Path.join(dir, "config.json"), "{}")
      yield* put(Path.join(dir, "empty.txt"), "")
      yield* put(Path.join(dir, "blob.dat"), new Uint8Array([1, 2, 0, 3, 4]))
      yield* put(Path.join(dir, "lib.so"), "not really a library")
      expect(yield* run(tool, { file_path: Path.join(dir, "nothing-like-it.md") }, dir)).toEqual({
        content: "File does not exist.",
        isError: true
      })
      expect(yield* run(tool, { file_path: Path.join(dir, "config.yaml") }, dir)).toEqual({
        content: `File does not exist. Did you mean ${Path.join(dir, "config.json")}?`,
        isError: true
      })
      expect(yield* run(tool, { file_path: Path.join(dir, "confg.json") }, dir)).toEqual({
        content: `File does not exist. Did you mean ${Path.join(dir, "config.json")}?`,
        isError: true
      })
      expect(yield* run(tool, { file_path: Path.join(dir, "no-dir", "x.ts") }, dir)).toEqual({
        content: "File does not exist.",
        isError: true
      })
      expect(yield* run(tool, { file_path: dir }, dir)).toEqual({
        content: `${dir} is a directory, not a file. Use the Glob tool (or Bash ls) to list its contents.`,
        isError: true
      })
      expect(yield* run(tool, { file_path: Path.join(dir, "empty.txt") }, dir)).toEqual({
        content: "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>",
        isError: false
      })
      for (const name of ["blob.dat", "lib.so"]) {
        const path = Path.join(dir, name)
        expect(yield* run(tool, { file_path: path }, dir)).toEqual({
          content:
            `Cannot read binary file: ${path}. Read only returns text files and images (png, jpg, gif, webp); ` +
            "inspect other files with Bash (e.g. `file`, `xxd | head`).",
          isError: true
        })
      }
    }).pipe(Effect.provide(FileStateCacheLive.layer))
  )

  it.scoped("returns images as base64 image blocks", () =>
    Effect.gen(function* () {
      const { dir, tool } = yield* setup
      const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d])
      const file = Path.join(dir, "pixel.PNG")
      yield* put(file, png)
      const out = yield* run(tool, { file_path: file }, dir)
      expect(out).toEqual({
        content: [
          {
            type: "image",
            source: { type: "base64", media_type: "image/png", data: Buffer.from(png).toString("base64") }
          }
        ],
        isError: false
      })
    }).pipe(Effect.provide(FileStateCacheLive.layer))
  )
})
