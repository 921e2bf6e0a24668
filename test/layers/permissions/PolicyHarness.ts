/**
 * A small harness for policy tests: a real temp project (with `.git/`, `.claude/` and a home with `.bashrc`), a few
 * tools declared like the built-in ones, and `decide(case)` running the rule-based policy with the real shell
 * analyzer and file system.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { Effect, Either, Layer, Schema } from "effect"
import type { PermissionBehavior, PermissionMode } from "../../../src/domain/Permission.js"
import * as PermissionRule from "../../../src/domain/PermissionRule.js"
import * as Tool from "../../../src/domain/Tool.js"
import * as RulePermissionPolicy from "../../../src/layers/permissions/RulePermissionPolicy.js"
import * as TreeSitterShellAnalyzer from "../../../src/layers/shell/TreeSitterShellAnalyzer.js"
import * as Settings from "../../../src/services/Settings.js"

/** A project tree in a fresh temp directory; `remove` deletes it. */
export const makeProject = (prefix: string) => {
  const root = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix)))
  const proj = Path.join(root, "proj")
  const home = Path.join(root, "home")
  for (const dir of [`${proj}/src`, `${proj}/.git`, `${proj}/.claude`, home]) Fs.mkdirSync(dir, { recursive: true })
  Fs.writeFileSync(`${proj}/src/a.ts`, "a")
  Fs.writeFileSync(`${proj}/.git/config`, "")
  Fs.writeFileSync(`${home}/.bashrc`, "")
  return { root, proj, home, remove: () => Fs.rmSync(root, { recursive: true, force: true }) }
}

export type Project = ReturnType<typeof makeProject>

/** A tool with the given input fields and declarations whose call does nothing: the policy only reads its flags. */
export const fakeTool = <F extends Schema.Struct.Fields>(
  name: string,
  fields: F,
  extra: Partial<Tool.Definition<Schema.Struct.Type<F>, string>> = {}
) =>
  Effect.runSync(
    Tool.make({
      name,
      description: name,
      input: Schema.Struct(fields),
      output: Schema.String,
      call: () => Effect.succeed(""),
      ...extra
    } as Tool.Definition<Schema.Struct.Type<F>, string>)
  )

/** Tools declared as the built-in ones are (name, category, read-only). */
export const tools = {
  // The real Bash tool asks the analyzer; the policy combines `isReadOnly` with its own analysis the same way.
  Bash: fakeTool("Bash", { command: Schema.String }, { category: "shell", isReadOnly: () => true }),
  Read: fakeTool("Read", { file_path: Schema.String }, { category: "file", isReadOnly: () => true }),
  Edit: fakeTool("Edit", { file_path: Schema.String }, { category: "file" }),
  Write: fakeTool("Write", { file_path: Schema.String }, { category: "file" }),
  WebFetch: fakeTool("WebFetch", { url: Schema.String }, { category: "network", isReadOnly: () => true }),
  McpIssue: fakeTool("mcp__github__create_issue", { title: Schema.String }, { category: "mcp" })
} as const

export type ToolName = keyof typeof tools

/** One decision to make. */
export interface Case {
  readonly allow?: ReadonlyArray<string>
  readonly ask?: ReadonlyArray<string>
  readonly deny?: ReadonlyArray<string>
  readonly mode?: PermissionMode
  readonly tool: ToolName
  readonly input: Record<string, unknown>
}

/** The layer every decision needs: the real shell analyzer and file system. */
export const base = Layer.mergeAll(TreeSitterShellAnalyzer.layer, NodeFileSystem.layer)

/** Decides one case in the project. */
export const decide = (project: Project, c: Case) => {
  const source = `${project.proj}/.claude/settings.json`
  const rules = (texts: ReadonlyArray<string> | undefined, behavior: PermissionBehavior) =>
    Either.getOrThrow(PermissionRule.parseAll(texts ?? [], { behavior, source, root: project.proj }))
  const settings = Settings.layerStatic({
    allow: rules(c.allow, "allow"),
    ask: rules(c.ask, "ask"),
    deny: rules(c.deny, "deny"),
    defaultMode: c.mode ?? "default",
    additionalDirectories: [],
    home: project.home,
    projectDir: project.proj
  })
  const context = {
    toolUseId: "toolu_1",
    cwd: project.proj,
    permissionMode: c.mode ?? ("default" as const),
    progress: () => Effect.void,
    interrupted: Effect.never,
    state: Effect.runSync(Tool.makeSessionState)
  }
  return Effect.flatMap(RulePermissionPolicy.make, (policy) =>
    policy.decide({ tool: tools[c.tool], input: c.input, toolUseId: "toolu_1", context })
  ).pipe(Effect.provide(settings))
}

/** Quotes a string for bash as one word. */
export const shellQuote = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`
