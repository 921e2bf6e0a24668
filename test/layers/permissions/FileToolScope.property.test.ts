/**
 * Issue 28 classes 6, 7 and 9 for the file tools, as properties over generated calls:
 * - rule scope: an `Edit` deny (tool-wide or for a path) stops every tool that edits files; a tool-wide `Read` deny
 *   stops Grep in every output mode (Glob lists names, which Read rules do not protect); Glob walking outside the
 *   working directories (an absolute pattern, `../*`, a `path` above) asks;
 * - devices: a file tool writing under /dev, /proc or /sys asks in every mode, bypassPermissions included;
 * - protected paths: every entry of the one list (src/domain/ProtectedPaths.ts) asks when written, at any depth, in
 *   any case, in acceptEdits and bypassPermissions mode and under allow rules.
 * Each comes with harmless neighbours that keep their allow.
 */
import * as Fs from "node:fs"
import { afterAll, expect, layer } from "@effect/vitest"
import { Effect, FastCheck, Schema } from "effect"
import type { PermissionMode } from "../../../src/domain/Permission.js"
import * as ProtectedPaths from "../../../src/domain/ProtectedPaths.js"
import { decideWith, policyRequest } from "../../fixtures/BashDecision.js"
import { base, fakeTool, makeProject, tools } from "./PolicyHarness.js"

const project = makeProject("armature-file-scope-")
afterAll(project.remove)
const { proj, home } = project
Fs.mkdirSync(`${proj}/secrets`, { recursive: true })
Fs.writeFileSync(`${proj}/secrets/key.txt`, "k")

const fileTools = {
  ...tools,
  MultiEdit: fakeTool("MultiEdit", { file_path: Schema.String }, { category: "file" }),
  NotebookEdit: fakeTool("NotebookEdit", { notebook_path: Schema.String }, { category: "file" }),
  Grep: fakeTool(
    "Grep",
    { pattern: Schema.String, path: Schema.optional(Schema.String), output_mode: Schema.optional(Schema.String) },
    { category: "search", isReadOnly: () => true }
  ),
  Glob: fakeTool(
    "Glob",
    { pattern: Schema.String, path: Schema.optional(Schema.String) },
    { category: "search", isReadOnly: () => true }
  )
} as const

type Name = keyof typeof fileTools

interface Call {
  readonly tool: Name
  readonly input: Record<string, unknown>
  readonly mode?: PermissionMode
  readonly allow?: ReadonlyArray<string>
  readonly deny?: ReadonlyArray<string>
  readonly ask?: ReadonlyArray<string>
}

const decide = (c: Call) =>
  Effect.map(
    decideWith({ project: proj, home }, c, policyRequest(fileTools[c.tool], c.input, proj, c.mode ?? "default")),
    (d) => ({ tool: c.tool, input: c.input, mode: c.mode ?? "default", behavior: d.behavior, reason: d.reason })
  )

/** The input of an editing tool for a path. */
const editInput = (tool: "Edit" | "Write" | "MultiEdit" | "NotebookEdit", path: string) =>
  tool === "NotebookEdit" ? { notebook_path: path } : { file_path: path }

const editor = FastCheck.constantFrom<"Edit" | "Write" | "MultiEdit" | "NotebookEdit">(
  "Edit",
  "Write",
  "MultiEdit",
  "NotebookEdit"
)
const writingMode = FastCheck.constantFrom<PermissionMode>("default", "acceptEdits", "bypassPermissions")
const permissive = FastCheck.constantFrom<Pick<Call, "mode" | "allow">>(
  { mode: "acceptEdits" },
  { mode: "bypassPermissions" },
  { mode: "default", allow: ["Edit", "Write", "MultiEdit", "NotebookEdit"] },
  { mode: "acceptEdits", allow: ["Edit(/**)", "Write(//**)"] }
)

/** A name with its letters in a random case (`.GitConfig`): a case-insensitive file system opens the same file. */
const cased = (name: string) =>
  FastCheck.array(FastCheck.boolean(), { minLength: name.length, maxLength: name.length }).map((ups) =>
    Array.from(name, (ch, i) => (ups[i] ? ch.toUpperCase() : ch)).join("")
  )

