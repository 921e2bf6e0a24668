/**
 * Property: a recursive copy or move whose source tree or destination directory holds a `.git/`, `.claude/`,
 * `.armature/` or shell start-up file at any depth may write one (`cp -r evil/. sub/` rewrites `sub/.git/hooks`),
 * so it always asks — in acceptEdits and bypassPermissions mode and under allow rules, like any other write to a
 * safety path. The same copies between trees that hold none of them keep their allow.
 */
import * as Fs from "node:fs"
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import type { PermissionMode } from "../../../src/domain/Permission.js"
import { base, decide, makeProject } from "./PolicyHarness.js"

const project = makeProject("armature-protected-trees-prop-")
afterAll(project.remove)
const dirs = ["sub/.git/hooks", "deep/a/b/.claude", "evil/.git/hooks", "rc/x", "clean/a/b", "other/c"]
for (const dir of dirs) Fs.mkdirSync(`${project.proj}/${dir}`, { recursive: true })
Fs.writeFileSync(`${project.proj}/evil/.git/hooks/pre-commit`, "#!/bin/sh\n")
Fs.writeFileSync(`${project.proj}/rc/x/.BashRC`, "")
Fs.writeFileSync(`${project.proj}/clean/a/b/f.txt`, "f")

/** A tree copy or move from a source to a destination. */
const copy = FastCheck.constantFrom(
  (s: string, d: string) => `cp -r ${s} ${d}`,
  (s: string, d: string) => `cp -R ${s}/ ${d}/`,
  (s: string, d: string) => `cp -a ${s}/. ${d}`,
  (s: string, d: string) => `cp --recursive ${s} ${d}`,
  (s: string, d: string) => `cp -rT ${s} ${d}`,
  (s: string, d: string) => `cp -r -t ${d} ${s}`,
  (s: string, d: string) => `cp -r --target-directory=${d} ${s}`,
  (s: string, d: string) => `mv ${s} ${d}/`,
  (s: string, d: string) => `mv -t ${d} ${s}`,
  (s: string, d: string) => `rsync -a ${s}/ ${d}/`,
  (s: string, d: string) => `/bin/cp -r ${s} ${d}`,
  (s: string, d: string) => `mkdir -p ${d} && cp -r ${s} ${d}`
)

/**
 * Spellings a match on the command's text missed (the trees are found from the analysis): quoted or escaped names,
 * GNU option prefixes, `command`/`builtin`, a program named by a variable, a copy run by find -exec. Some of them ask
 * for other reasons too, so only the property that they ask is held for them.
 */
const spelled = FastCheck.constantFrom(
  (s: string, d: string) => `"cp" -r ${s} ${d}`,
  (s: string, d: string) => `\\cp -r ${s} ${d}`,
  (s: string, d: string) => `c''p -r ${s} ${d}`,
  (s: string, d: string) => `cp --recur ${s} ${d}`,
  (s: string, d: string) => `cp --arch ${s}/. ${d}`,
  (s: string, d: string) => `command cp -r ${s} ${d}`,
  (s: string, d: string) => `command -p cp -r ${s} ${d}`,
  (s: string, d: string) => `builtin cp -r ${s} ${d}`,
  (s: string, d: string) => `c=cp; $c -r ${s} ${d}`,
  (s: string, d: string) => `find ${s} -maxdepth 0 -exec cp -r {} ${d} \\;`
)

/** A source holding a protected name and any destination, or any source and a destination holding one. */
const pair = FastCheck.oneof(
  FastCheck.tuple(
    FastCheck.constantFrom("evil", "deep", "rc", "./evil", "de{e,}p"),
    FastCheck.constantFrom("out", "other")
  ),
  FastCheck.tuple(
    FastCheck.constantFrom("clean", "other", "evil"),
    FastCheck.constantFrom("sub", "deep", "deep/a", "./sub", "s?b")
  )
)

const setting = FastCheck.constantFrom<{ readonly mode: PermissionMode; readonly allow?: ReadonlyArray<string> }>(
  { mode: "acceptEdits" },
  { mode: "bypassPermissions" },
  { mode: "default", allow: ["Bash"] },
  { mode: "default", allow: ["Bash(cp:*)", "Bash(mv:*)", "Bash(rsync:*)", "Bash(mkdir:*)", "Bash(/bin/cp:*)"] }
)

layer(base)("recursive copies and protected names in their trees (generated)", (it) => {
  it.effect.prop(
    "a tree copy touching a tree that holds a protected name always asks",
    [FastCheck.oneof(copy, spelled), pair, setting],
    ([spell, [source, destination], s]) =>
      Effect.gen(function* () {
        const line = spell(source, destination)
        const decision = yield* decide(project, { ...s, tool: "Bash", input: { command: line } })
        expect({ line, mode: s.mode, behavior: decision.behavior }).toEqual({ line, mode: s.mode, behavior: "ask" })
      }),
    { fastCheck: { numRuns: 200 } }
  )

  it.effect.prop(
    "a tree copy between trees that hold none keeps acceptEdits' allow",
    [copy, FastCheck.constantFrom("clean", "clean/a", "./clean"), FastCheck.constantFrom("other", "fresh", "other/c")],
    ([spell, source, destination]) =>
      Effect.gen(function* () {
        const line = spell(source, destination)
        const decision = yield* decide(project, { mode: "acceptEdits", tool: "Bash", input: { command: line } })
        const expected = line.startsWith("rsync") || line.startsWith("/bin") ? "ask" : "allow"
        expect({ line, behavior: decision.behavior }).toEqual({ line, behavior: expected })
      }),
    { fastCheck: { numRuns: 60 } }
  )
})
