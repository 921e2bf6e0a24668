/**
 * Read rules protect contents (issue 29): names and metadata are free, git's content commands count only what git
 * stores, rg skips hidden and ignored files, bash globs never match a leading dot; and the built-in secret
 * protection. Decided in a real git repository with a gitignored, never-committed `.env` and `secrets/`.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it, layer } from "@effect/vitest"
import { Effect, Either, FastCheck } from "effect"
import * as SecretFiles from "../../../src/domain/SecretFiles.js"
import * as Settings from "../../../src/domain/Settings.js"
import { mayOverlap, ruleCoverage, wordSegments } from "../../../src/domain/shell/PathGlob.js"
import { bashRequest, decideWith } from "../../fixtures/BashDecision.js"
import { base } from "./PolicyHarness.js"

const root = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-content-names-")))
const project = Path.join(root, "proj")
const home = Path.join(root, "home")
afterAll(() => Fs.rmSync(root, { recursive: true, force: true }))

const write = (file: string, text = "x\n") => {
  Fs.mkdirSync(Path.dirname(Path.join(project, file)), { recursive: true })
  Fs.writeFileSync(Path.join(project, file), text)
}
const git = (...args: Array<string>) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
    cwd: project,
    stdio: "ignore"
  })
Fs.mkdirSync(home, { recursive: true })
Fs.mkdirSync(project, { recursive: true })
git("init", "-q")
write(".gitignore", ".env\n.env.*\nsecrets/\n")
write("README.md", "readme\n")
write("notes.md", "notes\n")
write("src/a.js", "// TODO\n")
git("add", ".")
git("commit", "-q", "-m", "first")
write(".env", "KEY=1\n")
write(".env.md", "KEY=2\n")
write("secrets/api.key", "PRIVATE\n")

const s1 = { deny: ["Read(./.env)", "Read(./.env.*)", "Read(./secrets/**)"] }
const decide = (command: string, rules: { readonly deny?: ReadonlyArray<string> } = s1) =>
  Effect.map(
    decideWith({ project, home }, rules, bashRequest(command, project, "default")),
    (decision) => decision.behavior
  )

layer(base)("Read rules protect contents, not names", (it) => {
  const cases: ReadonlyArray<readonly [string, "allow" | "ask" | "deny"]> = [
    // names and metadata
    ["ls -la secrets/", "allow"],
    ["ls .env*", "allow"],
    ["stat .env", "allow"],
    ["[ -f .env ] && echo yes", "allow"],
    ["if [[ -e .env.md ]]; then echo y; fi", "allow"],
    ["find . -name '.env*'", "allow"],
    ["du -sh secrets", "allow"],
    ["git status --ignored", "allow"],
    ["git log --stat", "allow"],
    ["git diff --name-only HEAD", "allow"],
    // contents
    ["cat .env", "deny"],
    ["wc -l .env", "deny"],
    ["cat secrets/api.key", "deny"],
    // git prints only what it stores: .env and secrets/ were never committed
    ["git diff", "allow"],
    ["git show HEAD", "allow"],
    ["git log -p", "allow"],
    ["git grep KEY", "allow"],
    ["git grep KEY -- ':(icase).ENV'", "allow"],
    ["git grep --untracked KEY", "ask"],
    ["git diff --no-index .env README.md", "deny"],
    // rg skips hidden and gitignored files
    ["rg KEY", "allow"],
    ["rg PRIVATE src", "allow"],
    ["rg -u PRIVATE", "ask"],
    ["rg -uu KEY", "ask"],
    ["grep -r KEY .", "ask"],
    ["grep -rn TODO src", "allow"],
    // bash globs: * never matches a leading dot unless dotglob is on
    ["cat *.md", "allow"],
    ["wc -l *.md", "allow"],
    ["shopt -s dotglob; cat *.md", "deny"],
    // everyday commands from the corpus (issue 29): tables that were missing
    ["git check-ignore -v .env", "allow"],
    ["git branch --merged", "allow"],
    ["git config user.email", "allow"],
    ["file .env", "allow"],
    ["less -F README.md", "allow"],
    ["less .env", "deny"],
    ["awk '{print $1}' README.md", "allow"],
    ["awk '{print $1}' .env", "deny"],
    ["fd md", "allow"],
    ["xxd README.md | head", "allow"],
    ["join README.md notes.md", "allow"]
  ]
  for (const [command, expected] of cases) {
    it.effect(`${command} → ${expected}`, () =>
      Effect.map(decide(command), (behavior) => expect({ command, behavior }).toEqual({ command, behavior: expected }))
    )
  }

  it.effect("a committed secret makes git's content commands ask, whatever the pathspec", () =>
    Effect.gen(function* () {
      write("keys/server.pem", "PRIVATE\n")
      git("add", "keys/server.pem")
      git("commit", "-q", "-m", "key")
      const rules = { deny: ["Read(**/*.pem)"] }
      for (const command of [
        "git grep PRIVATE -- '*.pem'",
        "git grep PRIVATE -- ':(glob)**/*.pem'",
        "git grep PRIVATE -- ':!README.md'",
        "git log -p -- 'k*'",
        "git show HEAD"
      ]) {
        expect({ command, behavior: yield* decide(command, rules) }).not.toEqual({ command, behavior: "allow" })
      }
      expect(yield* decide("git log --oneline", rules)).toBe("allow")
      // Under a tool-wide allow: object names from the input, and the `:/` magic (the repository's top), which
      // must not be read as the absolute path /keys.
      const wide = { allow: ["Bash"], deny: ["Read(**/*.pem)"] }
      for (const command of [
        "git cat-file --batch < objs",
        "echo HEAD:keys/server.pem | git cat-file --batch",
        "git cat-file --batch-command < objs",
        "git cat-file --batch-all-objects --batch",
        "git grep PRIVATE -- ':/keys'",
        "git log -p -- ':/k*'"
      ]) {
        const behavior = (yield* decideWith({ project, home }, wide, bashRequest(command, project, "default"))).behavior
        expect({ command, behavior }).not.toEqual({ command, behavior: "allow" })
      }
      const names = yield* decideWith(
        { project, home },
        wide,
        bashRequest("git cat-file --batch-check < objs", project, "default")
      )
      expect(names.behavior).toBe("allow")
      git("rm", "-q", "--cached", "keys/server.pem")
      git("commit", "-q", "-m", "drop")
      // still in the history: git show HEAD~1 can print it
      expect(yield* decide("git grep PRIVATE HEAD~1", rules)).not.toBe("allow")
    })
  )
})

