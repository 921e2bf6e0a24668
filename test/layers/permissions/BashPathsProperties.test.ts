import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { expect, layer } from "@effect/vitest"
import { Effect, FastCheck, Layer } from "effect"
import * as TreeSitterShellAnalyzer from "../../../src/layers/shell/TreeSitterShellAnalyzer.js"
import { decideIn } from "../../fixtures/BashDecision.js"
import type * as PathFixture from "../../fixtures/PathFixture.js"

const dirName = FastCheck.constantFrom("a", "b", "sec", "data")
const fileName = FastCheck.constantFrom("k.pem", "x.txt", "notes")
const filePath = FastCheck.tuple(FastCheck.array(dirName, { maxLength: 2 }), fileName).map(([dirs, file]) =>
  [...dirs, file].join("/")
)

/** A random project: files in nested directories, one of them denied to Read, named in one of several ways. */
const scenario = FastCheck.record({
  files: FastCheck.uniqueArray(filePath, { minLength: 1, maxLength: 6 }),
  denied: FastCheck.nat(),
  rule: FastCheck.constantFrom("file", "dir", "basename"),
  naming: FastCheck.constantFrom("direct", "link", "glob", "brace", "cd", "recursive", "redirect", "dotdot"),
  command: FastCheck.constantFrom("cat", "head -n 1", "wc -l", "grep -h x", "tail -n 2", "sort", "cut -c1", "nl")
})

type Scenario = typeof scenario extends FastCheck.Arbitrary<infer A> ? A : never

/** Creates the scenario's files, a link `lnk` to the denied file's directory (or the file), and a home. */
const tree = (s: Scenario) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const root = await Fs.realpath(await Fs.mkdtemp(Path.join(Os.tmpdir(), "armature-prop-")))
      const project = Path.join(root, "project")
      const home = Path.join(root, "home")
      await Fs.mkdir(home, { recursive: true })
      for (const file of s.files) {
        await Fs.mkdir(Path.dirname(Path.join(project, file)), { recursive: true })
        await Fs.writeFile(Path.join(project, file), "x\n")
      }
      const denied = s.files[s.denied % s.files.length]
      const dir = Path.dirname(denied)
      await Fs.symlink(dir === "." ? denied : dir, Path.join(project, "lnk"))
      return { root, project, home, elsewhere: home } satisfies PathFixture.PathFixture
    }),
    (fixture) => Effect.promise(() => Fs.rm(fixture.root, { recursive: true, force: true }))
  )

/** The Read deny rule and whether it covers a project path. */
const ruleOf = (s: Scenario, denied: string) => {
  const dir = Path.dirname(denied)
  const base = Path.basename(denied)
  if (s.rule === "dir" && dir !== ".")
    return { text: `Read(./${dir}/**)`, covers: (p: string) => p.startsWith(`${dir}/`) }
  if (s.rule === "basename") return { text: `Read(${base})`, covers: (p: string) => Path.basename(p) === base }
  return { text: `Read(./${denied})`, covers: (p: string) => p === denied }
}

/** A command line that reads the denied file, naming it the scenario's way. */
const lineOf = (s: Scenario, denied: string): string => {
  const dir = Path.dirname(denied)
  const base = Path.basename(denied)
  const glob = (segment: string) => (segment.length > 1 ? `${segment[0]}*${segment.slice(1, -1)}?` : `${segment}*`)
  switch (s.naming) {
    case "direct":
      return `${s.command} ${denied}`
    case "link":
      return `${s.command} ${dir === "." ? "lnk" : `lnk/${base}`}`
    case "glob":
      return `${s.command} ${denied.split("/").map(glob).join("/")}`
    case "brace":
      return `${s.command} ${dir === "." ? "" : `${dir}/`}{zz,${base}}`
    case "cd":
      return dir === "." ? `cd . && ${s.command} ${base}` : `cd ${dir} && ${s.command} ${base}`
    case "recursive":
      return `grep -r x ${dir}`
    case "redirect":
      return `${s.command} < ${denied}`
    default:
      return dir === "." ? `${s.command} ./${denied}` : `${s.command} ${denied.split("/")[0]}/../${denied}`
  }
}

layer(Layer.mergeAll(TreeSitterShellAnalyzer.layer, NodeFileSystem.layer), { timeout: 120_000 })(
  "Bash paths (properties)",
  (it) => {
    it.effect.prop(
      "no read-only line naming a file denied to Read (directly, by glob, brace, link, cd, .., redirection or a recursive read) is allowed; an undenied file is",
      [scenario],
      ([s]) =>
        Effect.gen(function* () {
          const fixture = yield* tree(s)
          const denied = s.files[s.denied % s.files.length]
          const rule = ruleOf(s, denied)
          const line = lineOf(s, denied)
          const decision = yield* decideIn(fixture, line, { deny: [rule.text] })
          expect({ line, rule: rule.text, behavior: decision.behavior }).not.toMatchObject({ behavior: "allow" })
          const free = s.files.find((f) => !rule.covers(f))
          if (free !== undefined) {
            const control = yield* decideIn(fixture, `${s.command} ${free}`, { deny: [rule.text] })
            expect({ line: `${s.command} ${free}`, rule: rule.text, behavior: control.behavior }).toMatchObject({
              behavior: "allow"
            })
          }
        }).pipe(Effect.scoped),
      { fastCheck: { numRuns: 40 } }
    )
  }
)
