import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import * as FileWalker from "../../../src/layers/files/FileWalker.js"
import * as GrepEngine from "../../../src/layers/files/GrepEngine.js"

const base = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-walker-"))
afterAll(() => Fs.rmSync(base, { recursive: true, force: true }))
let counter = 0

// Paths below the searched directory `sub`; directory names that the rules below name too.
const files = [
  "x.js",
  "y.log",
  "keep.log",
  "z.txt",
  "a/x.js",
  "a/z.txt",
  "a/b/x.js",
  "a/dist/x.js",
  "dist/y.log",
  "dist/keep.log",
  "node_modules/m/x.js",
  "a/node_modules/x.js",
  "b/z.txt",
  "sub/x.js",
  "a/sub/z.txt",
  ".hidden/x.js",
  "a/.h.js"
]
// Bare names, negations, directory-only rules, anchored rules and rules with a slash inside.
const rules = [
  "dist/",
  "*.log",
  "!keep.log",
  "node_modules/",
  "sub/",
  "sub",
  "b/",
  "x.js",
  "!x.js",
  "/z.txt",
  "a/*.txt",
  "/sub/a/b/",
  "a/b/",
  "**/dist/y.log",
  "!.hidden/",
  "# comment",
  ""
]
const ruleLines = FastCheck.array(FastCheck.constantFrom(...rules), { maxLength: 4 })

/** What `rg --files` lists in `root`, with the engine's flags, sorted (it exits 1 when it lists nothing). */
const rgFiles = (root: string): ReadonlyArray<string> =>
  ChildProcess.spawnSync("rg", ["--files", "--no-config", "--no-require-git"], { cwd: root })
    .stdout.toString("utf8")
    .split("\n")
    .filter((line) => line.length > 0)
    .sort()

describe("FileWalker", () => {
  it.effect.prop(
    "lists what ripgrep lists: ignore files in the tree and above it (never applied to the searched directory)",
    [
      FastCheck.subarray(files, { minLength: 1 }),
      ruleLines,
      ruleLines,
      ruleLines,
      FastCheck.constantFrom("sub", "sub/deeper")
    ],
    ([present, parent, own, nested, rootName]) =>
      Effect.gen(function* () {
        const top = Path.join(base, `t${counter++}`)
        const root = Path.join(top, rootName)
        Fs.mkdirSync(Path.join(top, ".git"), { recursive: true })
        const write = (path: string, text: string) => {
          Fs.mkdirSync(Path.dirname(path), { recursive: true })
          Fs.writeFileSync(path, text)
        }
        for (const file of present) write(Path.join(root, file), "x\n")
        write(Path.join(top, ".gitignore"), `${parent.join("\n")}\n`)
        if (own.length > 0) write(Path.join(root, ".gitignore"), `${own.join("\n")}\n`)
        if (nested.length > 0) write(Path.join(root, "a", ".ignore"), `${nested.join("\n")}\n`)
        const walked = yield* FileWalker.walk({ root, hidden: false })
        const listed = walked.files.map((f) => f.relative).sort()
        if (GrepEngine.hasRg()) expect(listed).toEqual(rgFiles(root))
        else expect(listed.every((f) => present.includes(f))).toBe(true)
        Fs.rmSync(top, { recursive: true, force: true })
      }),
    { fastCheck: { numRuns: 40 } }
  )
})
