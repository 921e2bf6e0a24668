import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Glob from "../../../src/layers/tools/Glob.js"
import { put, run, tempDir } from "./FileToolHarness.js"

const touch = (path: string, secondsAgo: number) =>
  Effect.promise(() => {
    const t = new Date(Date.UTC(2024, 0, 1) - secondsAgo * 1000)
    return Fs.utimes(path, t, t)
  })

describe("Glob", () => {
  it.scoped("matches newest first, honours root and nested .gitignore files and skips hidden entries", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const tool = yield* Glob.make
      const files: ReadonlyArray<readonly [string, number]> = [
        ["src/a.ts", 30],
        ["src/b.ts", 10],
        ["src/deep/c.ts", 20],
        ["src/deep/gen.ts", 5],
        ["dist/out.ts", 1],
        ["top.ts", 40],
        [".hidden/h.ts", 2],
        ["src/readme.md", 3]
      ]
      for (const [file] of files) yield* put(Path.join(dir, file), "x")
      yield* put(Path.join(dir, ".gitignore"), "dist/\n")
      yield* put(Path.join(dir, "src/deep/.gitignore"), "gen.ts\n")
      for (const [file, ago] of files) yield* touch(Path.join(dir, file), ago)
      // Paths under the working directory are relative to it.
      const p = (f: string) => f
      expect(yield* run(tool, { pattern: "**/*.ts" }, dir)).toEqual({
        content: [p("src/b.ts"), p("src/deep/c.ts"), p("src/a.ts"), p("top.ts")].join("\n"),
        isError: false
      })
      expect((yield* run(tool, { pattern: "*.ts" }, dir)).content).toBe(p("top.ts"))
      expect((yield* run(tool, { pattern: "src/**/*.{ts,md}" }, dir)).content).toBe(
        [p("src/readme.md"), p("src/b.ts"), p("src/deep/c.ts"), p("src/a.ts")].join("\n")
      )
      expect((yield* run(tool, { pattern: "*.ts", path: "src/deep" }, dir)).content).toBe(p("src/deep/c.ts"))
      // Paths outside it stay absolute.
      expect((yield* run(tool, { pattern: `${dir}/src/*.ts` }, Path.join(dir, "src/deep"))).content).toBe(
        [Path.join(dir, "src/b.ts"), Path.join(dir, "src/a.ts")].join("\n")
      )
      expect((yield* run(tool, { pattern: "../*.ts" }, Path.join(dir, "src/deep"))).content).toBe(
        [Path.join(dir, "src/b.ts"), Path.join(dir, "src/a.ts")].join("\n")
      )
      expect((yield* run(tool, { pattern: ".hidden/*.ts" }, dir)).content).toBe(p(".hidden/h.ts"))
      expect(yield* run(tool, { pattern: "**/*.rs" }, dir)).toEqual({ content: "No files found", isError: false })
      expect(yield* run(tool, { pattern: "*.ts", path: "nope" }, dir)).toEqual({
        content: `Directory does not exist: ${Path.join(dir, "nope")}`,
        isError: true
      })
      expect(tool.isReadOnly({ pattern: "x" })).toBe(true)
      expect(tool.isConcurrencySafe({ pattern: "x" })).toBe(true)
    })
  )

  it.scoped("returns at most 100 paths, then a note", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const tool = yield* Glob.make
      for (let i = 0; i < 120; i++) {
        const file = Path.join(dir, `f${String(i).padStart(3, "0")}.txt`)
        yield* put(file, "x")
        yield* touch(file, i)
      }
      const out = String((yield* run(tool, { pattern: "*.txt" }, dir)).content).split("\n")
      expect(out).toHaveLength(101)
      expect(out[0]).toBe("f000.txt")
      expect(out[99]).toBe("f099.txt")
      expect(out[100]).toBe("(Results are truncated. Consider using a more specific path or pattern.)")
    })
  )
})
