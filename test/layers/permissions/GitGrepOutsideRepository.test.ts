/**
 * `git grep` outside a git repository stops with "not a git repository" before reading anything (unless
 * `grep.fallbackToNoIndex` is set, or `--no-index` is given): a Read rule covering files of such a directory does not
 * make a read-only `git grep` ask. Its twins do: `--no-index` (any abbreviation), the fallback configured, and the
 * same directory once it is a repository storing the protected file.
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import { afterAll, describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { base, bashOutcome, makeProject } from "./PolicyHarness.js"

const outside = makeProject("armature-git-grep-outside-")
const inside = makeProject("armature-git-grep-inside-")
afterAll(() => {
  outside.remove()
  inside.remove()
})
for (const project of [outside, inside]) {
  // The harness makes a `.git/` holding only a config file, which git does not take for a repository.
  Fs.rmSync(`${project.proj}/.git`, { recursive: true, force: true })
  Fs.mkdirSync(`${project.proj}/secrets`)
  Fs.writeFileSync(`${project.proj}/secrets/key`, "TODO PRIVATE\n")
}
const git = (...args: ReadonlyArray<string>) =>
  ChildProcess.execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
    cwd: inside.proj,
    stdio: "ignore"
  })
git("init", "-q")
git("add", "-A")
git("commit", "-q", "-m", "secrets committed")

const prefix = { mode: "default" as const, allow: ["Bash(git grep:*)"], ask: ["Read(./secrets/**)"] }
const toolWide = { mode: "default" as const, allow: ["Bash"], deny: ["Read(./secrets/**)"] }

/** Runs `body` with git configured (through the environment) to fall back to `--no-index` outside a repository. */
const withFallback = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const saved = { ...process.env }
      process.env.GIT_CONFIG_COUNT = "1"
      process.env.GIT_CONFIG_KEY_0 = "grep.fallbackToNoIndex"
      process.env.GIT_CONFIG_VALUE_0 = "true"
      return saved
    }),
    () => body,
    (saved) =>
      Effect.sync(() => {
        for (const key of ["GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0"]) {
          if (saved[key] === undefined) delete process.env[key]
          else process.env[key] = saved[key]
        }
      })
  )

describe("git grep where no repository is", () => {
  layer(base)((it) => {
    it.effect("reads nothing outside a repository, so the Read rule does not ask", () =>
      Effect.gen(function* () {
        for (const line of ["git grep -n TODO", "git grep -n TODO -- secrets", "git grep -c PRIVATE secrets/key"]) {
          expect(yield* bashOutcome(outside, prefix, line)).toMatchObject({ behavior: "allow" })
          expect(yield* bashOutcome(outside, toolWide, line)).toMatchObject({ behavior: "allow" })
        }
      })
    )

    it.effect("with --no-index, a configured fallback, or a repository storing the file, it is asked", () =>
      Effect.gen(function* () {
        for (const line of ["git grep --no-index -n TODO", "git grep --no-i TODO secrets", "git grep --untracked TODO"])
          expect(yield* bashOutcome(outside, prefix, line)).not.toMatchObject({ behavior: "allow" })
        expect(yield* withFallback(bashOutcome(outside, prefix, "git grep -n TODO"))).not.toMatchObject({
          behavior: "allow"
        })
        expect(yield* bashOutcome(inside, prefix, "git grep -n TODO")).not.toMatchObject({ behavior: "allow" })
        expect(yield* bashOutcome(inside, toolWide, "git grep -n TODO")).not.toMatchObject({ behavior: "allow" })
      })
    )

    it.effect("a line that may make a repository first is judged as reading the directory", () =>
      Effect.gen(function* () {
        for (const line of [
          "git init -q && git add -A && git grep TODO",
          "git init -q; git grep TODO",
          "cp -r ../../proj-repo .git; git grep TODO"
        ])
          expect(yield* bashOutcome(outside, toolWide, line)).not.toMatchObject({ behavior: "allow" })
      })
    )
  })
})
