/**
 * Property: a command that walks a directory tree through the symbolic links inside it (`cp -rL`, `rsync -L`,
 * `tar -h`, `zip -r`, `grep -R`, `rg -L`, `find -L`, `du -L`, `diff -r`, …) reads wherever those links point, which
 * only the file system knows at run time. Whatever the spelling, such a call on a directory is never allowed by
 * acceptEdits mode, by being read-only, by a prefix rule, or past a Read deny rule under a tool-wide allow; the same
 * commands without link following (or on a regular file) keep their allow.
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

layer(base)("link-following tree walks (generated)", (it) => {
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
