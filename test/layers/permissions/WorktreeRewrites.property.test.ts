/**
 * Writes that name no file (issue 28, round 5): git commands that rewrite tracked files of the work tree (`git
 * checkout .`, `git stash pop`, `git reset --hard`, `git merge`, `git apply p.diff`, `git clean -fdx`) and deletes
 * of a whole tree (`rm -rf .`, `find . -name x -delete`) may write a path under an Edit deny rule. Under
 * bypassPermissions (and default mode) with a tool-wide allow and `Edit(./locked/**)` denied, none is allowed; a
 * pathspec that keeps clear of the rule stays allowed.
 */
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import { base, bashOutcome, makeProject } from "./PolicyHarness.js"

const project = makeProject("armature-worktree-rewrites-")
afterAll(project.remove)

const rewrites = FastCheck.constantFrom(
  "checkout .",
  "checkout main",
  "checkout -f HEAD",
  "switch main",
  "stash",
  "stash push",
  "stash pop",
  "stash apply",
  "reset --hard",
  "reset --hard HEAD~1",
  "reset --merge",
  "restore .",
  "restore --source=HEAD~1 .",
  "checkout-index -a -f",
  "read-tree -um HEAD",
  "apply p.diff",
  "am a.patch",
  "merge feature",
  "pull",
  "pull --rebase origin main",
  "cherry-pick abc123",
  "revert HEAD",
  "rebase main",
  "clean -fdx",
  "clean -fd -e keep",
  "rm -r .",
  "rm -r --cached -q ."
)

const line = FastCheck.oneof(
  FastCheck.tuple(FastCheck.constantFrom("git ", "git -C . ", "git --no-pager "), rewrites).map(
    ([git, rest]) => `${git}${rest}`
  ),
  FastCheck.constantFrom(
    "rm -rf .",
    "rm -r ./",
    "rm --recursive --force .",
    "find . -name x.ts -delete",
    "find . -type f -delete",
    "find . -name x.ts -exec rm {} +",
    "find . -name x.ts -exec rm -f {} ';'",
    "find ./ -type f -execdir truncate -s0 {} +",
    "find . -ok shred -u {} ';'"
  )
)

const mode = FastCheck.constantFrom("bypassPermissions" as const, "default" as const, "acceptEdits" as const)

layer(base)("writes that name no file", (it) => {
  it.effect.prop(
    "a rewrite of the whole work tree is never allowed under an Edit deny rule inside it",
    [line, mode],
    ([command, m]) =>
      Effect.gen(function* () {
        const outcome = yield* bashOutcome(project, { mode: m, allow: ["Bash"], deny: ["Edit(./locked/**)"] }, command)
        expect(outcome.behavior).not.toBe("allow")
      }),
    { fastCheck: { numRuns: 80 } }
  )
  it.effect("pathspecs clear of the rule stay allowed", () =>
    Effect.gen(function* () {
      for (const command of [
        "git checkout main -- src",
        "git restore src/a.ts",
        "git clean -fd src",
        "git rm -r src",
        "rm -rf build",
        "find . -name '*.ts' -exec wc -l {} +",
        "find src -name x -exec rm {} +",
        "git reset HEAD~1",
        "git stash list",
        "git add .",
        "git commit -m x"
      ]) {
        const outcome = yield* bashOutcome(
          project,
          { mode: "bypassPermissions", allow: ["Bash"], deny: ["Edit(./locked/**)"] },
          command
        )
        expect(outcome).toEqual({ line: command, mode: "bypassPermissions", behavior: "allow" })
      }
    })
  )
})