layer(base)("rule scope, devices and protected paths for the file tools (issue 28 classes 6, 7, 9)", (it) => {
  it.effect.prop(
    "an Edit deny, tool-wide or for the path, stops every editing tool in every mode (even with the tool allowed)",
    [editor, writingMode, FastCheck.constantFrom("Edit", "Edit(./src/**)", "Edit(/src/gen/**)", "Edit(**/*.ts)")],
    ([tool, mode, rule]) =>
      Effect.gen(function* () {
        const d = yield* decide({
          tool,
          mode,
          deny: [rule],
          allow: [tool],
          input: editInput(tool, `${proj}/src/gen/x.ts`)
        })
        expect(d).toMatchObject({ behavior: "deny" })
      })
  )

  it.effect("the same editing tools elsewhere keep their allow (the path rule does not name them)", () =>
    Effect.gen(function* () {
      for (const tool of ["Edit", "Write", "MultiEdit", "NotebookEdit"] as const) {
        const d = yield* decide({
          tool,
          mode: "acceptEdits",
          deny: ["Edit(./src/**)"],
          input: editInput(tool, `${proj}/docs/x.md`)
        })
        expect(d).toMatchObject({ behavior: "allow" })
      }
    })
  )

  it.effect.prop(
    "a tool-wide Read deny stops Grep in every output mode; Glob lists names and stays allowed",
    [FastCheck.constantFrom(undefined, "content", "files_with_matches", "count"), FastCheck.constantFrom(".", "src")],
    ([mode, path]) =>
      Effect.gen(function* () {
        const input = { pattern: "TODO", path, ...(mode === undefined ? {} : { output_mode: mode }) }
        expect(yield* decide({ tool: "Grep", deny: ["Read"], input })).toMatchObject({ behavior: "deny" })
        expect(yield* decide({ tool: "Grep", input })).toMatchObject({ behavior: "allow" })
        expect(yield* decide({ tool: "Glob", deny: ["Read"], input: { pattern: "**/*.ts", path } })).toMatchObject({
          behavior: "allow"
        })
      })
  )

  it.effect.prop(
    "a Read deny for a path stops Grep of it in every output mode",
    [
      FastCheck.constantFrom(undefined, "content", "files_with_matches", "count"),
      FastCheck.constantFrom("secrets", "secrets/key.txt", "./secrets/")
    ],
    ([mode, path]) =>
      Effect.gen(function* () {
        const input = { pattern: "k", path, ...(mode === undefined ? {} : { output_mode: mode }) }
        expect(yield* decide({ tool: "Grep", deny: ["Read(./secrets/**)"], input })).toMatchObject({
          behavior: "deny"
        })
      })
  )

  it.effect.prop(
    "Glob walking outside the working directories (absolute pattern, ../, path above) asks, with no rule and in acceptEdits",
    [
      FastCheck.oneof(
        // absolute: outside from any searched directory
        FastCheck.tuple(
          FastCheck.constantFrom("/etc/*", "/etc/**/*.conf", "/*", `${home}/*`, "/usr/lib/**"),
          FastCheck.constantFrom(undefined, ".", "src")
        ),
        // relative: outside from the working directory (`../*` from `src` is the project itself)
        FastCheck.tuple(
          FastCheck.constantFrom("../*", "../../**", "src/../../*", "../proj/../*"),
          FastCheck.constantFrom(undefined, ".")
        ),
        FastCheck.tuple(FastCheck.constantFrom("../../*", "a/../../../**"), FastCheck.constant("src")),
        // braces hold an absolute or upward alternative; a `..` after a wildcard may climb anywhere (round 3)
        FastCheck.tuple(
          FastCheck.constantFrom("{/etc,src}/*", "{src,../..}/*", "{a,/etc/x}*/*", "{a,{b,/usr/lib}}/**", "*/../../*"),
          FastCheck.constantFrom(undefined, ".")
        )
      ),
      FastCheck.constantFrom<PermissionMode>("default", "acceptEdits")
    ],
    ([[pattern, path], mode]) =>
      Effect.gen(function* () {
        const input = path === undefined ? { pattern } : { pattern, path }
        const d = yield* decide({ tool: "Glob", mode, input })
        expect(d).toMatchObject({ behavior: "ask" })
      })
  )

  it.effect("Glob patterns that stay inside keep their allow (wildcards first, literal subdirectories, ./)", () =>
    Effect.gen(function* () {
      for (const pattern of [
        "**/*.ts",
        "src/**/*.ts",
        "./src/*",
        "*.json",
        "src/../*",
        "**/.env*",
        "**/*.{ts,tsx}",
        "{src,test}/**/*.ts"
      ]) {
        expect(yield* decide({ tool: "Glob", input: { pattern } })).toMatchObject({ behavior: "allow" })
      }
      expect(yield* decide({ tool: "Glob", input: { pattern: "*", path: "/etc" } })).toMatchObject({ behavior: "ask" })
    })
  )

  it.effect.prop(
    "a file tool writing a device or kernel file asks in every mode that would otherwise allow",
    [
      editor,
      permissive,
      FastCheck.constantFrom("/dev", "/proc", "/sys"),
      FastCheck.constantFrom("null", "zero", "sda", "sys/kernel/hostname", "self/mem", "kernel/x", "")
    ],
    ([tool, setting, root, rest]) =>
      Effect.gen(function* () {
        const path = rest === "" ? root : `${root}/${rest}`
        const d = yield* decide({ tool, ...setting, input: editInput(tool, path) })
        expect(d).toMatchObject({ behavior: "ask" })
      })
  )

  it.effect("a project directory named dev or proc is no device", () =>
    Effect.gen(function* () {
      for (const path of [`${proj}/dev/null.txt`, `${proj}/proc/x`, `${proj}/sys/y`]) {
        const d = yield* decide({ tool: "Write", mode: "acceptEdits", input: { file_path: path } })
        expect(d).toMatchObject({ behavior: "allow" })
      }
    })
  )

  const entry = FastCheck.constantFrom(...ProtectedPaths.entries)
  const where = FastCheck.constantFrom(proj, `${proj}/sub`, `${proj}/a/b`, home)

  it.effect.prop(
    "writing any entry of the protected list asks, at any depth, in any case, in every permissive setting",
    [entry, where, editor, permissive, FastCheck.boolean()],
    ([e, dir, tool, setting, upper]) =>
      Effect.gen(function* () {
        const name = upper ? e.name.toUpperCase() : e.name
        const path = e.kind === "dir" ? `${dir}/${name}/x` : `${dir}/${name}`
        const d = yield* decide({ tool, ...setting, input: editInput(tool, path) })
        expect(d).toMatchObject({ behavior: "ask" })
      })
  )

  it.effect.prop(
    "a Bash line writing any protected entry asks in bypassPermissions and under allow Bash",
    [entry.chain((e) => cased(e.name).map((name) => ({ e, name }))), FastCheck.constantFrom("", "sub/")],
    ([{ e, name }, dir]) =>
      Effect.gen(function* () {
        const target = e.kind === "dir" ? `${dir}${name}/x` : `${dir}${name}`
        for (const setting of [{ mode: "bypassPermissions" as const }, { allow: ["Bash"] }]) {
          const d = yield* decide({ tool: "Bash", ...setting, input: { command: `echo pwned > ${target}` } })
          expect(d).toMatchObject({ behavior: "ask" })
        }
      })
  )

  it.effect("neighbours of protected names stay writable in acceptEdits", () =>
    Effect.gen(function* () {
      for (const path of [
        "src/gitconfig.ts",
        "husky.md",
        "docs/vscode.md",
        ".github/workflows/ci.yml",
        ".gitignore",
        ".editorconfig",
        "config/fish.txt",
        "bashrc.example",
        ".env.example.md"
      ]) {
        const d = yield* decide({ tool: "Write", mode: "acceptEdits", input: { file_path: `${proj}/${path}` } })
        expect({ path, behavior: d.behavior }).toEqual({ path, behavior: "allow" })
      }
    })
  )
})
