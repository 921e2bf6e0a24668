/**
 * Backups written under a name the command does not show (issue 28, round 5): `cp -b -S rc a .bash` renames the old
 * `.bash` to `.bashrc`, so the backup's name (the destination's plus the suffix) is a written path. Under acceptEdits
 * and under bypassPermissions with a tool-wide allow, a backup landing on a protected path (`.bashrc`, `.git`,
 * `.gitconfig`, `.mcp.json`, `.envrc`) is never allowed, however the backup and suffix options are spelt; a
 * harmless suffix stays allowed.
 */
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect, FastCheck } from "effect"
import { base, bashOutcome, makeProject, shellQuote } from "./PolicyHarness.js"

const project = makeProject("armature-backup-suffix-")
afterAll(project.remove)

/** [destination, suffix] pairs whose backup is a protected name. */
const targets = FastCheck.constantFrom(
  [".bash", "rc"],
  [".g", "it"],
  [".gitconf", "ig"],
  [".mcp", ".json"],
  [".env", "rc"],
  [".zsh", "rc"]
)

/** The ways cp, mv, ln and install are told to keep a backup with a given suffix. */
const spelling = FastCheck.constantFrom(
  (s: string) => `-b -S ${s}`,
  (s: string) => `-bS${s}`,
  (s: string) => `-fbS ${s}`,
  (s: string) => `-S ${s}`,
  (s: string) => `--backup --suffix=${s}`,
  (s: string) => `--backup=simple --suffix ${s}`,
  (s: string) => `--suf=${shellQuote(s)}`,
  (s: string) => `-b --su ${s}`
)

const line = FastCheck.tuple(FastCheck.constantFrom("cp", "mv", "ln", "install"), spelling, targets).map(
  ([command, options, [destination, suffix]]) => `${command} ${options(suffix)} a.txt ${destination}`
)

const settings = FastCheck.constantFrom(
  { mode: "acceptEdits" as const },
  { mode: "bypassPermissions" as const, allow: ["Bash"] }
)

layer(base)("backup suffixes", (it) => {
  it.effect.prop(
    "a backup named onto a protected path is never allowed",
    [line, settings],
    ([command, setting]) =>
      Effect.gen(function* () {
        const outcome = yield* bashOutcome(project, setting, command)
        expect(outcome).toEqual({ line: command, mode: setting.mode, behavior: "ask" })
      }),
    { fastCheck: { numRuns: 80 } }
  )
  it.effect("a harmless backup stays allowed", () =>
    Effect.gen(function* () {
      for (const command of ["cp -b a.txt b.txt", "cp -b -S .bak a.txt b.txt", "mv --backup=numbered a.txt b.txt"]) {
        const outcome = yield* bashOutcome(project, { mode: "acceptEdits" }, command)
        expect(outcome).toEqual({ line: command, mode: "acceptEdits", behavior: "allow" })
      }
    })
  )
})
