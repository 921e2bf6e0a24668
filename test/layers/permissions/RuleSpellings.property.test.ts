/**
 * Rules by meaning (issue 28): a deny rule for an npm command stops every word npm reads as that command (aliases,
 * typo spellings, unambiguous prefixes, camelCase, after npm's own options, npm by its path), the programs npm and
 * pnpm start (`npm exe`, `npm explore PKG -- CMD`, `pnpm dlx`, `pnpm PROGRAM`) are matched as commands, and a deny
 * rule spelt oddly (`Bash(rm: *)`, `Bash(/bin/rm:*)`, quotes, a star before `:*`) denies what it evidently names.
 * The everyday uses of npm and pnpm stay allowed.
 */
import { afterAll, layer } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import { expect } from "vitest"
import type { PermissionMode } from "../../../src/domain/Permission.js"
import { base, bashOutcome, makeProject } from "./PolicyHarness.js"

const project = makeProject("armature-rule-spellings-")
afterAll(project.remove)

/** npm itself, as the line may name it. */
const npm = FastCheck.constantFrom("npm", "/usr/bin/npm", "\\npm", "'npm'", "env npm", "timeout 5 npm")

/** npm's options before its subcommand (each may take the next word as its value). */
const leading = FastCheck.constantFrom("", "--loglevel=silent ", "--yes ", "-w pkg ", "--loglevel silent ")

/** Words npm 11 runs as `publish`, `install`, `uninstall` (checked against npm's own `deref`). */
const publish = FastCheck.constantFrom("publish", "pu", "pub", "publ", "publi", "publis")
const install = FastCheck.constantFrom("install", "i", "in", "ins", "insta", "isntall", "add", "isnt")
const uninstall = FastCheck.constantFrom("uninstall", "un", "uni", "unin", "rm", "r", "remove", "remo", "unlink")

const tail = FastCheck.constantFrom("", " --tag beta", " lodash", " --dry-run .")

/** A line running `npm <word>` for one of `words`, with the options and arguments around it. */
const npmLine = (words: FastCheck.Arbitrary<string>) =>
  FastCheck.tuple(npm, leading, words, tail).map(
    ([program, options, word, rest]) => `${program} ${options}${word}${rest}`
  )

/**
 * Lines whose npm or pnpm starts `rm`: `npm exec` by each of its names, `explore`, pnpm's runners, and pnpm running a
 * word that is none of its commands (by path: `pnpm rm` is pnpm's own `remove`).
 */
const startsRm = FastCheck.oneof(
  FastCheck.tuple(
    FastCheck.constantFrom(
      "npm exec",
      "npm x",
      "npm exe",
      "npm --yes exe",
      "npm -y x",
      "npm --loglevel silent exec",
      "npm exec --",
      "npm explore pkg --",
      "npm explore pkg",
      "pnpm exec",
      "pnpm dlx",
      "pnpm --silent dlx",
      "yarn exec",
      "yarn --silent dlx",
      "bun x"
    ),
    FastCheck.constantFrom("rm", "/bin/rm", "/usr/bin/rm")
  ),
  FastCheck.tuple(FastCheck.constantFrom("pnpm", "pnpm --filter a"), FastCheck.constantFrom("/bin/rm", "/usr/bin/rm"))
).chain(([runner, program]) =>
  FastCheck.constantFrom(" x", " -rf dist", "").map((rest) => `${runner} ${program}${rest}`)
)

const everyday = FastCheck.constantFrom(
  "npm test",
  "npm t",
  "npm run build",
  "npm run-script lint",
  "npm ls",
  "npm pack --dry-run",
  "npm view react version",
  "npm ci",
  "npm i",
  "npx eslint .",
  "npm exec eslint .",
  "npm run publish",
  "npm unpublish pkg@1.0.0",
  "pnpm test",
  "pnpm install",
  "pnpm rm lodash",
  "pnpm run build",
  "pnpm build"
)

