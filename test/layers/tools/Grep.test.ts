import * as NodeFs from "node:fs"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as GrepEngine from "../../../src/layers/files/GrepEngine.js"
import * as GrepReader from "../../../src/layers/files/GrepReader.js"
import * as Glob from "../../../src/layers/tools/Glob.js"
import * as Grep from "../../../src/layers/tools/Grep.js"
import { put, run, tempDir } from "./FileToolHarness.js"

const corpus = Path.join(import.meta.dirname, "../../fixtures/grep-corpus")

interface Case {
  readonly name: string
  readonly input: Grep.Input
}

const cases = JSON.parse(NodeFs.readFileSync(Path.join(corpus, "cases.json"), "utf8")) as ReadonlyArray<Case>

/** Copies the corpus into a temp dir; the fixture keeps its ignore files as `_gitignore` so git does not apply them. */
const corpusCopy = Effect.gen(function* () {
  const dir = yield* tempDir
  const root = Path.join(dir, "corpus")
  yield* Effect.promise(() => Fs.cp(Path.join(corpus, "tree"), root, { recursive: true }))
  for (const sub of ["", "src/nested"]) {
    yield* Effect.promise(() => Fs.rename(Path.join(root, sub, "_gitignore"), Path.join(root, sub, ".gitignore")))
  }
  return root
})

const decode = Schema.decodeUnknownSync(
  Schema.Struct({}).pipe(Schema.extend(Schema.Record({ key: Schema.String, value: Schema.Unknown })))
)

