/**
 * Issue 29, items 3, 5 and 7: `xargs` running a read-only command on the names a read-only lister prints
 * (`find … | xargs wc -l`, `git ls-files | xargs wc -l`), rg's `-g` globs narrowing what it searches, and reasons
 * that name the command that asks. Decided in a real git repository with a gitignored, never-committed `.env`,
 * `.env.md` and `secrets/`.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it, layer } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import * as NameFilter from "../../../src/domain/shell/NameFilter.js"
import { bashRequest, decideWith } from "../../fixtures/BashDecision.js"
import { base } from "./PolicyHarness.js"

const root = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-xargs-")))
const home = Path.join(root, "home")
afterAll(() => Fs.rmSync(root, { recursive: true, force: true }))
Fs.mkdirSync(home, { recursive: true })

/** A git project with ignored secrets; `tracked` are committed, `untracked` written after. */
const makeProject = (name: string, tracked: Record<string, string>, untracked: Record<string, string>) => {
  const project = Path.join(root, name)
  const write = (files: Record<string, string>) => {
    for (const [file, text] of Object.entries(files)) {
      Fs.mkdirSync(Path.dirname(Path.join(project, file)), { recursive: true })
      Fs.writeFileSync(Path.join(project, file), text)
    }
  }
  const git = (...args: Array<string>) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
      cwd: project,
      stdio: "ignore"
    })
  Fs.mkdirSync(project, { recursive: true })
  git("init", "-q")
  write({ ".gitignore": ".env\n.env.*\nsecrets/\n", ...tracked })
  git("add", ".")
  git("commit", "-q", "-m", "first")
  write(untracked)
  return project
}

const secrets = { ".env": "KEY=1\n", ".env.md": "KEY=2\n", "secrets/api.key": "PRIVATE\n" }
const plain = makeProject("plain", { "README.md": "r\n", "docs/guide.md": "g\n", "src/a.js": "// TODO\n" }, secrets)

const s1 = { deny: ["Read(./.env)", "Read(./.env.*)", "Read(./secrets/**)"] }
const decide = (command: string, project = plain, rules: { readonly deny?: ReadonlyArray<string> } = s1) =>
  decideWith({ project, home }, rules, bashRequest(command, project, "default"))

layer(base)("xargs on the names a read-only lister prints", (it) => {
  const cases: ReadonlyArray<readonly [string, "allow" | "ask" | "deny"]> = [
    ["find . -name '*.js' | xargs wc -l", "allow"],
    ["find src -name '*.js' | xargs grep -n TODO", "allow"],
    ["find docs -type f | xargs head -3", "allow"],
    ["git ls-files | xargs wc -l", "allow"],
    ["git ls-files '*.js' | xargs wc -l", "allow"],
    ["git ls-files -z | xargs -0 wc -l", "allow"],
    ["git diff --name-only | xargs wc -l", "allow"],
    ["git ls-files | grep '\\.js$' | xargs wc -l | sort -n", "allow"],
    ["find . -name '*.js' | xargs -I{} wc -l {}", "allow"],
    ["ls | xargs", "allow"],
    ["ls src/*.js | xargs -n1 basename", "allow"],
    // the lister reaches a protected file, or lists what git does not track, or is not a lister at all
    ["find . -type f | xargs cat", "ask"],
    ["find . -name '.env*' | xargs cat", "ask"],
    ["find . -name '*.md' | xargs cat", "ask"],
    ["git ls-files -o | xargs cat", "ask"],
    ["git ls-files --others --ignored --exclude-standard | xargs cat", "ask"],
    ["ls -a | xargs cat", "ask"],
    ["cat list | xargs wc -l", "ask"],
    ["find . -printf '%p\\n' | xargs cat", "ask"],
    ["git ls-files | sed s/a/b/ | xargs cat", "ask"],
    // the command xargs runs must be read-only whatever words it gets
    ["find . -name '*.js' | xargs sort", "ask"],
    ["find . -name '*.js' | xargs rm", "ask"],
    ["git ls-files | xargs -a list cat", "ask"],
    ["find . -name '*.js' | xargs sh -c 'cat \"$@\"'", "ask"],
    // rg -g: a positive glob searches only what it matches (hidden and ignored or not)
    ["rg -g '*.js' TODO", "allow"],
    ["rg --glob='src/**' TODO", "allow"],
    ["rg -g '!*.js' KEY", "allow"],
    ["rg -g '*.md' KEY", "ask"],
    ["rg -g '*.key' PRIVATE", "ask"],
    ["rg --iglob '*.KEY' PRIVATE", "ask"],
    ['rg -g "$G" KEY', "ask"]
  ]
  for (const [command, expected] of cases) {
    it.effect(`${command} → ${expected}`, () =>
      Effect.map(decide(command), (decision) =>
        expect({ command, behavior: decision.behavior }).toEqual({ command, behavior: expected })
      )
    )
  }

  it.effect("names xargs would split at blanks may be other names: unknown, so the rules apply", () =>
    Effect.gen(function* () {
      const spaced = makeProject("spaced", { "a .env": "x\n", "src/a.js": "x\n" }, secrets)
      expect((yield* decide("git ls-files | xargs wc -l", spaced)).behavior).toBe("ask")
      expect((yield* decide("git ls-files -z | xargs -0 wc -l", spaced)).behavior).toBe("allow")
      const dirs = makeProject("dirs", { "x y/b.js": "x\n" }, secrets)
      expect((yield* decide("find . -name '*.js' | xargs wc -l", dirs)).behavior).toBe("ask")
      expect((yield* decide("find . -name '*.js' -print0 | xargs -0 wc -l", dirs)).behavior).toBe("allow")
    })
  )

  it.effect("the reason names the command of the pipeline that asks", () =>
    Effect.gen(function* () {
      const decision = yield* decide("find . -name '*.js' | xargs rm -f", plain, {})
      expect(decision.behavior).toBe("ask")
      expect(decision.reason).toContain("xargs rm -f")
      expect(decision.reason).not.toContain("find")
    })
  )
})

describe("name filters", () => {
  const name = FastCheck.stringMatching(/^[a-z]{1,6}$/)
  it.prop(
    "a glob without / is matched against the base name, whatever the directories",
    [name, name, FastCheck.array(name, { maxLength: 3 })],
    ([stem, ext, dirs]) => {
      const path = `/${[...dirs, `${stem}.${ext}`].join("/")}`
      expect(NameFilter.passes([`*.${ext}`], path)).toBe(true)
      expect(NameFilter.passes([`*.${ext}x`], path)).toBe(false)
      // a dot name is matched by `*` (find's -name and rg's globs both match it)
      expect(NameFilter.passes([`*.${ext}`], `/p/.${stem}.${ext}`)).toBe(true)
    }
  )
  it.prop("a glob with / matches some tail of the path", [name, name], ([dir, file]) => {
    expect(NameFilter.passes([`${dir}/**`], `/p/${dir}/${file}`)).toBe(true)
    expect(NameFilter.passes([`${dir}x/**`], `/p/${dir}/${file}`)).toBe(false)
  })
})
