/**
 * Property: a command that reads the names of its files from a file or its input (`wc --files0-from=F`,
 * `tar -T F`, `rsync --files-from=F`, `file -f F`, `zip -@`, `cpio -o`, `git add --pathspec-from-file=F`) works on
 * paths only known at run time: under a tool-wide allow with a Read deny rule, in acceptEdits mode or as a
 * read-only call it is never allowed (the list may name `secrets/key` or `/etc/shadow`). Without the list option
 * the same commands keep their allow.
 */
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import type { PermissionMode } from "../../../src/domain/Permission.js"
import { base, bashOutcome, decide, makeProject } from "./PolicyHarness.js"

const project = makeProject("armature-path-lists-prop-")
afterAll(project.remove)

const listing = FastCheck.constantFrom(
  (f: string) => `wc --files0-from=${f}`,
  (f: string) => `wc -l --files0-from ${f}`,
  (f: string) => `wc --files0=${f}`,
  (f: string) => `du --files0-from=${f}`,
  (f: string) => `sort --files0-from=${f}`,
  (f: string) => `file -f ${f}`,
  (f: string) => `file -bf ${f}`,
  (f: string) => `tar -cf out.tar -T ${f}`,
  (f: string) => `tar cfT out.tar ${f}`,
  (f: string) => `tar --files-from=${f} -cf out.tar`,
  (f: string) => `rsync -a --files-from=${f} . out`,
  (f: string) => `zip out.zip -@ < ${f}`,
  (f: string) => `cpio -o > out.cpio < ${f}`,
  (f: string) => `git add --pathspec-from-file=${f}`,
  (f: string) => `timeout 5 wc --files0-from=${f}`
)
const list = FastCheck.constantFrom("list", "src/list", "-", "/dev/stdin")

const setting = FastCheck.constantFrom<{
  readonly mode: PermissionMode
  readonly allow?: ReadonlyArray<string>
  readonly deny?: ReadonlyArray<string>
}>(
  { mode: "default", allow: ["Bash"], deny: ["Read(./secrets/**)"] },
  { mode: "default" },
  { mode: "acceptEdits" },
  { mode: "default", allow: ["Bash(wc:*)", "Bash(du:*)", "Bash(sort:*)", "Bash(file:*)", "Bash(tar:*)"] }
)

layer(base)("commands reading their paths from a list (generated)", (it) => {
  it.effect.prop(
    "a command whose paths come from a list is never allowed without approval",
    [listing, list, setting],
    ([spell, f, s]) =>
      Effect.gen(function* () {
        const line = spell(f)
        expect(yield* bashOutcome(project, s, line)).not.toMatchObject({ behavior: "allow" })
      }),
    { fastCheck: { numRuns: 150 } }
  )

  it.effect.prop(
    "the same commands naming their paths keep the tool-wide allow",
    [FastCheck.constantFrom("wc -l src/a.ts", "du -s src", "sort src/a.ts", "tar -cf out.tar src", "file src/a.ts")],
    ([line]) =>
      Effect.gen(function* () {
        const decision = yield* decide(project, {
          allow: ["Bash"],
          deny: ["Read(./secrets/**)"],
          tool: "Bash",
          input: { command: line }
        })
        expect({ line, behavior: decision.behavior }).toEqual({ line, behavior: "allow" })
      }),
    { fastCheck: { numRuns: 10 } }
  )
})
