/**
 * git options that run a program (issue 28, round 5): a transport command (`--upload-pack`, `--receive-pack`,
 * `--exec`), a pager (`grep -O`), `rebase --exec`, `difftool --extcmd`, `instaweb --httpd`, `daemon --access-hook`,
 * `filter-branch --setup`, `clone --template`/`--config`, `bisect run`, `submodule foreach` — spelled in full, as any
 * GNU-style abbreviation git accepts, attached or as the next word, or as a short option in a cluster. Under a
 * tool-wide allow with `Bash(rm:*)` denied, none is allowed; a prefix allow rule for the subcommand never covers
 * one (it asks and names the option). Everyday forms of the same subcommands stay allowed by the prefix rule.
 */
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import { base, decide, makeProject, shellQuote } from "./PolicyHarness.js"

const project = makeProject("armature-git-code-options-")
afterAll(project.remove)

/** [subcommand, long option, shortest prefix git 2.39 takes as it, short letter, operands after]. */
const longOptions: ReadonlyArray<readonly [string, string, number, string | undefined, string]> = [
  ["ls-remote", "upload-pack", 1, undefined, "."],
  ["ls-remote", "exec", 1, undefined, "origin"],
  ["fetch", "upload-pack", 3, undefined, "origin"],
  ["pull", "upload-pack", 3, undefined, "origin main"],
  ["clone", "upload-pack", 1, "u", "a b"],
  ["push", "receive-pack", 3, undefined, "origin"],
  ["push", "exec", 1, undefined, "origin"],
  ["send-pack", "receive-pack", 3, undefined, "."],
  ["fetch-pack", "upload-pack", 11, undefined, "."],
  ["archive", "exec", 4, undefined, "--remote=x HEAD"],
  ["grep", "open-files-in-pager", 2, "O", "foo"],
  ["rebase", "exec", 2, "x", "HEAD~1"],
  ["difftool", "extcmd", 2, "x", "HEAD"],
  ["instaweb", "httpd", 1, "d", "--start"],
  ["daemon", "access-hook", 11, undefined, "."],
  ["filter-branch", "setup", 5, undefined, "HEAD"],
  ["filter-branch", "tree-filter", 11, undefined, "HEAD"],
  ["send-email", "sendmail-cmd", 5, undefined, "a.patch"]
]

const payload = FastCheck.constantFrom("rm -rf build", "rm x")

/** One code option of one subcommand, spelled one of the ways git reads it. */
const codeOption = FastCheck.tuple(
  FastCheck.constantFrom(...longOptions),
  FastCheck.nat(),
  FastCheck.constantFrom("eq", "next", "short", "cluster"),
  payload,
  FastCheck.constantFrom("", "-C . ", "--no-pager ")
).map(([[subcommand, long, shortest, letter, operands], cut, spelling, code, global]) => {
  const name = long.slice(0, shortest + (cut % (long.length - shortest + 1)))
  const value = shellQuote(code)
  const option =
    letter !== undefined && spelling === "short"
      ? `-${letter}${value}`
      : letter !== undefined && spelling === "cluster" && letter !== "O"
        ? `-q${letter} ${value}`
        : spelling === "next" && letter !== "O"
          ? `--${name} ${value}`
          : `--${name}=${value}`
  return { subcommand, line: `git ${global}${subcommand} ${option} ${operands}` }
})

/** Operand words that run a command, and configuration or hooks given to `clone`. */
const runWords = FastCheck.tuple(
  payload,
  FastCheck.constantFrom(
    (c: string) => ["bisect", `git bisect run ${c}`],
    (c: string) => ["submodule", `git submodule foreach ${shellQuote(c)}`],
    (c: string) => ["submodule", `git submodule --quiet foreach --recursive ${shellQuote(c)}`],
    (c: string) => ["clone", `git clone -c core.fsmonitor=${shellQuote(c)} a b`],
    (c: string) => ["clone", `git clone --conf=alias.x=${shellQuote(`!${c}`)} a b`],
    (_: string) => ["clone", "git clone --template=tpl a b"],
    (_: string) => ["clone", "git clone --templ tpl a b"]
  )
).map(([code, make]) => {
  const [subcommand, line] = make(code)
  return { subcommand, line }
})

const cases = FastCheck.oneof(codeOption, runWords)

layer(base)("git options that run code", (it) => {
  const runs = { fastCheck: { numRuns: 80 } }
  it.effect.prop(
    "under a tool-wide allow with rm denied, no spelling is allowed",
    [cases],
    ([{ line }]) =>
      Effect.gen(function* () {
        const decision = yield* decide(project, {
          allow: ["Bash"],
          deny: ["Bash(rm:*)"],
          tool: "Bash",
          input: { command: line }
        })
        expect({ line, allowed: decision.behavior === "allow" }).toEqual({ line, allowed: false })
      }),
    runs
  )
  it.effect.prop(
    "a prefix allow rule for the subcommand never covers one",
    [cases],
    ([{ subcommand, line }]) =>
      Effect.gen(function* () {
        const decision = yield* decide(project, {
          allow: [
            `Bash(git ${subcommand}:*)`,
            `Bash(git -C . ${subcommand}:*)`,
            `Bash(git --no-pager ${subcommand}:*)`
          ],
          tool: "Bash",
          input: { command: line }
        })
        expect({ line, behavior: decision.behavior }).toEqual({ line, behavior: "ask" })
      }),
    runs
  )
  it.effect("everyday forms of the same subcommands stay covered by their prefix rule", () =>
    Effect.gen(function* () {
      for (const line of [
        "git fetch --all --prune",
        "git fetch origin main",
        "git pull --rebase origin main",
        "git push -u origin feature",
        "git push --force-with-lease",
        "git grep -n foo",
        "git grep -e foo -- src",
        "git rebase -i HEAD~3",
        "git rebase --continue",
        "git ls-remote --tags origin",
        "git clone https://example.com/r.git r",
        "git clone -b main --depth 1 https://example.com/r.git",
        "git clone -c http.sslVerify=true https://example.com/r.git",
        "git difftool --tool=vimdiff HEAD",
        "git bisect start"
      ]) {
        const subcommand = line.split(" ")[1]
        const decision = yield* decide(project, {
          allow: [`Bash(git ${subcommand}:*)`],
          tool: "Bash",
          input: { command: line }
        })
        expect({ line, behavior: decision.behavior }).toEqual({ line, behavior: "allow" })
      }
    })
  )
})