describe("Grep", () => {
  it.scoped("the built-in engine gives the expected ripgrep output on the corpus (and so does rg when present)", () =>
    Effect.gen(function* () {
      const root = yield* corpusCopy
      const update = process.env.ARMATURE_UPDATE_GREP_EXPECTED === "1"
      const rg = GrepEngine.hasRg()
      const mismatches: Array<string> = []
      for (const c of cases) {
        decode(c.input)
        const expectedFile = Path.join(corpus, "expected", `${c.name}.txt`)
        const normalize = (out: string) => out.split(root).join("<root>")
        if (update && rg) {
          const fromRg = normalize(yield* Grep.search("rg", c.input, root))
          NodeFs.mkdirSync(Path.dirname(expectedFile), { recursive: true })
          NodeFs.writeFileSync(expectedFile, fromRg)
        }
        const expected = NodeFs.readFileSync(expectedFile, "utf8")
        const builtin = normalize(yield* Grep.search("builtin", c.input, root))
        if (builtin !== expected) mismatches.push(`builtin ${c.name}:\n${builtin}\n--- expected:\n${expected}`)
        if (rg) {
          const fromRg = normalize(yield* Grep.search("rg", c.input, root))
          if (fromRg !== expected) mismatches.push(`rg ${c.name}:\n${fromRg}\n--- expected:\n${expected}`)
        }
      }
      expect(mismatches).toEqual([])
      expect(cases.length).toBeGreaterThan(30)
    })
  )

  it.scoped("a parent directory's ignore rules apply below the searched directory, never to it (as ripgrep)", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* Effect.promise(() => Fs.mkdir(Path.join(dir, ".git")))
      yield* put(Path.join(dir, ".gitignore"), "node_modules/\ndist/\n*.log\n/vendor/node_modules/top.txt\n")
      // The searched directory is ignored by the parent's `node_modules/`, and so is the nested one below it.
      const root = Path.join(dir, "vendor", "node_modules")
      for (const file of ["lib/y.js", "dist/x.js", "a/node_modules/z.js", "w.log", "top.txt", "keep/top.txt"]) {
        yield* put(Path.join(root, file), "needle\n")
      }
      const expected = "Found 2 files\nkeep/top.txt\nlib/y.js"
      expect(yield* Grep.search("builtin", { pattern: "needle" }, root)).toBe(expected)
      if (GrepEngine.hasRg()) expect(yield* Grep.search("rg", { pattern: "needle" }, root)).toBe(expected)
      const globbed = yield* Glob.find("**/*", root)
      expect(globbed.map((p) => Path.relative(root, p)).sort()).toEqual(["keep/top.txt", "lib/y.js"])
    })
  )

  it.scoped("on worker threads reading while the walk goes on, the built-in engine finds what it finds alone", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const count = GrepReader.parallelFrom + 700
      yield* Effect.promise(async () => {
        for (let i = 0; i < count; i++) {
          const file = Path.join(dir, `d${i % 37}`, `f${i}.${i % 3 === 0 ? "js" : "txt"}`)
          await Fs.mkdir(Path.dirname(file), { recursive: true })
          await Fs.writeFile(file, i % 11 === 0 ? `one\nfunction readSync${i}(x) {}\n` : `nothing ${i}\n`)
        }
      })
      yield* put(Path.join(dir, ".gitignore"), "d3/\n")
      const queries: ReadonlyArray<Grep.Input> = [
        { pattern: "function\\s+\\w+Sync\\d+\\(", output_mode: "content", type: "js", head_limit: 0 },
        { pattern: "Sync", output_mode: "count", head_limit: 0 },
        { pattern: "nothing 1\\d", head_limit: 0 }
      ]
      for (const input of queries) {
        const query = Grep.toQuery(input, dir)
        const calling = yield* GrepEngine.searchBuiltin(query, undefined, "calling")
        const workers = yield* GrepEngine.searchBuiltin(query, undefined, "workers")
        expect(workers).toEqual(calling)
        expect(calling.results.length).toBeGreaterThan(50)
        if (GrepEngine.hasRg()) expect(calling).toEqual(yield* GrepEngine.searchRg(query))
      }
    })
  )

  it.scoped("tool flags, defaults, validation and errors", () =>
    Effect.gen(function* () {
      const root = yield* corpusCopy
      const tool = yield* Grep.makeWith("builtin")
      expect(tool.isReadOnly({ pattern: "x" })).toBe(true)
      expect(tool.isConcurrencySafe({ pattern: "x" })).toBe(true)
      expect(tool.category).toBe("search")
      expect(tool.resources({ pattern: "x", path: root })).toEqual([{ key: root, access: "read" }])
      expect(yield* run(tool, { pattern: "TODO", path: "cmd" }, root)).toEqual({
        content: "Found 1 file\ncmd/main.go",
        isError: false
      })
      // Outside the working directory, paths stay absolute.
      expect(yield* run(tool, { pattern: "TODO", path: Path.join(root, "cmd") }, Path.join(root, "src"))).toEqual({
        content: `Found 1 file\n${root}/cmd/main.go`,
        isError: false
      })
      expect((yield* run(tool, { pattern: "x", type: "cobol" }, root)).content).toBe(
        `<tool_use_error>Unknown file type "cobol". Known types: ${Object.keys(GrepEngine.fileTypes).join(", ")}.</tool_use_error>`
      )
      expect(yield* run(tool, { pattern: "x", path: "missing" }, root)).toEqual({
        content: `Path does not exist: ${root}/missing`,
        isError: true
      })
      const bad = yield* run(tool, { pattern: "a(b" }, root)
      expect(bad.isError).toBe(true)
      expect(String(bad.content)).toMatch(/^Invalid regular expression: /)
    })
  )

  it.scoped("head_limit defaults to 250 output lines and lines are cut at 500 characters", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const tool = yield* Grep.makeWith("builtin")
      const lines = Array.from({ length: 300 }, (_, i) => `hit ${i + 1}`)
      yield* put(Path.join(dir, "many.txt"), `${lines.join("\n")}\nhit ${"y".repeat(600)}\n`)
      const out = yield* run(tool, { pattern: "hit", output_mode: "content" }, dir)
      const file = "many.txt"
      expect(out.content).toBe(
        `${lines
          .slice(0, 250)
          .map((l, i) => `${file}:${i + 1}:${l}`)
          .join("\n")}\n\n(Results are truncated: showing the first 250 lines of 301. Use a more specific pattern, ` +
          "path, glob or type, or raise head_limit.)"
      )
      const last = yield* run(tool, { pattern: "hit y", output_mode: "content" }, dir)
      expect(last.content).toBe(`${file}:301:hit ${"y".repeat(496)} [... line truncated]`)
      const all = yield* run(tool, { pattern: "hit", output_mode: "content", head_limit: 0 }, dir)
      expect(String(all.content).split("\n")).toHaveLength(301)
    })
  )
})
