/**
 * Properties for the everyday false asks fixed together (issue 29's direction: silent on harmless commands):
 * - a read-only command beside rule-covered ones needs no rule of its own (`npm test | grep -i fail`), while a part
 *   that is neither covered nor read-only, a denied read or a path outside still stops the line;
 * - `export NAME=value` counts as giving NAME to every later command: off the harmless list it makes an allow rule
 *   and the read-only stage miss (`export GIT_PAGER=x && git status`);
 * - process listers' words are never commands (`pgrep -f rm` under `Bash(rm:*)`);
 * - a reader that follows the links in a tree (`grep -R`, `diff -r`) is allowed on a tree holding no link, and asks
 *   when the tree holds one or the line writes first;
 * - shell settings that change no word's meaning are read-only (`set -euo pipefail`, `shopt -s nullglob`), the others
 *   are not (`set -k`, `shopt -s nocaseglob`), and once `globstar` is on a `**` glob is only known at run time.
 */

import * as Fs from "node:fs"
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import { base, bashOutcome, makeProject } from "./PolicyHarness.js"

const project = makeProject("armature-everyday-prop-")
Fs.mkdirSync(`${project.proj}/secrets/deep`, { recursive: true })
Fs.writeFileSync(`${project.proj}/secrets/deep/key.txt`, "k")
Fs.writeFileSync(`${project.proj}/.env`, "K=1")
// Trees for link-following readers: one without links, one with a link out of the project, one with a link to a
// denied file.
Fs.mkdirSync(`${project.proj}/plain/sub`, { recursive: true })
Fs.writeFileSync(`${project.proj}/plain/sub/a.txt`, "a")
Fs.mkdirSync(`${project.proj}/out/sub`, { recursive: true })
Fs.symlinkSync("/etc", `${project.proj}/out/sub/etc`)
Fs.mkdirSync(`${project.proj}/secretlink`, { recursive: true })
Fs.symlinkSync(`${project.proj}/secrets/deep/key.txt`, `${project.proj}/secretlink/k.txt`)
afterAll(project.remove)

const covered = FastCheck.constantFrom("npm test", "npm run test", "make", "make -j2 build", "npm run lint -- --fix")
const readOnly = FastCheck.constantFrom("grep -i fail", "tail -30", "head -n 5", "wc -l", "sort", "cat", "uniq -c")
const before = FastCheck.constantFrom("cd src", "set -euo pipefail", "set -e", "ls src", "pwd", "export NODE_ENV=test")
const pipeSpelling = FastCheck.constantFrom(
  (a: string, b: string) => `${a} | ${b}`,
  (a: string, b: string) => `${a} 2>&1 | ${b}`,
  (a: string, b: string) => `${a} |& ${b}`
)
const seqSpelling = FastCheck.constantFrom(
  (a: string, b: string) => `${a} && ${b}`,
  (a: string, b: string) => `${a}; ${b}`,
  (a: string, b: string) => `${a}\n${b}`
)
const allow = ["Bash(npm:*)", "Bash(make:*)", "Bash(git status)"]
const settings = { allow, deny: ["Read(./secrets/**)", "Read(./.env)", "Bash(rm:*)"] }

/** Parts that must keep the line from being allowed: neither covered nor read-only, or reading what is denied. */
const stopper = FastCheck.constantFrom(
  "rm -rf build",
  "curl -o x https://example.com",
  "cat .env",
  "grep -r KEY secrets",
  "cat /etc/passwd",
  "tee out.txt",
  "sort -o out.txt",
  "xargs rm",
  "python3 -c 'print(1)'"
)

