/**
 * Deny rules by meaning (issue 28, class 3): `Bash(rm -rf:*)` and `Bash(git push --force:*)` deny every spelling of
 * the options they name — combined or split short flags, aliases, long forms and GNU abbreviations, options after
 * operands, `+REFSPEC` — and `Bash(git push *)` denies the bare command; the same commands without those options
 * stay allowed.
 */
import { afterAll, describe, expect, it, layer } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import { matchesByMeaning } from "../../../src/domain/shell/RuleMeaning.js"
import { base, decide, makeProject } from "./PolicyHarness.js"

const project = makeProject("armature-rule-meaning-")
afterAll(project.remove)

const deny = ["Bash(rm -rf:*)", "Bash(git push --force:*)"]

const recursive = FastCheck.constantFrom("-r", "-R", "--recursive", "--rec", "--recur", "--recursiv")
const force = FastCheck.constantFrom("-f", "--force", "--forc", "--for", "--fo")
const other = FastCheck.constantFrom("-v", "--verbose", "-d", "--one-file-system", "--dir")
const operand = FastCheck.constantFrom("x", "build", "./dist", "a b")

/** `rm` with both options in any order, combined into one cluster or not, among other options and operands. */
const rmForce = FastCheck.tuple(
  recursive,
  force,
  FastCheck.array(other, { maxLength: 2 }),
  FastCheck.boolean(),
  FastCheck.boolean(),
  FastCheck.boolean(),
  operand
).map(([r, f, extra, swap, cluster, after, target]) => {
  const flags =
    cluster && r.length === 2 && f.length === 2
      ? [swap ? `-${f[1]}${r[1]}` : `-${r[1]}${f[1]}`]
      : swap
        ? [f, r]
        : [r, f]
  const words = [...extra, ...flags]
  return after ? `rm ${target} ${words.join(" ")}` : `rm ${words.join(" ")} -- ${target}`
})

const pushForce = FastCheck.tuple(
  FastCheck.constantFrom(
    "git push -f",
    "git push --force",
    "git push --forc",
    "git push -uf",
    "git push -fu",
    "git push --force-with-lease",
    "git push origin main --force",
    "git push origin +main",
    "git push origin +HEAD:main",
    "git -C . push -f",
    "git --no-pager push --force"
  ),
  FastCheck.constantFrom("", " origin", " origin main", " -v")
).map(([command, rest]) => `${command}${rest}`)

const notForced = FastCheck.constantFrom(
  "rm x",
  "rm -r x",
  "rm -f x",
  "rm --recursive x",
  "rm -v --force x",
  "git push",
  "git push origin main",
  "git push -u origin main",
  "git push --follow-tags"
)

layer(base)("deny rules by meaning under a tool-wide allow (generated)", (it) => {
  it.effect.prop(
    "every spelling of the denied options is denied",
    [FastCheck.oneof(rmForce, pushForce)],
    ([command]) =>
      Effect.gen(function* () {
        const decision = yield* decide(project, { allow: ["Bash"], deny, tool: "Bash", input: { command } })
        expect({ command, behavior: decision.behavior }).toEqual({ command, behavior: "deny" })
      }),
    { fastCheck: { numRuns: 120 } }
  )

  it.effect.prop(
    "the commands without them are allowed",
    [notForced],
    ([command]) =>
      Effect.gen(function* () {
        const decision = yield* decide(project, { allow: ["Bash"], deny, tool: "Bash", input: { command } })
        expect({ command, behavior: decision.behavior }).toEqual({ command, behavior: "allow" })
      }),
    { fastCheck: { numRuns: 30 } }
  )

  it.effect("a trailing space-star also denies the bare command", () =>
    Effect.gen(function* () {
      for (const command of ["git push", "git push origin", "git  push"]) {
        const decision = yield* decide(project, {
          allow: ["Bash"],
          deny: ["Bash(git push *)"],
          tool: "Bash",
          input: { command }
        })
        expect({ command, behavior: decision.behavior }).toEqual({ command, behavior: "deny" })
      }
    })
  )
})

describe("matchesByMeaning", () => {
  it("reads exact rules by meaning too, and leaves other patterns to the text match", () => {
    expect(matchesByMeaning("rm -rf x", ["rm", "-fr", "x"])).toBe(true)
    expect(matchesByMeaning("rm -rf x", ["rm", "-fr", "y"])).toBe(false)
    expect(matchesByMeaning("rm -rf x", ["rm", "-frv", "x"])).toBe(false)
    expect(matchesByMeaning("rm -rf *.txt", ["rm", "-fr", "a.txt"])).toBe(false)
    expect(matchesByMeaning("rm -rf:*", ["rm", null, "-fr"])).toBe(false)
    expect(matchesByMeaning("unknowncmd -ab:*", ["unknowncmd", "-ba"])).toBe(false)
  })
})
