/**
 * Issue 28, class 5: git writes its own configuration without the line naming the file. `git config NAME VALUE`,
 * `git remote add`, `git branch -u`, `git submodule`, `git worktree add` write `.git/config` — a protected path —
 * so they ask in every mode, bypassPermissions included; `git config --global` writes `~/.gitconfig`, checked
 * against Edit rules. Reading forms stay free.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { PermissionMode } from "../../../src/domain/Permission.js"
import { bashRequest, decideWith } from "../../fixtures/BashDecision.js"
import { base } from "./PolicyHarness.js"

const root = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-git-config-")))
const project = Path.join(root, "proj")
const home = Path.join(root, "home")
afterAll(() => Fs.rmSync(root, { recursive: true, force: true }))
Fs.mkdirSync(home, { recursive: true })
Fs.mkdirSync(Path.join(project, "src"), { recursive: true })
execFileSync("git", ["init", "-q"], { cwd: project, stdio: "ignore" })

const decide = (command: string, mode: PermissionMode, rules: { readonly deny?: ReadonlyArray<string> } = {}) =>
  // The mode is the settings' default mode (the request's own mode field is not what the harness decides with).
  Effect.map(decideWith({ project, home }, { ...rules, mode }, bashRequest(command, project, mode)), (d) => d.behavior)

layer(base)("git writing its configuration file", (it) => {
  const writes = [
    "git config core.hooksPath .",
    "git config --local core.fsmonitor ./x",
    "git config --unset user.name",
    "git -C src config core.pager less",
    "git remote add origin ext::sh",
    "git remote set-url origin x",
    "git branch -u origin/main",
    "git submodule add ./x",
    "git worktree add ../w"
  ]
  for (const command of writes) {
    for (const mode of ["bypassPermissions", "acceptEdits", "default"] as const) {
      it.effect(`${command} asks in ${mode}`, () =>
        Effect.map(decide(command, mode), (behavior) =>
          expect({ command, behavior }).toEqual({ command, behavior: "ask" })
        )
      )
    }
  }
  it.effect("reading forms stay free, and --global is checked against Edit rules on ~/.gitconfig", () =>
    Effect.gen(function* () {
      expect(yield* decide("git config user.name", "default")).toBe("allow")
      expect(yield* decide("git config -l", "default")).toBe("allow")
      expect(yield* decide("git remote -v", "default")).toBe("allow")
      expect(
        yield* decide("git config --global core.pager cat", "bypassPermissions", { deny: ["Edit(~/.gitconfig)"] })
      ).toBe("deny")
    })
  )
})