layer(base)("globs match the tree as it is, unless the line writes first", (it) => {
  const rules = { deny: ["Read(**/id_rsa*)"] }
  it.effect("a glob that matches no protected name now reads none; after a write on the line it may", () =>
    Effect.gen(function* () {
      expect(yield* decide("wc -l *.md", rules)).toBe("allow")
      expect(yield* decide("cat src/*.js", rules)).toBe("allow")
      expect(yield* decide("touch x.md; wc -l *.md", rules)).not.toBe("allow")
    })
  )
})

layer(base)("git's configuration files are read by git config", (it) => {
  it.effect("git config -l is denied under a Read rule on ~/.gitconfig, allowed without one", () =>
    Effect.gen(function* () {
      Fs.writeFileSync(Path.join(home, ".gitconfig"), "[user]\n\tname = t\n")
      const rules = { deny: ["Read(~/.gitconfig)"] }
      expect(yield* decide("git config -l", rules)).toBe("deny")
      expect(yield* decide("git config --global --get user.name", rules)).toBe("deny")
      expect(yield* decide("git config --local -l", rules)).toBe("allow")
      expect(yield* decide("git config -l", { deny: [] })).toBe("allow")
      expect(yield* decide("git config --blob HEAD:secrets/api.key -l")).toBe("deny")
      // `git var -l` prints every configuration variable after git's own (round 3); `git var GIT_EDITOR` does not
      expect(yield* decide("git var -l", rules)).toBe("deny")
      expect(yield* decide("git var GIT_EDITOR", rules)).toBe("allow")
    })
  )
})

describe("bash globs and leading dots", () => {
  const name = FastCheck.stringMatching(/^[a-z]{1,6}(\.[a-z]{1,3})?$/)
  it.prop(
    "a word pattern starting with * or ? never overlaps a rule that only matches dot names",
    [name, name, FastCheck.constantFrom("*", "?", "*.", "??")],
    ([ruleName, suffix, start]) => {
      const word = wordSegments([{ _tag: "Text", text: `/p/${start}${suffix}`, quoted: false }])
      const rule = ruleCoverage("/p", `.${ruleName}`, true)
      expect(mayOverlap(word, rule, { ignoreCase: true, below: false })).toBe(false)
      // with dotglob the same word may match
      const dotted = wordSegments([{ _tag: "Text", text: `/p/*`, quoted: false }], "", true)
      expect(mayOverlap(dotted, rule, { ignoreCase: true, below: false })).toBe(true)
    }
  )
})

describe("built-in secret protection", () => {
  const merged = (permissions: Record<string, unknown>) =>
    Either.getOrThrow(Settings.merge([{ name: "s.json", root: "/p", base: "/p", settings: { permissions } }]))
  it("is on by default: Read ask rules for well-known secret files, named by their source (issue 29 item 8)", () => {
    for (const ask of [merged({}).permissions.ask, merged({ protectSecrets: true }).permissions.ask]) {
      expect(ask.map((r) => r.text)).toEqual(expect.arrayContaining(["Read(**/.env)", "Read(**/*.pem)"]))
      expect(ask.every((r) => r.source === SecretFiles.source && r.behavior === "ask")).toBe(true)
    }
  })
  it("is off with protectSecrets: false (the last file that sets it wins), and drops what an allow rule names", () => {
    expect(merged({ protectSecrets: false }).permissions.ask).toEqual([])
    const later = Either.getOrThrow(
      Settings.merge([
        { name: "user.json", root: "/p", base: "/p", settings: { permissions: { protectSecrets: false } } },
        { name: "project.json", root: "/p", base: "/p", settings: { permissions: {} } }
      ])
    )
    expect(later.permissions.ask).toEqual([])
    expect(later.settings.permissions).toMatchObject({ protectSecrets: false })
    const texts = merged({ allow: ["Read(./.env)"] }).permissions.ask.map((r) => r.text)
    expect(texts).not.toContain("Read(**/.env)")
    expect(texts).toContain("Read(**/.env.*)")
    expect(merged({ allow: ["Read"] }).permissions.ask).toEqual([])
  })
})
