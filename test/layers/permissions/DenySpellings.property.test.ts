/**
 * Property: a deny rule for a command matches it through every wrapper chain, every spelling of its name and, for
 * git, every run of global options; the same chains around another command stay allowed. Plus soundness of matching
 * forms with words known only at run time: if some value of those words makes a rule match, the rule matches.
 */
import { afterAll, describe, expect, it, layer } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import * as PermissionRule from "../../../src/domain/PermissionRule.js"
import { ShellAnalyzer } from "../../../src/services/ShellAnalyzer.js"
import { base, decide, makeProject, shellQuote } from "./PolicyHarness.js"

const project = makeProject("armature-deny-prop-")
afterAll(project.remove)

/** Ways to write a command name that the shell reads as that name (or a program of that base name). */
const spell = (name: string): FastCheck.Arbitrary<string> =>
  FastCheck.constantFrom(
    name,
    `/bin/${name}`,
    `/usr/bin/${name}`,
    `\\${name}`,
    `"${name}"`,
    `'${name}'`,
    `${name}''`,
    `$'${name}'`,
    `${name[0]}""${name.slice(1)}`,
    `./${name}`
  )

const gitGlobal = FastCheck.constantFrom(
  "-C .",
  "-c a.b=c",
  "--no-pager",
  "-P",
  "-p",
  "--paginate",
  "--git-dir=.git",
  "--git-dir .git",
  "--work-tree=.",
  "--work-tree .",
  "--namespace=x",
  "--bare",
  "--exec-path=/usr/lib/git-core",
  "--no-replace-objects",
  "--literal-pathspecs",
  "--no-optional-locks",
  "--config-env=a.b=HOME",
  "--no-pag",
  "--git-d=.git",
  "--icase-pathspecs"
)

type Wrap = (inner: string) => string

const prefixWrap =
  (prefix: string): Wrap =>
  (inner) =>
    `${prefix} ${inner}`

/** `eval` joins its arguments into code: inside `find -exec` or `xargs`, file names and input become code. */
const evalWrap: Wrap = (inner) => `eval ${shellQuote(inner)}`

/**
 * Wrappers that run the command given after them (each with some of its options). With `aroundTarget` false they
 * wrap a harmless command and must not make it run input as code: no eval, no appending xargs above a find.
 */
/** More than the wraps one generated command has, so one is always free. */
const placeholders = ["%", "@", "^", "~~", "=="]

const wrapAround = (aroundTarget: boolean): FastCheck.Arbitrary<Wrap> =>
  FastCheck.oneof(
    FastCheck.constantFrom(
      "env",
      "env -i",
      "env -",
      "env --",
      "env FOO=1",
      "env -u HOME",
      "env --unset=HOME",
      "env -C /tmp",
      "env --chdir=/tmp",
      "env --ignore-env",
      "nice",
      "nice -n 5",
      "nice -5",
      "nice --adjustment=3",
      "nice -n5",
      "timeout 5",
      "timeout -s KILL 5",
      "timeout --signal=TERM 5s",
      "timeout -k 1 10",
      "timeout --foreground 1m",
      "nohup",
      "stdbuf -oL",
      "stdbuf --error=0",
      "time",
      "time -p",
      "sudo",
      "sudo -u root",
      "sudo -E",
      "sudo --user=root",
      "sudo FOO=1",
      "doas",
      "doas -u root",
      "command",
      "command -p",
      "exec",
      "exec -a name",
      "busybox",
      "setsid",
      "setsid -f",
      "ionice -c3",
      "chroot /",
      "taskset 1",
      "xargs",
      "xargs -0",
      "xargs -n1",
      "xargs -I%",
      "xargs --max-args=1 -P2"
    ).map((prefix) =>
      // The input xargs appends may be a whole `-exec CMD ;` to a find below it: around harmless commands, only
      // the replacing form (which appends nothing) keeps find harmless, with a placeholder the words below do not
      // contain (an outer `xargs -I%` would turn an inner `-I%` into `-I<input>`: the inner xargs's words are then
      // known only at run time, and around find it appends again).
      !aroundTarget && prefix.startsWith("xargs")
        ? (inner: string) =>
            `${inner.includes("find ") || (prefix.includes("-I") && inner.includes("%")) ? `xargs -I${placeholders.find((p) => !inner.includes(p))}` : prefix} ${inner}`
        : prefixWrap(prefix)
    ),
    FastCheck.constantFrom<Wrap>(
      (inner) => `find . -exec ${inner} {} +`,
      (inner) => `find . -execdir ${inner} {} \\;`,
      (inner) => `find . -name x -ok ${inner} {} ';'`,
      // A `{}` inside a quoted word is replaced by `find` too: a file name there becomes code. Keep them apart.
      (inner) => (inner.includes("{}") ? `nohup ${inner}` : `bash -c ${shellQuote(inner)}`),
      (inner) => (inner.includes("{}") ? `nohup ${inner}` : `sh -ec ${shellQuote(inner)}`),
      aroundTarget ? evalWrap : (inner) => `command ${inner}`,
      // env's own string syntax reads quotes but gives `\` and `$` other meanings: only wrap plain strings.
      (inner) => (/[\\${}]/.test(inner) ? `env ${inner}` : `env -S ${shellQuote(inner)}`),
      (inner) => (/[\\${}]/.test(inner) ? `env ${inner}` : `env --sp=${shellQuote(inner)} ls`)
    )
  )

interface Target {
  readonly rule: string
  readonly command: FastCheck.Arbitrary<string>
}

