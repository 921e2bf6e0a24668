/**
 * Property: a prefix or exact `Bash(…)` allow rule covers a command, not the files it touches. A covered command
 * naming a path outside the working directories (absolute, `~`, `..`, a symlink leading out, a redirection, a
 * `cd` earlier in the line) or a path only known at run time asks, as Claude Code does for its path-checked
 * commands; the same command on paths inside the project stays allowed.
 */
import * as Fs from "node:fs"
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import { base, decide, makeProject } from "./PolicyHarness.js"

const project = makeProject("armature-allow-outside-prop-")
afterAll(project.remove)
Fs.symlinkSync("/etc", `${project.proj}/etc-link`)
Fs.mkdirSync(`${project.root}/sibling`)
Fs.writeFileSync(`${project.root}/sibling/notes.txt`, "n")

const allow = ["Bash(ls:*)", "Bash(cat:*)", "Bash(head:*)", "Bash(wc:*)", "Bash(grep:*)", "Bash(cd:*)", "Bash(cp:*)"]

const reader = FastCheck.constantFrom("ls", "ls -la", "cat", "head -n 3", "wc -l", "grep -r x", "grep -n x")

const outside = FastCheck.constantFrom(
  (r: string) => `${r} /etc`,
  (r: string) => `${r} /etc/hosts`,
  (r: string) => `${r} ~/.bashrc`,
  (r: string) => `${r} ~`,
  (r: string) => `${r} ../sibling/notes.txt`,
  (r: string) => `${r} ../sibling`,
  (r: string) => `${r} src/../../sibling`,
  (r: string) => `${r} etc-link/hosts`,
  (r: string) => `${r} etc-link`,
  (r: string) => `${r} /{etc,tmp}`,
  (r: string) => `${r} < /etc/hosts`,
  (r: string) => `cd /etc && ${r} hosts`,
  (r: string) => `cd .. && ${r} sibling`,
  (r: string) => `${r} "$HOME"/.bashrc`,
  (r: string) => `${r} $UNKNOWN_DIR/f`,
  (r: string) => `${r} src/a.ts /etc/passwd`,
  (r: string) => `cp /etc/hosts src/ && ${r} src/hosts`,
  (r: string) => `${r} src/a.ts && cp src/a.ts /tmp/`
)

const inside = FastCheck.constantFrom(
  (r: string) => `${r} src`,
  (r: string) => `${r} src/a.ts`,
  (r: string) => `${r} ./src/../src/a.ts`,
  (r: string) => `cd src && ${r} a.ts`,
  (r: string) => `${r} src/a.ts 2>/dev/null`,
  (r: string) => `${r} src/{a,b}.ts`
)

layer(base)("prefix allow rules and paths outside the working directories (generated)", (it) => {
  it.effect.prop(
    "a covered command reading or writing outside the working directories is never allowed by the rule",
    [reader, outside],
    ([r, spell]) =>
      Effect.gen(function* () {
        const line = spell(r)
        const decision = yield* decide(project, { allow, tool: "Bash", input: { command: line } })
        expect({ line, behavior: decision.behavior }).toEqual({ line, behavior: "ask" })
      }),
    { fastCheck: { numRuns: 120 } }
  )

  it.effect.prop(
    "the same covered command on paths inside the working directories is allowed",
    [reader, inside],
    ([r, spell]) =>
      Effect.gen(function* () {
        const line = spell(r)
        const decision = yield* decide(project, { allow, tool: "Bash", input: { command: line } })
        expect({ line, behavior: decision.behavior }).toEqual({ line, behavior: "allow" })
      }),
    { fastCheck: { numRuns: 60 } }
  )
})
