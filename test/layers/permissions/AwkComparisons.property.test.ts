/**
 * awk programs that compare (`NR<=3`, `length > 10`, `$1 == "a" || $2 == "b"`, `$3 > 1 { print $1 }`) only transform
 * text: no rule is needed to run them on project files (round-4 red team, a needless ask: every `<`, `>` and `|`
 * counted as a redirection or pipe). A `>` or `|` after `print`/`printf`, `getline`, `system` still is not read-only.
 */
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import { base, bashOutcome, makeProject, shellQuote } from "./PolicyHarness.js"

const project = makeProject("armature-awk-")
afterAll(project.remove)

const field = FastCheck.constantFrom("$1", "$3", "NF", "NR", "length", "length($2)")
const comparison = FastCheck.tuple(
  field,
  FastCheck.constantFrom("<", "<=", ">", ">=", "==", "!="),
  FastCheck.constantFrom("1", "10", '"a"', "$2")
).map(([a, op, b]) => `${a} ${op} ${b}`)
const condition = FastCheck.tuple(
  comparison,
  FastCheck.option(comparison, { nil: undefined }),
  FastCheck.constantFrom("&&", "||")
).map(([a, b, join]) => (b === undefined ? a : `${a} ${join} ${b}`))
const action = FastCheck.constantFrom(
  "",
  " { print }",
  " { print $1 }",
  " { print ($1 > $2) }",
  " { n++ } END { print n }",
  ' { printf "%s\\n", $2 }'
)

const plain = FastCheck.tuple(condition, action).map(([c, a]) => `awk ${shellQuote(`${c}${a}`)} src/a.ts`)

const writing = FastCheck.tuple(
  condition,
  FastCheck.constantFrom(
    ' { print > "out" }',
    " { print $1 >> $2 }",
    ' { printf("%s", $1) > "f" }',
    ' { print | "sh" }',
    " { system($1) }",
    ' { getline x < "f" }'
  )
).map(([c, a]) => `awk ${shellQuote(`${c}${a}`)} src/a.ts`)

layer(base)("awk comparisons (generated)", (it) => {
  it.effect.prop(
    "a program that only compares and prints is read-only",
    [plain],
    ([command]) =>
      Effect.gen(function* () {
        expect(yield* bashOutcome(project, {}, command)).toEqual({ line: command, mode: "default", behavior: "allow" })
      }),
    { fastCheck: { numRuns: 60 } }
  )
  it.effect.prop(
    "a program that writes, pipes, runs or reads a file is not",
    [writing],
    ([command]) =>
      Effect.gen(function* () {
        const outcome = yield* bashOutcome(project, {}, command)
        expect(outcome.behavior).not.toBe("allow")
      }),
    { fastCheck: { numRuns: 40 } }
  )
})
