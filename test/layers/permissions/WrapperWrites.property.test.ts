/**
 * Property: a transparent wrapper is stripped only when it writes nothing itself. `time -o FILE cmd` (any spelling:
 * `--output=FILE`, `--out FILE`, `-ao FILE`, under other wrappers) writes FILE, so the line is never read-only and
 * no allow rule for the wrapped command covers it; `time -p cmd` is still `cmd`.
 */
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import { base, bashOutcome, decide, makeProject } from "./PolicyHarness.js"

const project = makeProject("armature-wrapper-writes-prop-")
afterAll(project.remove)

const writing = FastCheck.constantFrom(
  (f: string) => `time -o ${f}`,
  (f: string) => `time --output=${f}`,
  (f: string) => `time --output ${f}`,
  (f: string) => `time --out=${f}`,
  (f: string) => `time -ao ${f}`,
  (f: string) => `time -p -o ${f}`,
  (f: string) => `time -o${f}`,
  (f: string) => `\\time -o ${f}`
)
const outer = FastCheck.constantFrom("", "timeout 5 ", "nice -n 1 ", "env LANG=C ", "nohup ")
const file = FastCheck.constantFrom("out.txt", "src/a.ts", "/tmp/x", "~/.profile")
const inner = FastCheck.constantFrom("ls", "ls -la", "cat src/a.ts", "git status", "wc -l src/a.ts")
const allow = ["Bash(ls:*)", "Bash(cat:*)", "Bash(git status:*)", "Bash(wc:*)"]

layer(base)("wrappers that write a file (generated)", (it) => {
  it.effect.prop(
    "a wrapper writing a file is never stripped away: no read-only allow, no allow rule of the wrapped command",
    [outer, writing, file, inner, FastCheck.boolean()],
    ([o, w, f, c, withRules]) =>
      Effect.gen(function* () {
        const line = `${o}${w(f)} ${c}`
        const outcome = yield* bashOutcome(project, { allow: withRules ? allow : [] }, line)
        expect(outcome).not.toMatchObject({ behavior: "allow" })
      }),
    { fastCheck: { numRuns: 150 } }
  )

  it.effect.prop(
    "a wrapper that writes nothing is still stripped",
    [outer, inner],
    ([o, c]) =>
      Effect.gen(function* () {
        const line = `${o}time -p ${c}`
        const decision = yield* decide(project, { tool: "Bash", input: { command: line } })
        expect({ line, behavior: decision.behavior }).toEqual({ line, behavior: "allow" })
      }),
    { fastCheck: { numRuns: 20 } }
  )
})
