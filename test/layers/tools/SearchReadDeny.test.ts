/**
 * Grep and Glob never return what Read itself would refuse: the Read deny rules (and the tool's own) apply to every
 * path inside the searched tree, with both Grep engines, and the result says what was skipped and why.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import * as fc from "fast-check"
import * as PermissionRule from "../../../src/domain/PermissionRule.js"
import * as Tool from "../../../src/domain/Tool.js"
import * as FileStateCacheLive from "../../../src/layers/files/FileStateCacheLive.js"
import * as GrepEngine from "../../../src/layers/files/GrepEngine.js"
import * as ReadGuardLive from "../../../src/layers/permissions/ReadGuardLive.js"
import * as RulePermissionPolicy from "../../../src/layers/permissions/RulePermissionPolicy.js"
import * as TreeSitterShellAnalyzer from "../../../src/layers/shell/TreeSitterShellAnalyzer.js"
import * as Glob from "../../../src/layers/tools/Glob.js"
import * as Grep from "../../../src/layers/tools/Grep.js"
import * as Read from "../../../src/layers/tools/Read.js"
import * as Settings from "../../../src/services/Settings.js"
import { contextFor, run } from "./FileToolHarness.js"

const base = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-search-deny-")))
afterAll(() => Fs.rmSync(base, { recursive: true, force: true }))

const write = (root: string, file: string, content: string) => {
  Fs.mkdirSync(Path.dirname(Path.join(root, file)), { recursive: true })
  Fs.writeFileSync(Path.join(root, file), content)
}

/** The fixture: a project with a secrets/ directory, a symlink into it, .pem files elsewhere, and a symlinked alias. */
const proj = Path.join(base, "proj")
write(proj, "secrets/key.pem", "-----BEGIN PRIVATE KEY-----\n")
write(proj, "secrets/deep/token.txt", "PRIVATE token\n")
write(proj, "src/a.ts", "// PRIVATE is a word here\n")
write(proj, "notes/cert.pem", "PRIVATE cert\n")
write(proj, "notes/readme.md", "nothing\n")
Fs.symlinkSync(Path.join(proj, "secrets"), Path.join(proj, "link_to_secrets"))
const alias = Path.join(base, "alias")
Fs.symlinkSync(proj, alias)

const rule = (text: string, behavior: "deny" | "allow" = "deny") =>
  Either.getOrThrow(PermissionRule.parse(text, { behavior, source: "projectSettings", root: proj }))

const settings = (deny: ReadonlyArray<string>) =>
  Settings.layerStatic({ deny: deny.map((d) => rule(d)), home: Path.join(base, "home"), projectDir: proj })

const engines: ReadonlyArray<Grep.Engine> = GrepEngine.hasRg() ? ["builtin", "rg"] : ["builtin"]

const grep = (engine: Grep.Engine, deny: ReadonlyArray<string>, input: Grep.Input, cwd = proj) =>
  Effect.flatMap(Grep.makeWith(engine), (tool) => run(tool, input, cwd)).pipe(Effect.provide(settings(deny)))

const glob = (deny: ReadonlyArray<string>, input: Glob.Input, cwd = proj) =>
  Effect.flatMap(Glob.make, (tool) => run(tool, input, cwd)).pipe(Effect.provide(settings(deny)))

const secretsNote = "(1 path skipped: denied by Read(./secrets/**) in projectSettings)"

