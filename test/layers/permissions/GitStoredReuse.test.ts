/**
 * What git stores is asked of git once and reused while git's inputs are unchanged (GitStamps): every change that
 * can change the answer — a path staged, a commit, a branch deleted, a repository created or removed around a
 * directory — must be seen by the next decision. Decided in a real repository with a gitignored `.env`.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as GitStored from "../../../src/layers/permissions/GitStored.js"
import { bashRequest, decideWith } from "../../fixtures/BashDecision.js"
import { base } from "./PolicyHarness.js"

const root = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-git-reuse-")))
const project = Path.join(root, "proj")
const home = Path.join(root, "home")
afterAll(() => Fs.rmSync(root, { recursive: true, force: true }))

const write = (file: string, text = "x\n") => {
  Fs.mkdirSync(Path.dirname(Path.join(project, file)), { recursive: true })
  Fs.writeFileSync(Path.join(project, file), text)
}
const git = (cwd: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd, stdio: "ignore" })
Fs.mkdirSync(home, { recursive: true })
Fs.mkdirSync(project, { recursive: true })
git(project, "init", "-q", "-b", "main")
write(".gitignore", ".env\n")
write("README.md", "readme\n")
git(project, "add", ".")
git(project, "commit", "-q", "-m", "first")
write(".env", "KEY=1\n")

const decide = (command: string) =>
  Effect.map(
    decideWith({ project, home }, { deny: ["Read(./.env)"] }, bashRequest(command, project, "default")),
    (decision) => decision.behavior
  )

layer(base)("git's answers reused only while git's inputs are unchanged", (it) => {
  it.effect("staging, committing and dropping a branch are each seen by the next decision", () =>
    Effect.gen(function* () {
      expect(yield* decide("git diff --cached")).toBe("allow")
      expect(yield* decide("git diff --cached")).toBe("allow")
      git(project, "add", "-f", ".env")
      expect(yield* decide("git diff --cached")).not.toBe("allow")
      git(project, "reset", "-q", ".env")
      expect(yield* decide("git diff --cached")).toBe("allow")
      // committed on a side branch, then the branch deleted and its reflog expired: printable while it is reachable
      git(project, "switch", "-q", "-c", "side")
      git(project, "add", "-f", ".env")
      git(project, "commit", "-q", "-m", "secret")
      git(project, "switch", "-q", "main")
      expect(yield* decide("git log -p")).not.toBe("allow")
      git(project, "branch", "-q", "-D", "side")
      git(project, "reflog", "expire", "--expire=now", "--all")
      expect(yield* decide("git log -p")).toBe("allow")
    })
  )
})

describe("the repository holding a directory, reused only while discovery's inputs are unchanged", () => {
  it("a repository created or removed around a directory changes which one holds it", () => {
    const sub = Path.join(project, "nested")
    Fs.mkdirSync(sub, { recursive: true })
    expect(GitStored.topLevel(sub)).toBe(project)
    git(sub, "init", "-q")
    expect(GitStored.topLevel(sub)).toBe(sub)
    Fs.rmSync(Path.join(sub, ".git"), { recursive: true, force: true })
    expect(GitStored.topLevel(sub)).toBe(project)
    Fs.renameSync(Path.join(project, ".git"), Path.join(project, "git-moved"))
    try {
      expect(GitStored.topLevel(sub)).toBe(undefined)
    } finally {
      Fs.renameSync(Path.join(project, "git-moved"), Path.join(project, ".git"))
    }
    expect(GitStored.topLevel(sub)).toBe(project)
  })
})
