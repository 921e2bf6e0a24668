import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import * as FileStateCacheLive from "../../../src/layers/files/FileStateCacheLive.js"
import * as Edit from "../../../src/layers/tools/Edit.js"
import * as Read from "../../../src/layers/tools/Read.js"
import { contextFor, put, run, tempDir, text } from "./FileToolHarness.js"

const setup = Effect.gen(function* () {
  const dir = yield* tempDir
  return { dir, read: yield* Read.make, edit: yield* Edit.make }
})

const notRead = "File has not been read yet. Read it first before writing to it."
const modified =
  "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it."

const source = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`).join("\n") + "\n"

describe("Edit", () => {
  it.scoped("replaces a unique string and confirms in one line, like Claude Code", () =>
    Effect.gen(function* () {
      const { dir, edit, read } = yield* setup
      const file = Path.join(dir, "a.txt")
      yield* put(file, source)
      yield* run(read, { file_path: file }, dir)
      const out = yield* run(edit, { file_path: file, old_string: "line 7\n", new_string: "seven\nand a half\n" }, dir)
      expect(out).toEqual({ content: `The file ${file} has been updated successfully.`, isError: false })
      expect(yield* text(file)).toBe(source.replace("line 7\n", "seven\nand a half\n"))
      expect(edit.isReadOnly({ file_path: file, old_string: "a", new_string: "b" })).toBe(false)
      expect(edit.resources({ file_path: file, old_string: "a", new_string: "b" })).toEqual([
        { key: file, access: "write" }
      ])
    }).pipe(Effect.provide(FileStateCacheLive.layer))
  )

  it.scoped("built with snippet: true, appends the edited region numbered like Read", () =>
    Effect.gen(function* () {
      const { dir, read } = yield* setup
      const edit = yield* Edit.makeWith({ snippet: true })
      const file = Path.join(dir, "a.txt")
      yield* put(file, source)
      yield* run(read, { file_path: file }, dir)
      const out = yield* run(edit, { file_path: file, old_string: "line 7\n", new_string: "seven\nand a half\n" }, dir)
      expect(out).toEqual({
        content:
          `The file ${file} has been updated successfully. The edited region:\n` +
          "3\tline 3\n4\tline 4\n5\tline 5\n6\tline 6\n7\tseven\n8\tand a half\n" +
          "9\tline 8\n10\tline 9\n11\tline 10\n12\tline 11",
        isError: false
      })
    }).pipe(Effect.provide(FileStateCacheLive.layer))
  )

  it.scoped("every error text: same strings, not found, several matches, not read, missing file", () =>
    Effect.gen(function* () {
      const { dir, edit, read } = yield* setup
      const file = Path.join(dir, "b.ts")
      yield* put(file, "let a = 1\nlet b = 1\n")
      expect(yield* run(edit, { file_path: file, old_string: "= 1", new_string: "= 2" }, dir)).toEqual({
        content: `<tool_use_error>${notRead}</tool_use_error>`,
        isError: true
      })
      yield* run(read, { file_path: file }, dir)
      expect(yield* run(edit, { file_path: file, old_string: "x", new_string: "x" }, dir)).toEqual({
        content: "<tool_use_error>No changes to make: old_string and new_string are exactly the same.</tool_use_error>",
        isError: true
      })
      expect(yield* run(edit, { file_path: file, old_string: "let c", new_string: "let d" }, dir)).toEqual({
        content: "<tool_use_error>String to replace not found in file.\nString: let c</tool_use_error>",
        isError: true
      })
      expect(yield* run(edit, { file_path: file, old_string: "= 1", new_string: "= 2" }, dir)).toEqual({
        content:
          "<tool_use_error>Found 2 matches of the string to replace, but replace_all is false. To replace all " +
          "occurrences, set replace_all to true. To replace only one occurrence, please provide more context to " +
          "uniquely identify the instance.\nString: = 1</tool_use_error>",
        isError: true
      })
      expect(yield* run(edit, { file_path: Path.join(dir, "c.ts"), old_string: "a", new_string: "b" }, dir)).toEqual({
        content: `<tool_use_error>File does not exist. Did you mean ${file}?</tool_use_error>`,
        isError: true
      })
      expect(yield* run(edit, { file_path: file, old_string: "", new_string: "x" }, dir)).toEqual({
        content: "<tool_use_error>Cannot create new file - file already exists.</tool_use_error>",
        isError: true
      })
      // The call itself re-checks and fails with the bare message.
      const ctx = yield* contextFor(dir)
      const failure = yield* Effect.flip(edit.call({ file_path: file, old_string: "let c", new_string: "d" }, ctx))
      expect(failure.message).toBe("String to replace not found in file.\nString: let c")
      expect(yield* text(file)).toBe("let a = 1\nlet b = 1\n")
      const all = yield* run(edit, { file_path: file, old_string: "= 1", new_string: "= 2", replace_all: true }, dir)
      expect(all.content).toBe(`The file ${file} has been updated successfully. All 2 occurrences were replaced.`)
      expect(yield* text(file)).toBe("let a = 2\nlet b = 2\n")
    }).pipe(Effect.provide(FileStateCacheLive.layer))
  )

  it.scoped("staleness: touch is fine, a changed file must be read again", () =>
    Effect.gen(function* () {
      const { dir, edit, read } = yield* setup
      const file = Path.join(dir, "s.txt")
      yield* put(file, "alpha beta\n")
      yield* run(read, { file_path: file }, dir)
      const t1 = new Date(Date.now() + 60_000)
      yield* Effect.promise(() => Fs.utimes(file, t1, t1))
      expect((yield* run(edit, { file_path: file, old_string: "alpha", new_string: "gamma" }, dir)).isError).toBe(false)
      yield* put(file, "gamma beta delta\n")
      const t2 = new Date(Date.now() + 120_000)
      yield* Effect.promise(() => Fs.utimes(file, t2, t2))
      expect(yield* run(edit, { file_path: file, old_string: "beta", new_string: "BETA" }, dir)).toEqual({
        content: `<tool_use_error>${modified}</tool_use_error>`,
        isError: true
      })
      expect(yield* text(file)).toBe("gamma beta delta\n")
    }).pipe(Effect.provide(FileStateCacheLive.layer))
  )

  it.scoped("creates a missing file from an empty old_string; keeps permissions, BOM and CRLF", () =>
    Effect.gen(function* () {
      const { dir, edit, read } = yield* setup
      const created = Path.join(dir, "new", "file.md")
      expect(yield* run(edit, { file_path: created, old_string: "", new_string: "# Title\n" }, dir)).toEqual({
        content: `File created successfully at: ${created}`,
        isError: false
      })
      expect(yield* text(created)).toBe("# Title\n")
      const script = Path.join(dir, "tool.sh")
      yield* put(script, "\ufeffecho one\r\necho two\r\n")
      yield* Effect.promise(() => Fs.chmod(script, 0o750))
      yield* run(read, { file_path: script }, dir)
      const out = yield* run(edit, { file_path: script, old_string: "one\necho two", new_string: "1\necho 2" }, dir)
      expect(out.isError).toBe(false)
      expect(yield* text(script)).toBe("\ufeffecho 1\r\necho 2\r\n")
      expect((yield* Effect.promise(() => Fs.stat(script))).mode & 0o777).toBe(0o750)
    }).pipe(Effect.provide(FileStateCacheLive.layer))
  )

  it.scoped("an Edit interrupted at any point leaves the file entirely old or entirely new, and no temp file", () =>
    Effect.gen(function* () {
      const { dir, edit, read } = yield* setup
      const file = Path.join(dir, "large.txt")
      const before = `HEAD\n${"0123456789abcdef\n".repeat(64 * 1024)}\n`
      const after = `NEW HEAD\n${"0123456789abcdef\n".repeat(64 * 1024)}\n`
      const ctx = yield* contextFor(dir)
      const seen = { old: 0, new: 0 }
      // Let the event loop turn `ticks` times (file I/O progresses), then interrupt; more ticks, later interruption.
      for (let ticks = 0; ticks < 200_000; ticks = Math.ceil(ticks * 1.15) + 1) {
        yield* put(file, before)
        yield* run(read, { file_path: file, limit: 1 }, dir)
        const fiber = yield* Effect.fork(
          edit.call({ file_path: file, old_string: "HEAD\n", new_string: "NEW HEAD\n" }, ctx)
        )
        for (let i = 0; i < ticks; i++) yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
        yield* Fiber.interrupt(fiber)
        const content = yield* text(file)
        expect(content === before || content === after).toBe(true)
        if (content === before) seen.old++
        else seen.new++
        expect(yield* Effect.promise(() => Fs.readdir(dir))).toEqual(["large.txt"])
        if (seen.new >= 3) break
      }
      expect(seen.old).toBeGreaterThan(3)
      expect(seen.new).toBeGreaterThan(0)
    }).pipe(Effect.provide(FileStateCacheLive.layer))
  )
})