describe("Grep and Glob respect Read deny rules", () => {
  for (const engine of engines) {
    it.effect(`Grep (${engine}) over "." never returns lines from a denied directory, and says so`, () =>
      Effect.gen(function* () {
        const out = yield* grep(engine, ["Read(./secrets/**)"], { pattern: "PRIVATE", output_mode: "content" })
        expect(out.content).toBe(
          `notes/cert.pem:1:PRIVATE cert\nsrc/a.ts:1:// PRIVATE is a word here\n\n${secretsNote}`
        )
        // A glob naming the denied directory does not bring it back.
        const forced = yield* grep(engine, ["Read(./secrets/**)"], { pattern: "PRIVATE", glob: "secrets/**" })
        expect(forced.content).toBe(`No files found\n\n${secretsNote}`)
        // Searching the denied directory itself, or through the symlink to it, finds nothing.
        for (const path of ["secrets", "link_to_secrets", "secrets/key.pem"]) {
          const inside = yield* grep(engine, ["Read(./secrets/**)"], { pattern: "PRIVATE", path })
          expect(inside.content).toBe(`No files found\n\n${secretsNote}`)
        }
        // From a symlinked alias of the project, relative rules still apply.
        const viaAlias = yield* grep(engine, ["Read(./secrets/**)"], { pattern: "PRIVATE", path: proj }, alias)
        expect(viaAlias.content).toBe(`Found 2 files\n${proj}/notes/cert.pem\n${proj}/src/a.ts\n\n${secretsNote}`)
      })
    )

    it.effect(`Grep (${engine}): name patterns, several rules, Grep's own rules; no rule, no note`, () =>
      Effect.gen(function* () {
        const pem = yield* grep(engine, ["Read(**/*.pem)"], { pattern: "PRIVATE" })
        expect(pem.content).toBe(
          "Found 2 files\nsecrets/deep/token.txt\nsrc/a.ts\n\n" +
            "(2 paths skipped: denied by Read(**/*.pem) in projectSettings)"
        )
        const two = yield* grep(engine, ["Read(./secrets/**)", "Grep(./src/**)", "Glob(./notes/**)"], {
          pattern: "PRIVATE",
          output_mode: "count"
        })
        expect(two.content).toBe(
          "notes/cert.pem:1\n\nFound 1 total occurrence across 1 file.\n\n" +
            "(2 paths skipped: denied by Read(./secrets/**) in projectSettings; Grep(./src/**) in projectSettings)"
        )
        const none = yield* grep(engine, [], { pattern: "PRIVATE" })
        expect(none.content).toBe("Found 4 files\nnotes/cert.pem\nsecrets/deep/token.txt\nsecrets/key.pem\nsrc/a.ts")
        const elsewhere = yield* grep(engine, ["Read(//etc/**)"], { pattern: "PRIVATE", path: "src" })
        expect(elsewhere.content).toBe("Found 1 file\nsrc/a.ts")
      })
    )
  }

  it.effect("Glob skips denied paths and says so; a denied root lists nothing", () =>
    Effect.gen(function* () {
      const all = yield* glob(["Read(./secrets/**)"], { pattern: "**/*.pem" })
      expect(all.content).toBe(`notes/cert.pem\n\n${secretsNote}`)
      const root = yield* glob(["Read(./secrets/**)"], { pattern: "secrets/**" })
      expect(root.content).toBe(`No files found\n\n${secretsNote}`)
      // Deny rules match case-insensitively; `dir/**` denies what is inside (key.pem and deep/), not dir itself.
      const caseless = yield* glob(["Read(**/SECRETS/**)"], { pattern: "**/*.txt" })
      expect(caseless.content).toBe(
        "No files found\n\n(2 paths skipped: denied by Read(**/SECRETS/**) in projectSettings)"
      )
      // Glob's own rules apply to Glob, Grep's do not.
      const own = yield* glob(["Glob(./notes/**)", "Grep(./secrets/**)"], { pattern: "**/*.pem" })
      expect(own.content).toBe("secrets/key.pem\n\n(1 path skipped: denied by Glob(./notes/**) in projectSettings)")
    })
  )
})

// --- Property: for random trees and random Read deny rules, a search returns exactly what Read may read ----------

const names = ["a", "b", "key", "Secret"] as const
const exts = [".pem", ".txt", ".ts"] as const

const treeArb = fc.uniqueArray(
  fc.tuple(
    fc.array(fc.constantFrom(...names), { minLength: 0, maxLength: 2 }),
    fc.constantFrom(...names),
    fc.constantFrom(...exts)
  ),
  { minLength: 1, maxLength: 12, selector: ([dirs, name, ext]) => [...dirs, name + ext].join("/") }
)

