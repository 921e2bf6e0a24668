/**
 * Property: a command that walks a directory tree through the symbolic links inside it (`cp -rL`, `rsync -L`,
 * `tar -h`, `zip -r`, `grep -R`, `rg -L`, `find -L`, `du -L`, `diff -r`, …) reads wherever those links point, which
 * only the file system knows at run time. Whatever the spelling, such a call on a directory is never allowed by
 * acceptEdits mode, by being read-only, by a prefix rule, or past a Read deny rule under a tool-wide allow; the same
 * commands without link following (or on a regular file) keep their allow — also under a Read deny rule covering
 * what the links lead to, since `cp -r`/`cp -a` copy a link as a link and `grep -r`/`rg` skip the links they meet.
 */
import * as Fs from "node:fs"
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import type { PermissionMode } from "../../../src/domain/Permission.js"
import { base, bashOutcome, decide, makeProject } from "./PolicyHarness.js"

const project = makeProject("armature-link-following-prop-")
afterAll(project.remove)
// `tree/` holds a link to a directory outside the project with a secret in it.
Fs.mkdirSync(`${project.root}/outside`)
Fs.writeFileSync(`${project.root}/outside/id_rsa`, "secret")
Fs.mkdirSync(`${project.proj}/tree`)
Fs.symlinkSync(`${project.root}/outside`, `${project.proj}/tree/out`)

/** Commands that follow links inside `tree` (the operand is filled in). */
const following = FastCheck.constantFrom(
  (d: string) => `cp -rL ${d} copy`,
  (d: string) => `cp -RL ${d} copy`,
  (d: string) => `cp -aL ${d} copy`,
  (d: string) => `cp -r --dereference ${d} copy`,
  (d: string) => `cp --deref -r ${d} copy`,
  (d: string) => `cp -L -r ${d} copy`,
  (d: string) => `cp -r -L -t copy ${d}`,
  (d: string) => `rsync -aL ${d} copy`,
  (d: string) => `rsync -r --copy-links ${d} copy`,
  (d: string) => `rsync -ak ${d}/ copy/`,
  (d: string) => `rsync -a --copy-unsafe-links ${d} copy`,
  (d: string) => `tar -chf o.tar ${d}`,
  (d: string) => `tar chf o.tar ${d}`,
  (d: string) => `tar --dereference -cf o.tar ${d}`,
  (d: string) => `zip -r o.zip ${d}`,
  (d: string) => `grep -R secret ${d}`,
  (d: string) => `grep --dereference-recursive secret ${d}`,
  (d: string) => `grep -Rn secret ${d}`,
  (d: string) => `rg -L secret ${d}`,
  (d: string) => `rg --follow secret ${d}`,
  (d: string) => `find -L ${d} -type f`,
  (d: string) => `find ${d} -follow -type f`,
  (d: string) => `du -L ${d}`,
  (d: string) => `du --dereference -s ${d}`,
  (d: string) => `diff -r ${d} src`,
  (d: string) => `ls -RL ${d}`,
  (d: string) => `cd ${d} && grep -R secret`,
  (d: string) => `cd ${d} && rg -L secret`
)

const operand = FastCheck.constantFrom("tree", "./tree", "tree/", "t*e", "tr{e,}e", "$PWD/tree")

/** The settings a bypass must get past. */
const setting = FastCheck.constantFrom<{
  readonly mode: PermissionMode
  readonly allow?: ReadonlyArray<string>
  readonly deny?: ReadonlyArray<string>
}>(
  { mode: "acceptEdits" },
  { mode: "default" },
  {
    mode: "default",
    allow: ["Bash(cp:*)", "Bash(rsync:*)", "Bash(tar:*)", "Bash(zip:*)", "Bash(grep:*)", "Bash(rg:*)", "Bash(cd:*)"]
  },
  { mode: "default", allow: ["Bash(find:*)", "Bash(du:*)", "Bash(diff:*)", "Bash(ls:*)"] },
  { mode: "acceptEdits", allow: ["Bash"], deny: ["Read(//**/id_rsa)"] }
)