layer(base)("everyday false asks (generated)", (it) => {
  it.effect.prop(
    "a read-only command beside a rule-covered one is allowed with it",
    [covered, readOnly, before, pipeSpelling, seqSpelling],
    ([command, filter, first, pipe, seq]) =>
      Effect.gen(function* () {
        expect(yield* bashOutcome(project, settings, pipe(command, filter))).toMatchObject({ behavior: "allow" })
        expect(yield* bashOutcome(project, settings, seq(first, command))).toMatchObject({ behavior: "allow" })
      }),
    { fastCheck: { numRuns: 60 } }
  )

  it.effect.prop(
    "a part neither covered nor read-only, or a denied or outside read, still stops the line",
    [covered, stopper, FastCheck.boolean(), pipeSpelling, seqSpelling],
    ([command, part, piped, pipe, seq]) =>
      Effect.gen(function* () {
        const line = piped ? pipe(command, part) : seq(command, part)
        expect(yield* bashOutcome(project, settings, line)).not.toMatchObject({ behavior: "allow" })
      }),
    { fastCheck: { numRuns: 60 } }
  )

  it.effect.prop(
    "an exported variable off the harmless list reaches later commands: no rule or read-only stage allows them",
    [
      FastCheck.constantFrom("GIT_PAGER", "GIT_CONFIG_COUNT", "PAGER", "LESSOPEN", "FOO", "MYTOOL_HOOK", "lower_case"),
      FastCheck.constantFrom("git status", "ls", "cat src/a.ts", "npm test", "make"),
      seqSpelling
    ],
    ([name, command, seq]) =>
      Effect.gen(function* () {
        const line = seq(`export ${name}=x`, command)
        expect(yield* bashOutcome(project, settings, line)).not.toMatchObject({ behavior: "allow" })
        expect(yield* bashOutcome(project, {}, line)).not.toMatchObject({ behavior: "allow" })
      }),
    { fastCheck: { numRuns: 60 } }
  )

  it.effect.prop(
    "a process lister's words are never a command a Bash deny rule names",
    [
      FastCheck.constantFrom("pgrep", "pgrep -f", "pgrep -fl", "pgrep -a -f", "pidof", "ps -C", "ps -o pid= -C"),
      FastCheck.constantFrom("rm", "node", "python3", "bash", "git push")
    ],
    ([lister, name]) =>
      Effect.gen(function* () {
        const line = `${lister} ${name.includes(" ") ? `'${name}'` : name}`
        const denied = { deny: ["Bash(rm:*)", "Bash(git push:*)", "Read(./.env)"] }
        expect(yield* bashOutcome(project, denied, line)).toMatchObject({ behavior: "allow" })
      }),
    { fastCheck: { numRuns: 40 } }
  )

  it.effect.prop(
    "shell settings: harmless ones are read-only, the ones changing what words mean are not",
    [
      FastCheck.constantFrom(
        "set -e",
        "set -euo pipefail",
        "set +x",
        "set -o nounset",
        "shopt -s nullglob",
        "shopt -s globstar",
        "shopt -q extglob",
        "ulimit -n",
        "ulimit -Sn 4096"
      ),
      FastCheck.constantFrom(
        "set -k",
        "set -o keyword",
        "set -ek",
        "shopt -s nocaseglob",
        "shopt -s expand_aliases",
        "shopt -s extglob",
        "ulimit -n $(cat .env)"
      ),
      seqSpelling
    ],
    ([harmless, changing, seq]) =>
      Effect.gen(function* () {
        const deny = { deny: ["Read(./.env)", "Bash(rm:*)"] }
        expect(yield* bashOutcome(project, deny, seq(harmless, "ls src"))).toMatchObject({ behavior: "allow" })
        expect(yield* bashOutcome(project, deny, seq(changing, "ls src"))).not.toMatchObject({ behavior: "allow" })
      }),
    { fastCheck: { numRuns: 40 } }
  )

  it.effect.prop(
    "once globstar is set, a ** glob under a Read deny rule is not allowed",
    [
      FastCheck.constantFrom("cat", "head", "wc -l", "grep x"),
      FastCheck.constantFrom("**/key.txt", "**/*.txt", "**/k*")
    ],
    ([reader, glob]) =>
      Effect.gen(function* () {
        const line = `shopt -s globstar; ${reader} ${glob}`
        expect(yield* bashOutcome(project, { deny: ["Read(./secrets/**)"] }, line)).not.toMatchObject({
          behavior: "allow"
        })
      }),
    { fastCheck: { numRuns: 20 } }
  )

  it.effect.prop(
    "a link-following reader is allowed on a tree without links, never on one holding a link or after a write",
    [
      FastCheck.constantFrom(
        "grep -R x",
        "grep -rR x",
        "grep --dereference-recursive x",
        "diff -rq plain",
        "diff -r plain"
      ),
      FastCheck.constantFrom("out", "secretlink", "out/sub")
    ],
    ([reader, linked]) =>
      Effect.gen(function* () {
        const deny = { deny: ["Read(./secrets/**)"] }
        const plain = reader.startsWith("diff") ? `${reader} plain/sub` : `${reader} plain`
        expect(yield* bashOutcome(project, deny, plain)).toMatchObject({ behavior: "allow" })
        expect(yield* bashOutcome(project, deny, `${reader} ${linked}`)).not.toMatchObject({ behavior: "allow" })
        expect(yield* bashOutcome(project, deny, `ln -s /etc plain/e; ${plain}`)).not.toMatchObject({
          behavior: "allow"
        })
      }),
    { fastCheck: { numRuns: 30 } }
  )
})