const ruleArb = fc.oneof(
  fc.constantFrom(...names).map((n) => `Read(./${n}/**)`),
  fc.constantFrom(...exts).map((e) => `Read(**/*${e})`),
  fc.constantFrom(...names).map((n) => `Read(${n})`),
  fc.tuple(fc.constantFrom(...names), fc.constantFrom(...names)).map(([a, b]) => `Read(${a}/${b}/**)`),
  fc.tuple(fc.constantFrom(...names), fc.constantFrom(...exts)).map(([n, e]) => `Read(./**/${n}${e})`)
)

let counter = 0

describe("property: searches return exactly what Read may read", () => {
  it.live.prop(
    "Grep (both engines) and Glob over random trees with random Read deny rules",
    [treeArb, fc.array(ruleArb, { minLength: 1, maxLength: 3 })],
    ([tree, denies]) =>
      Effect.gen(function* () {
        const root = Path.join(base, `prop${counter++}`)
        const files = tree.map(([dirs, name, ext]) => [...dirs, name + ext].join("/"))
        for (const f of files) {
          // A path can be both a file and a directory prefix of another: skip files that collide with directories.
          if (files.some((other) => other.startsWith(`${f}/`))) continue
          write(root, f, "match me\n")
        }
        const present = files.filter(
          (f) => Fs.existsSync(Path.join(root, f)) && Fs.statSync(Path.join(root, f)).isFile()
        )
        const rules = denies.map((d) =>
          Either.getOrThrow(PermissionRule.parse(d, { behavior: "deny", source: "test", root }))
        )
        const layer = Layer.mergeAll(
          Settings.layerStatic({ deny: rules, home: Path.join(base, "home"), projectDir: root }),
          TreeSitterShellAnalyzer.layer,
          NodeFileSystem.layer,
          FileStateCacheLive.layer
        )
        yield* Effect.gen(function* () {
          const policy = yield* RulePermissionPolicy.make
          const read = Tool.provide(yield* Read.make, yield* Effect.context<Read.Requirements>())
          const ctx = yield* contextFor(root)
          const readable: Array<string> = []
          for (const f of present) {
            const decision = yield* policy.decide({
              tool: read,
              input: { file_path: Path.join(root, f) },
              toolUseId: "t",
              context: ctx
            })
            if (decision.behavior !== "deny") readable.push(f)
          }
          const expected = [...readable].sort()
          for (const engine of engines) {
            const out = String(
              (yield* run(yield* Grep.makeWith(engine), { pattern: "match", head_limit: 0 }, root)).content
            )
            const listed = out.startsWith("Found") ? out.split("\n\n")[0].split("\n").slice(1) : []
            expect({ engine, listed }).toEqual({ engine, listed: expected })
            expect(out.includes("skipped: denied by")).toBe(readable.length < present.length)
          }
          const globbed = String((yield* run(yield* Glob.make, { pattern: "**/*" }, root)).content)
          const globList = globbed.startsWith("No files") ? [] : globbed.split("\n\n")[0].split("\n")
          expect([...globList].sort()).toEqual(expected)
        }).pipe(Effect.provide(Layer.merge(layer, NodeFileSystem.layer)))
        Fs.rmSync(root, { recursive: true, force: true })
      }),
    { fastCheck: { numRuns: 25 }, timeout: 120_000 }
  )
})

it.effect("ReadGuardLive ignores allow rules and rules that cannot apply under the searched root", () =>
  Effect.sync(() => {
    const home = Path.join(base, "home")
    expect(
      ReadGuardLive.checkFor([rule("Read(./secrets/**)", "allow")], { tool: "Grep", root: proj, cwd: proj }, home)
    ).toBe(undefined)
    expect(
      ReadGuardLive.checkFor(
        [rule("Read(./secrets/**)")],
        { tool: "Grep", root: Path.join(proj, "src"), cwd: proj },
        home
      )
    ).toBe(undefined)
    const check = ReadGuardLive.checkFor([rule("Read(secrets/)")], { tool: "Glob", root: proj, cwd: proj }, home)
    expect(check?.(Path.join(proj, "secrets"), true)).toBe("Read(secrets/) in projectSettings")
    expect(check?.(Path.join(proj, "src/secrets"), false)).toBe(undefined)
  })
)