/** The same work without link following, or on a regular file: allowed in acceptEdits mode. */
const safe = FastCheck.constantFrom(
  "cp -r tree copy",
  "cp -a tree copy",
  "cp -rP tree copy",
  "cp -L src/a.ts copy.ts",
  "grep -r secret tree",
  "grep -rn secret src",
  "find tree -type f",
  "du -s tree",
  "ls -R tree"
)

/** Walks that keep the links inside the tree as links (or skip them): what the links lead to is not read. */
const keeping = FastCheck.constantFrom(
  (d: string) => `cp -r ${d} copy`,
  (d: string) => `cp -R ${d} copy`,
  (d: string) => `cp -a ${d} copy`,
  (d: string) => `cp --recursive ${d} copy`,
  (d: string) => `cp -rP ${d} copy`,
  (d: string) => `cp -r -t copy ${d}`,
  (d: string) => `grep -r secret ${d}`,
  (d: string) => `grep -rn secret ${d}`,
  (d: string) => `grep --recursive secret ${d}`,
  (d: string) => `grep -d recurse secret ${d}`,
  (d: string) => `rg secret ${d}`,
  (d: string) => `rg -uu secret ${d}`,
  (d: string) => `cd ${d} && grep -r secret`,
  (d: string) => `cd ${d} && rg secret`
)

/** The same walks made to follow the links: a letter or option that follows them. */
const followingTwin = FastCheck.constantFrom(
  (d: string) => `cp -rL ${d} copy`,
  (d: string) => `cp -a --dereference ${d} copy`,
  (d: string) => `grep -R secret ${d}`,
  (d: string) => `grep -rR secret ${d}`,
  (d: string) => `grep --dereference-rec secret ${d}`,
  (d: string) => `rg -L secret ${d}`,
  (d: string) => `rg --follow secret ${d}`,
  (d: string) => `RIPGREP_CONFIG_PATH=cfg rg secret ${d}`,
  (d: string) => `export RIPGREP_CONFIG_PATH=cfg; rg secret ${d}`,
  (d: string) => `cd ${d} && grep -R secret`
)

/**
 * Operands without a glob or a variable: a line that writes (`cp … copy`) has every path its globs could match
 * checked (BashPaths: a glob expanded after a write may match a name the write made), and `rg` is trusted to keep
 * links only on a read-only line (nothing on it may set `RIPGREP_CONFIG_PATH`), which a variable is not.
 */
const plainOperand = FastCheck.constantFrom("tree", "./tree", "tree/", "'tree'", "tree/.")

/** A tool-wide allow with a Read deny rule covering the secret the links lead to. */
const guarded = { mode: "default" as const, allow: ["Bash"], deny: ["Read(//**/id_rsa)"] }

layer(base)("link-following tree walks (generated)", (it) => {
  it.effect.prop(
    "under a Read deny rule, a walk that keeps links as links is allowed and its link-following twin is not",
    [keeping, followingTwin, plainOperand],
    ([keep, follow, d]) =>
      Effect.gen(function* () {
        expect(yield* bashOutcome(project, guarded, keep(d))).toMatchObject({ behavior: "allow" })
        expect(yield* bashOutcome(project, guarded, follow(d))).not.toMatchObject({ behavior: "allow" })
      }),
    { fastCheck: { numRuns: 60 } }
  )

  it.effect.prop(
    "a command walking a tree through its links is never allowed without approval",
    [following, operand, setting],
    ([spell, d, s]) =>
      Effect.gen(function* () {
        const line = spell(d)
        expect(yield* bashOutcome(project, s, line)).not.toMatchObject({ behavior: "allow" })
      }),
    { fastCheck: { numRuns: 250 } }
  )

  it.effect.prop(
    "the same walks without link following stay allowed in acceptEdits mode",
    [safe],
    ([line]) =>
      Effect.gen(function* () {
        const decision = yield* decide(project, { mode: "acceptEdits", tool: "Bash", input: { command: line } })
        expect({ line, behavior: decision.behavior }).toEqual({ line, behavior: "allow" })
      }),
    { fastCheck: { numRuns: 30 } }
  )
})
