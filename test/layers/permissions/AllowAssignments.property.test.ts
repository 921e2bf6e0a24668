/**
 * Property: an allow rule (prefix or exact) never covers a command given a variable that is not on the harmless list
 * (`GIT_CONFIG_COUNT=1 … git status`, `env LD_PRELOAD=x ls`, `PATH=/tmp/x; ls`): such a call asks. The harmless ones
 * (LANG, TZ, NO_COLOR, …) still let the rule match. The read-only stage uses the same list: with no rule, `FOO=1 ls`
 * asks and `LANG=C ls` is allowed.
 */
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import { base, bashOutcome, decide, makeProject, shellQuote } from "./PolicyHarness.js"

const project = makeProject("armature-allow-assign-prop-")
afterAll(project.remove)

const allow = ["Bash(git status:*)", "Bash(ls:*)", "Bash(cat f)", "Bash(git fetch:*)", "Bash(make:*)", "Bash(npm test)"]

/** Variables that change what even a read-only command runs (the read-only stage refuses them too). */
const riskyName = FastCheck.constantFrom(
  "GIT_CONFIG_COUNT",
  "GIT_CONFIG_KEY_0",
  "GIT_CONFIG_VALUE_0",
  "GIT_CONFIG_PARAMETERS",
  "GIT_CONFIG_GLOBAL",
  "GIT_DIR",
  "GIT_EXTERNAL_DIFF",
  "BASH_ENV",
  "ENV",
  "PATH",
  "LD_PRELOAD",
  "LD_LIBRARY_PATH",
  "DYLD_INSERT_LIBRARIES",
  "PAGER",
  "NODE_OPTIONS",
  "PYTHONSTARTUP",
  "HOME",
  "IFS"
)
/** Any other variable: harmless for `ls`, but an allow rule for a command that is not read-only must still miss. */
const otherName = FastCheck.stringMatching(/^[A-Z][A-Z0-9_]{0,8}$/).filter(
  (n) => !/^(?:LANG|TZ|TERM|CI|LINES|GOOS|LC_[A-Z]+)$/.test(n)
)
const value = FastCheck.constantFrom("1", "core.fsmonitor", "'touch /tmp/PWN'", "/tmp/x.so", "stage", '""')
const readOnlyTarget = FastCheck.constantFrom("git status", "git status --short", "ls", "ls -la", "cat f")
const target = FastCheck.constantFrom("git fetch", "git fetch origin", "make", "make -j2", "npm test")
const harmless = FastCheck.constantFrom("LANG=C", "LC_ALL=C", "TZ=UTC", "NO_COLOR=1", "FORCE_COLOR=0", "TERM=dumb")

const spelling = FastCheck.constantFrom(
  (a: string, c: string) => `${a} ${c}`,
  (a: string, c: string) => `env ${a} ${c}`,
  (a: string, c: string) => `env -- ${a} ${c}`,
  (a: string, c: string) => `LANG=C ${a} ${c}`,
  (a: string, c: string) => `timeout 5 env ${a} ${c}`,
  (a: string, c: string) => `${a}; ${c}`,
  (a: string, c: string) => `${a} && ${c}`,
  (a: string, c: string) => `bash -c ${shellQuote(`${a} ${c}`)}`
)

layer(base)("allow rules and assignments (generated)", (it) => {
  it.effect.prop(
    "a risky assignment before an allowed (or read-only) command never allows it",
    [riskyName, value, FastCheck.oneof(readOnlyTarget, target), spelling],
    ([name, v, command, spell]) =>
      Effect.gen(function* () {
        const line = spell(`${name}=${v}`, command)
        expect(yield* bashOutcome(project, { allow }, line)).not.toMatchObject({ behavior: "allow" })
      }),
    { fastCheck: { numRuns: 150 } }
  )

  it.effect.prop(
    "any assignment off the harmless list makes the allow rule miss",
    [FastCheck.oneof(riskyName, otherName), value, target, spelling],
    ([name, v, command, spell]) =>
      Effect.gen(function* () {
        const line = spell(`${name}=${v}`, command)
        expect(yield* bashOutcome(project, { allow }, line)).not.toMatchObject({ behavior: "allow" })
      }),
    { fastCheck: { numRuns: 150 } }
  )

  it.effect.prop(
    "a harmless assignment keeps the allow rule matching",
    [harmless, FastCheck.oneof(readOnlyTarget, target)],
    ([assignment, command]) =>
      Effect.gen(function* () {
        const line = `${assignment} ${command}`
        const decision = yield* decide(project, { allow, tool: "Bash", input: { command: line } })
        expect({ line, behavior: decision.behavior }).toEqual({ line, behavior: "allow" })
      }),
    { fastCheck: { numRuns: 30 } }
  )

  it.effect.prop(
    "with no rule, a read-only command given a variable off the harmless list asks (default mode)",
    [FastCheck.oneof(riskyName, otherName), value, readOnlyTarget, spelling],
    ([name, v, command, spell]) =>
      Effect.gen(function* () {
        const line = spell(`${name}=${v}`, command)
        const decision = yield* decide(project, { tool: "Bash", input: { command: line } })
        expect({ line, behavior: decision.behavior }).toEqual({ line, behavior: "ask" })
      }),
    { fastCheck: { numRuns: 150 } }
  )

  it.effect.prop(
    "with no rule, a read-only command given only harmless variables stays allowed as read-only",
    [FastCheck.array(harmless, { minLength: 1, maxLength: 3 }), readOnlyTarget],
    ([assignments, command]) =>
      Effect.gen(function* () {
        const line = `${assignments.join(" ")} ${command}`
        const decision = yield* decide(project, { tool: "Bash", input: { command: line } })
        expect({ line, behavior: decision.behavior, step: decision.trace.at(-1)?.step }).toEqual({
          line,
          behavior: "allow",
          step: "readOnly"
        })
      }),
    { fastCheck: { numRuns: 30 } }
  )
})
