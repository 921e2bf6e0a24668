/**
 * Property (issue 28 class 5): paths are resolved against the tree as it is before the line runs, so a write made
 * after a command that may replace what it names (`mv sub/hk h && cp evil h/pre-commit`, with `sub/hk` a link into
 * `.git/hooks`) is never allowed without approval in acceptEdits or bypassPermissions mode, whatever the changer
 * (a move or copy of a link or a directory, a link maker, an extractor, a git command rewriting the tree) and
 * whatever writes later (a copy, a redirection, `touch`, `tee`). A change whose effect is known (`mkdir`, a move or
 * copy of regular files) keeps its allow. Reads too: under a tool-wide allow with a Read deny rule, reading under
 * what an earlier command may have replaced (`cp -r tree h && cat h/hooks/x`) may read what the rule protects, so
 * it is asked; reading a regular file copied or moved earlier is not.
 */
import * as Fs from "node:fs"
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import { base, bashOutcome, makeProject } from "./PolicyHarness.js"

const project = makeProject("armature-tree-changes-prop-")
afterAll(project.remove)
Fs.mkdirSync(`${project.proj}/.git/hooks`, { recursive: true })
Fs.mkdirSync(`${project.proj}/sub`)
// A relative link that points into .git/hooks once it is moved to the project's top (`h` → `.git/hooks`).
Fs.symlinkSync(".git/hooks", `${project.proj}/sub/hk`)
// A directory holding a link to .git/hooks: moved or copied (links kept), `h/hooks/…` writes the hooks.
Fs.mkdirSync(`${project.proj}/tree`)
Fs.symlinkSync(`${project.proj}/.git/hooks`, `${project.proj}/tree/hooks`)
Fs.writeFileSync(`${project.proj}/evil`, "#!/bin/sh\n")
Fs.writeFileSync(`${project.proj}/a.txt`, "a\n")

/** A command that may leave `h` (or what is under it) a link into .git/hooks. */
const changer = FastCheck.constantFrom(
  "mv sub/hk h",
  "mv -f sub/hk h",
  "mv tree h",
  "mv -t h tree",
  "cp -a sub/hk h",
  "cp -P sub/hk h",
  "cp -r tree h",
  "cp -R tree h",
  "cp -a tree h",
  "cp --archive tree h",
  "rsync -a tree/ h/",
  "ln -s .git/hooks h",
  "ln -sfn $PWD/.git/hooks h",
  "ln -s ../.git/hooks sub/h2 && mv sub/h2 h",
  "link .git/hooks/x h",
  "tar xf a.tar",
  "tar -xzf a.tgz",
  "unzip -o a.zip",
  "cpio -id < a.cpio",
  "git checkout other",
  "git -c core.x=y checkout other",
  "git -C . checkout other",
  "git --work-tree . switch other",
  "git checkout -b new other",
  "git switch other",
  "git restore .",
  "git stash pop",
  "git reset --hard other"
)

/** A later write somewhere under `h` (the name is filled in). */
const write = FastCheck.constantFrom(
  (p: string) => `cp evil ${p}`,
  (p: string) => `echo x > ${p}`,
  (p: string) => `printf x >> ${p}`,
  (p: string) => `touch ${p}`,
  (p: string) => `tee ${p} < evil`,
  (p: string) => `cat evil > ${p}`,
  (p: string) => `install -m 755 evil ${p}`
)
const target = FastCheck.constantFrom("h/pre-commit", "h/post-checkout", "h/hooks/pre-commit", "./h/pre-push", "h")
const separator = FastCheck.constantFrom(" && ", "; ", " || ", "\n")
const mode = FastCheck.constantFrom("acceptEdits" as const, "bypassPermissions" as const)

/**
 * Known effects: directories made, regular files moved or copied. acceptEdits asks about a redirection on a line
 * that is not read-only anyway, so the lines with one are checked in bypassPermissions mode only.
 */
const safe = FastCheck.constantFrom<readonly [string, "acceptEdits" | "bypassPermissions"]>(
  ["mkdir -p build && cp a.txt build/b.txt", "acceptEdits"],
  ["mkdir out; echo x > out/log.txt", "bypassPermissions"],
  ["mv a.txt b.txt && cp b.txt c.txt && mv b.txt a.txt", "acceptEdits"],
  ["cp a.txt b.txt && echo more >> b.txt", "bypassPermissions"],
  ["cp a.txt d.txt; touch d.txt", "acceptEdits"],
  ["mkdir -p x/y && touch x/y/z", "acceptEdits"]
)

layer(base)("writes after a line changes the tree (generated)", (it) => {
  it.effect.prop(
    "a write under what an earlier command may have replaced is never allowed without approval",
    [changer, write, target, separator, mode],
    ([change, spell, path, sep, m]) =>
      Effect.gen(function* () {
        const line = `${change}${sep}${spell(path)}`
        expect(yield* bashOutcome(project, { mode: m }, line)).not.toMatchObject({ behavior: "allow" })
      }),
    { fastCheck: { numRuns: 250 } }
  )

  it.effect.prop(
    "a change whose effect is known keeps its allow",
    [safe],
    ([[line, m]]) =>
      Effect.gen(function* () {
        for (const each of m === "acceptEdits" ? (["acceptEdits", "bypassPermissions"] as const) : ([m] as const))
          expect(yield* bashOutcome(project, { mode: each }, line)).toMatchObject({ behavior: "allow" })
      }),
    { fastCheck: { numRuns: 20 } }
  )
})

/** A later read of contents somewhere under `h` (the name is filled in). */
const read = FastCheck.constantFrom(
  (p: string) => `cat ${p}`,
  (p: string) => `head -5 ${p}`,
  (p: string) => `grep -n x ${p}`,
  (p: string) => `wc -c < ${p}`,
  (p: string) => `sed -n 1p ${p}`,
  (p: string) => `tail --lines=3 ${p}`
)
const readTarget = FastCheck.constantFrom("h/pre-commit", "h/hooks/pre-commit", "./h/pre-push")
/** What the reads must get past: a tool-wide allow and a Read deny rule on the hooks. */
const guarded = { mode: "default" as const, allow: ["Bash"], deny: ["Read(./.git/hooks/**)"] }

layer(base)("reads after a line changes the tree (generated)", (it) => {
  it.effect.prop(
    "a read under what an earlier command may have replaced is never allowed past a Read deny rule",
    [changer, read, readTarget, separator],
    ([change, spell, path, sep]) =>
      Effect.gen(function* () {
        const line = `${change}${sep}${spell(path)}`
        expect(yield* bashOutcome(project, guarded, line)).not.toMatchObject({ behavior: "allow" })
      }),
    { fastCheck: { numRuns: 200 } }
  )

  it.effect.prop(
    "a read after a change whose effect is known keeps its allow",
    [
      FastCheck.constantFrom(
        "cp a.txt b.txt && cat b.txt",
        "mkdir -p build && cp a.txt build/b.txt && head build/b.txt",
        "mkdir out; cat a.txt",
        "cp -r tree h && ls h",
        "touch n.txt && wc -l a.txt n.txt",
        "git checkout -b topic && cat a.txt",
        "git switch -c topic && cat a.txt",
        "git stash list && cat a.txt"
      )
    ],
    ([line]) =>
      Effect.gen(function* () {
        expect(yield* bashOutcome(project, guarded, line)).toMatchObject({ behavior: "allow" })
      }),
    { fastCheck: { numRuns: 25 } }
  )
})
