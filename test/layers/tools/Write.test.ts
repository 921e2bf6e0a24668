import { execFileSync } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as FileStateCacheLive from "../../../src/layers/files/FileStateCacheLive.js"
import * as Read from "../../../src/layers/tools/Read.js"
import * as Write from "../../../src/layers/tools/Write.js"
import { contextFor, put, run, tempDir, text } from "./FileToolHarness.js"

const setup = Effect.gen(function* () {
  const dir = yield* tempDir
  return { dir, read: yield* Read.make, write: yield* Write.make }
})

const notRead = "File has not been read yet. Read it first before writing to it."
const modified =
  "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it."

describe("Write", () => {
  it.scoped("creates a new file with its parent directories", () =>
    Effect.gen(function* () {
      const { dir, write } = yield* setup
      const file = Path.join(dir, "a", "b", "new.ts")
      expect(write.isDestructive({ file_path: file, content: "" })).toBe(false)
      const out = yield* run(write, { file_path: file, content: "export const x = 1\n" }, dir)
      expect(out).toEqual({ content: `File created successfully at: ${file}`, isError: false })
      expect(yield* text(file)).toBe("export const x = 1\n")
      expect(write.isDestructive({ file_path: file, content: "" })).toBe(true)
      expect(write.isReadOnly({ file_path: file, content: "" })).toBe(false)
      expect(write.isConcurrencySafe({ file_path: file, content: "" })).toBe(false)
      expect(write.resources({ file_path: file, content: "" })).toEqual([{ key: file, access: "write" }])
      // Our own write counts as a read: a second write needs no Read.
      expect(yield* run(write, { file_path: file, content: "two" }, dir)).toEqual({
        content: `The file ${file} has been updated successfully.`,
        isError: false
      })
      expect(yield* text(file)).toBe("two")
    }).pipe(Effect.provide(FileStateCacheLive.layer))
  )

  it.scoped("refuses to overwrite a file that was not read, and relative paths", () =>
    Effect.gen(function* () {
      const { dir, write } = yield* setup
      const file = Path.join(dir, "old.txt")
      yield* put(file, "original")
      expect(yield* run(write, { file_path: file, content: "new" }, dir)).toEqual({
        content: `<tool_use_error>${notRead}</tool_use_error>`,
        isError: true
      })
      // The call re-checks on its own (the state may change between validation and the call).
      const ctx = yield* contextFor(dir)
      const failure = yield* Effect.flip(write.call({ file_path: file, content: "new" }, ctx))
      expect(failure.message).toBe(notRead)
      expect(yield* text(file)).toBe("original")
      expect((yield* run(write, { file_path: "old.txt", content: "new" }, dir)).content).toBe(
        "<tool_use_error>file_path must be an absolute path (for example /home/user/project/src/index.ts), got: " +
          "old.txt</tool_use_error>"
      )
    }).pipe(Effect.provide(FileStateCacheLive.layer))
  )

  it.scoped("staleness: a touch with the same content is fine, changed content is refused", () =>
    Effect.gen(function* () {
      const { dir, read, write } = yield* setup
      const file = Path.join(dir, "f.txt")
      yield* put(file, "v1")
      yield* run(read, { file_path: file }, dir)
      const later = new Date(Date.now() + 60_000)
      yield* Effect.promise(() => Fs.utimes(file, later, later))
      expect(yield* run(write, { file_path: file, content: "v2" }, dir)).toEqual({
        content: `The file ${file} has been updated successfully.`,
        isError: false
      })
      yield* put(file, "changed by a linter")
      const evenLater = new Date(Date.now() + 120_000)
      yield* Effect.promise(() => Fs.utimes(file, evenLater, evenLater))
      expect(yield* run(write, { file_path: file, content: "v3" }, dir)).toEqual({
        content: `<tool_use_error>${modified}</tool_use_error>`,
        isError: true
      })
      expect(yield* text(file)).toBe("changed by a linter")
      yield* run(read, { file_path: file }, dir)
      expect((yield* run(write, { file_path: file, content: "v3" }, dir)).isError).toBe(false)
      expect(yield* text(file)).toBe("v3")
    }).pipe(Effect.provide(FileStateCacheLive.layer))
  )

  it.scoped("staleness: changed content under the old size and mtime (touch -r) is refused", () =>
    Effect.gen(function* () {
      const { dir, read, write } = yield* setup
      const file = Path.join(dir, "same-size.txt")
      const reference = Path.join(dir, "reference")
      yield* put(file, "version 1")
      yield* put(reference, "")
      execFileSync("touch", ["-r", file, reference])
      const before = yield* Effect.promise(() => Fs.stat(file))
      yield* run(read, { file_path: file }, dir)
      yield* put(file, "version 2")
      execFileSync("touch", ["-r", reference, file])
      const after = yield* Effect.promise(() => Fs.stat(file))
      expect([after.size, after.mtimeMs]).toEqual([before.size, before.mtimeMs])
      expect(yield* run(write, { file_path: file, content: "mine" }, dir)).toEqual({
        content: `<tool_use_error>${modified}</tool_use_error>`,
        isError: true
      })
      expect(yield* text(file)).toBe("version 2")
    }).pipe(Effect.provide(FileStateCacheLive.layer))
  )

  it.scoped("keeps the original permissions and leaves no temporary file", () =>
    Effect.gen(function* () {
      const { dir, read, write } = yield* setup
      const script = Path.join(dir, "run.sh")
      const secret = Path.join(dir, "secret.env")
      yield* put(script, "#!/bin/sh\necho 1\n")
      yield* put(secret, "A=1\n")
      yield* Effect.promise(() => Fs.chmod(script, 0o755))
      yield* Effect.promise(() => Fs.chmod(secret, 0o600))
      for (const file of [script, secret]) {
        yield* run(read, { file_path: file }, dir)
        expect((yield* run(write, { file_path: file, content: "changed\n" }, dir)).isError).toBe(false)
      }
      expect((yield* Effect.promise(() => Fs.stat(script))).mode & 0o777).toBe(0o755)
      expect((yield* Effect.promise(() => Fs.stat(secret))).mode & 0o777).toBe(0o600)
      expect((yield* Effect.promise(() => Fs.readdir(dir))).sort()).toEqual(["run.sh", "secret.env"])
    }).pipe(Effect.provide(FileStateCacheLive.layer))
  )

  it.scoped("refuses to write over a directory", () =>
    Effect.gen(function* () {
      const { dir, write } = yield* setup
      expect(yield* run(write, { file_path: dir, content: "x" }, dir)).toEqual({
        content: `<tool_use_error>${dir} is a directory, not a file.</tool_use_error>`,
        isError: true
      })
    }).pipe(Effect.provide(FileStateCacheLive.layer))
  )
})
