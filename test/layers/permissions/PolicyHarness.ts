/**
 * A small harness for policy tests: a real temp project (with `.git/`, `.claude/` and a home with `.bashrc`), a few
 * tools declared like the built-in ones, and `decide(case)` running the rule-based policy with the real shell
 * analyzer and file system.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { Effect, Layer, Schema } from "effect"
import type { PermissionMode } from "../../../src/domain/Permission.js"
import * as Tool from "../../../src/domain/Tool.js"
import * as TreeSitterShellAnalyzer from "../../../src/layers/shell/TreeSitterShellAnalyzer.js"
import { decideWith, policyRequest } from "../../fixtures/BashDecision.js"

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
export const decide = (project: Project, c: Case) =>
  decideWith(
    { project: project.proj, home: project.home },
    c,
    policyRequest(tools[c.tool], c.input, project.proj, c.mode ?? "default")
  )

/** The settings of a Bash decision: a case without its tool and input. */
export type Settings = Omit<Case, "tool" | "input">

/**
 * Decides the Bash command `line` under `settings`; the outcome names the line and the mode beside the behaviour, so
 * that a failing property shows which command was allowed where.
 */
export const bashOutcome = (project: Project, settings: Settings, line: string) =>
  Effect.map(decide(project, { ...settings, tool: "Bash", input: { command: line } }), (decision) => ({
    line,
    mode: settings.mode ?? "default",
    behavior: decision.behavior
  }))

/** Quotes a string for bash as one word. */
export const shellQuote = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`