/** A deny rule for `rm` in each spelling whose meaning is plain. */
const rmRule = FastCheck.constantFrom(
  "Bash(rm:*)",
  "Bash(rm *)",
  "Bash(rm: *)",
  "Bash(rm:  *)",
  "Bash( rm:* )",
  "Bash(rm :*)",
  "Bash(/bin/rm:*)",
  "Bash(/usr/bin/rm:*)",
  "Bash(/usr/bin/rm *)",
  'Bash("rm":*)',
  "Bash('rm' *)",
  "Bash(r\\m:*)",
  "Bash(rm *:*)"
)

/** `rm` as a line may run it. */
const rmLine = FastCheck.tuple(
  FastCheck.constantFrom("rm", "/bin/rm", "/usr/bin/rm", "\\rm", "env rm", "sudo rm"),
  FastCheck.constantFrom(" x", " -rf dist", " -- -x", "")
).map(([program, rest]) => `${program}${rest}`)

layer(base)("deny rules by meaning: npm's own spellings (generated)", (it) => {
  it.effect.prop(
    "every word npm reads as the denied subcommand is denied",
    [
      FastCheck.oneof(
        FastCheck.tuple(
          FastCheck.constantFrom("Bash(npm publish:*)", "Bash(npm publish *)", "Bash(npm pub:*)"),
          npmLine(publish)
        ),
        FastCheck.tuple(FastCheck.constantFrom("Bash(npm install:*)", "Bash(npm i:*)"), npmLine(install)),
        FastCheck.tuple(FastCheck.constantFrom("Bash(npm uninstall:*)", "Bash(npm rm *)"), npmLine(uninstall))
      )
    ],
    ([[rule, line]]) =>
      Effect.gen(function* () {
        const outcome = yield* bashOutcome(project, { allow: ["Bash"], deny: [rule] }, line)
        expect({ rule, ...outcome }).toEqual({ rule, line, mode: "default", behavior: "deny" })
      }),
    { fastCheck: { numRuns: 150 } }
  )

  it.effect.prop(
    "a program npm or pnpm starts is matched as a command",
    [startsRm],
    ([line]) =>
      Effect.gen(function* () {
        const outcome = yield* bashOutcome(project, { allow: ["Bash"], deny: ["Bash(rm:*)"] }, line)
        expect(outcome).toEqual({ line, mode: "default", behavior: "deny" })
      }),
    { fastCheck: { numRuns: 80 } }
  )

  it.effect.prop(
    "everyday npm and pnpm lines stay allowed under those rules",
    [everyday],
    ([line]) =>
      Effect.gen(function* () {
        const deny = ["Bash(rm:*)", "Bash(npm publish:*)", "Bash(git push:*)"]
        const outcome = yield* bashOutcome(project, { allow: ["Bash"], deny }, line)
        expect(outcome).toEqual({ line, mode: "default", behavior: "allow" })
      }),
    { fastCheck: { numRuns: 40 } }
  )
})

layer(base)("deny rules by meaning: the rule's own spelling (generated)", (it) => {
  it.effect.prop(
    "a deny rule for rm in any plain spelling denies rm in any spelling",
    [rmRule, rmLine, FastCheck.constantFrom<PermissionMode>("default", "acceptEdits", "bypassPermissions")],
    ([rule, line, mode]) =>
      Effect.gen(function* () {
        const outcome = yield* bashOutcome(project, { allow: ["Bash"], deny: [rule], mode }, line)
        expect({ rule, ...outcome }).toEqual({ rule, line, mode, behavior: "deny" })
      }),
    { fastCheck: { numRuns: 150 } }
  )

  it.effect.prop(
    "and leaves other commands alone",
    [rmRule, FastCheck.constantFrom("rmdir x", "ls rm", "echo rm", "git rm x", "npm rm lodash", "pnpm rm lodash")],
    ([rule, line]) =>
      Effect.gen(function* () {
        const outcome = yield* bashOutcome(project, { allow: ["Bash"], deny: [rule] }, line)
        expect({ rule, ...outcome }).toEqual({ rule, line, mode: "default", behavior: "allow" })
      }),
    { fastCheck: { numRuns: 60 } }
  )
})
