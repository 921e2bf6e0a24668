import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as ShellPaths from "../../../src/layers/shell/ShellPaths.js"
import * as TreeSitterShellAnalyzer from "../../../src/layers/shell/TreeSitterShellAnalyzer.js"
import { ShellAnalyzer } from "../../../src/services/ShellAnalyzer.js"
import * as PathFixture from "../../fixtures/PathFixture.js"

const base = Layer.mergeAll(TreeSitterShellAnalyzer.layer, NodeFileSystem.layer)

/** Resolves a line in the fixture; paths shown relative to the fixture root as `access:path[+]`. */
const pathsOf = (command: string) =>
  Effect.gen(function* () {
    const fixture = yield* PathFixture.make
    const analyzer = yield* ShellAnalyzer
    const analysis = analyzer.analyze(command)
    const result = yield* ShellPaths.resolve(analysis.pathSteps ?? [], {
      cwd: fixture.project,
      home: fixture.home,
      user: "me"
    })
    const short = (p: string) => p.replace(fixture.root, "")
    return {
      paths: result.paths.map((p) => `${p.access}:${p.forms.map(short).join("|")}${p.recursive ? "+" : ""}`),
      unresolved: result.unresolved.map((u) => `${u.access}:${u.given} (${u.reason})`)
    }
  }).pipe(Effect.scoped)

/** command → the resolved paths (each `access:form[|form][+ when its contents are read]`), and unresolved count. */
const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>, number?]> = [
  ["cat secrets/key.pem", ["read:/project/secrets/key.pem"]],
  ["cat link_to_secrets/key.pem", ["read:/project/secrets/key.pem"]],
  ["head se*/key.pem", ["read:/project/secrets/key.pem"]],
  ["grep -r PRIVATE .", ["read:/project+"]],
  ["grep PRIVATE -r", ["read:/project+"]],
  ["cp secrets/key.pem leak.txt", ["read:/project/secrets/key.pem", "write:/project/leak.txt"]],
  ["cat {/etc/passwd,README.md}", ["read:/etc/passwd", "read:/project/README.md"]],
  ["cat $HOME/.bashrc", ["read:/home/.bashrc"]],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
  ['cat "${HOME}"/.bashrc', ["read:/home/.bashrc"]],
  ["cat ~/.bashrc ~me/.bashrc", ["read:/home/.bashrc"]],
  ["cat ~root/.bashrc", [], 1],
  ["cat $X/a", [], 1],
  ["cat < /etc/passwd", ["read:/etc/passwd"]],
  ["env -C ../elsewhere cat passwd", ["read:/elsewhere", "read:/elsewhere/passwd"]],
  ["env --chdir=/etc cat passwd", ["read:/etc", "read:/etc/passwd"]],
  ["cd && cat .bashrc", ["read:/project/.bashrc", "read:/home/.bashrc"]],
  ["cd $X && cat .bashrc", ["read:/project/.bashrc"], 2],
  ["cd /etc; cat passwd", ["names:/etc", "read:/project/passwd", "read:/etc/passwd"]],
  ["cp README.md --target-directory=/elsewhere", ["write:/elsewhere", "read:/project/README.md"]],
  ["cp -t.git/hooks x", ["write:/project/.git/hooks", "read:/project/x"]],
  ["touch dangling_link", ["write:/elsewhere/new-file"]],
  ["mv x $HOME/x", ["read:/project/x", "write:/project/x", "write:/home/x"]],
  ["touch ~root/x", [], 2],
  // bash makes this `cp -r . /elsewhere x`: /elsewhere is a source
  ["cp -r . {/elsewhere,x}", ["read:/project+", "read:/elsewhere+", "write:/project/x"]],
  ["echo hi > link_out/f", ["write:/elsewhere/f"]],
  ["ls x{1..3}", ["names:/project/x1", "names:/project/x2", "names:/project/x3"]],
  ["cat 'se*'/key.pem", ["read:/project/se*/key.pem"]],
  ["cat link_out/../README.md", ["read:/README.md|/project/README.md"]]
]

layer(base, { timeout: 30_000 })("ShellPaths", (it) => {
  describe("paths as the shell resolves them", () => {
    for (const [command, expected, unresolved] of cases) {
      it.effect(command, () =>
        Effect.gen(function* () {
          const found = yield* pathsOf(command)
          expect(found.paths).toEqual(expect.arrayContaining([...expected]))
          expect(found.unresolved.length, found.unresolved.join("; ")).toBe(unresolved ?? 0)
        })
      )
    }
  })

  describe("a path inside /proc/<pid>/ depends on the process that opens it: unresolved", () => {
    const prefixes = ["/proc/self", "/proc/thread-self", "/proc/1", "/proc/./self", "/proc//self", "/proc/self/task/1"]
    const rests = ["cwd/secrets/key.pem", "root/etc/passwd", "fd/3", "map_files/x", "cwd", "cwd/../cwd/x"]
    for (const prefix of prefixes) {
      for (const rest of rests) {
        const command = `cat ${prefix}/${rest}`
        it.effect(command, () =>
          Effect.gen(function* () {
            const found = yield* pathsOf(command)
            expect(found.unresolved.length, command).toBe(1)
            expect(found.paths, command).toEqual([])
          })
        )
      }
    }
    it.effect("other /proc files resolve as usual", () =>
      Effect.gen(function* () {
        expect((yield* pathsOf("cat /proc/cpuinfo")).unresolved).toEqual([])
      })
    )
  })
})