const rm: Target = {
  rule: "rm:*",
  command: FastCheck.tuple(spell("rm"), FastCheck.constantFrom("x", "-rf build", "-f -- a b")).map(
    ([name, args]) => `${name} ${args}`
  )
}

const gitPush: Target = {
  rule: "git push:*",
  command: FastCheck.tuple(spell("git"), FastCheck.array(gitGlobal, { maxLength: 4 })).map(([name, globals]) =>
    [name, ...globals, "push", "origin"].join(" ")
  )
}

/** The same command shapes around a command no rule names. */
/** git's plumbing and contrib commands that push without the word `push` in that place: `git push:*` sees them. */
const gitPushPlumbing: Target = {
  rule: "git push:*",
  command: FastCheck.tuple(
    spell("git"),
    FastCheck.array(gitGlobal, { maxLength: 3 }),
    FastCheck.constantFrom(
      "send-pack origin main",
      "send-pack --all https://example.com/r.git",
      "http-push https://example.com/r.git main",
      "subtree push --prefix=sub origin main",
      "subtree -P sub push origin main"
    )
  ).map(([name, globals, rest]) => [name, ...globals, rest].join(" "))
}

const harmless: FastCheck.Arbitrary<string> = FastCheck.oneof(
  FastCheck.constantFrom("ls -l", "echo rm x", "rmdir x", "git rm x"),
  FastCheck.array(gitGlobal, { maxLength: 4 }).map((globals) => ["git", ...globals, "status"].join(" "))
)

const wrapped = (command: FastCheck.Arbitrary<string>, aroundTarget = true) =>
  FastCheck.tuple(command, FastCheck.array(wrapAround(aroundTarget), { maxLength: 4 })).map(([inner, wraps]) =>
    wraps.reduce((text, w) => w(text), inner)
  )

layer(base)("deny rules through every wrapper and spelling (generated)", (it) => {
  for (const target of [rm, gitPush]) {
    it.effect.prop(
      `the analysis gives ${target.rule} a matching form`,
      [wrapped(target.command)],
      ([command]) =>
        Effect.gen(function* () {
          const analysis = (yield* ShellAnalyzer).analyze(command)
          const matched = analysis.commands.some((c) =>
            c.forms.some((form) => PermissionRule.mayMatchCommand(target.rule, form))
          )
          expect({ command, matched }).toEqual({ command, matched: true })
        }),
      { fastCheck: { numRuns: 200 } }
    )

    it.effect.prop(
      `Bash(${target.rule}) denies it under allow: ["Bash"]`,
      [wrapped(target.command)],
      ([command]) =>
        Effect.gen(function* () {
          const decision = yield* decide(project, {
            allow: ["Bash"],
            deny: [`Bash(${target.rule})`],
            tool: "Bash",
            input: { command }
          })
          expect({ command, behavior: decision.behavior }).toEqual({ command, behavior: "deny" })
        }),
      { fastCheck: { numRuns: 40 } }
    )
  }

  it.effect.prop(
    "the same wrappers around other commands match neither rule",
    [wrapped(harmless, false)],
    ([command]) =>
      Effect.gen(function* () {
        const analysis = (yield* ShellAnalyzer).analyze(command)
        const hits = ["rm:*", "git push:*"].filter((rule) =>
          analysis.commands.some((c) => c.forms.some((form) => PermissionRule.mayMatchCommand(rule, form)))
        )
        expect({ command, hits }).toEqual({ command, hits: [] })
      }),
    { fastCheck: { numRuns: 200 } }
  )
})

describe("matching forms with words known only at run time", () => {
  const pieces = ["rm", "git", "push", "x", "-f", "a b", "", "*"]
  const word = FastCheck.oneof(FastCheck.constantFrom(...pieces), FastCheck.constant(null))
  const rule = FastCheck.oneof(
    FastCheck.constantFrom("rm:*", "git push:*", "git * x", "rm -f x", "git push", "* x", "a b:*").map((r) => r)
  )

  it.prop(
    "if some values of the unknown words make the rule match, the form may match",
    [rule, FastCheck.array(word, { minLength: 1, maxLength: 5 }), FastCheck.array(FastCheck.constantFrom(...pieces))],
    ([content, form, values]) => {
      let next = 0
      const concrete = form.map((w) => (w === null ? (values[next++ % Math.max(values.length, 1)] ?? "") : w))
      if (PermissionRule.matchesCommand(content, concrete.join(" "))) {
        expect({ content, form, may: PermissionRule.mayMatchCommand(content, form) }).toEqual({
          content,
          form,
          may: true
        })
      }
    },
    { fastCheck: { numRuns: 2000 } }
  )

  it.prop(
    "a form of known words may match exactly when it matches",
    [rule, FastCheck.array(FastCheck.constantFrom(...pieces), { minLength: 1, maxLength: 5 })],
    ([content, form]) => {
      expect(PermissionRule.mayMatchCommand(content, form)).toBe(PermissionRule.matchesCommand(content, form.join(" ")))
    },
    { fastCheck: { numRuns: 500 } }
  )
})

layer(base)("git's pushing plumbing under a git push deny rule (generated)", (it) => {
  it.effect.prop(
    'Bash(git push:*) denies send-pack, http-push and subtree push under allow: ["Bash"]',
    [wrapped(gitPushPlumbing.command)],
    ([command]) =>
      Effect.gen(function* () {
        const decision = yield* decide(project, {
          allow: ["Bash"],
          deny: ["Bash(git push:*)"],
          tool: "Bash",
          input: { command }
        })
        expect({ command, behavior: decision.behavior }).toEqual({ command, behavior: "deny" })
      }),
    { fastCheck: { numRuns: 40 } }
  )
})
