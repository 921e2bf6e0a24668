/**
 * A call prepared for the permission stages (its target, resolved paths and rules, computed once), the stage type,
 * and the small matching helpers the stages share.
 */
import type { PermissionMode, PermissionOpinion, TraceStep } from "../../domain/Permission.js"
import * as PermissionRule from "../../domain/PermissionRule.js"
import type { RunPlan } from "../../domain/Sandbox.js"
import type * as Tool from "../../domain/Tool.js"
import type { ShellAnalysis } from "../../services/ShellAnalyzer.js"
import type { BashPathCheck } from "./BashPathCheck.js"
import type { PreparedRule } from "./PreparedRule.js"
import type { TreeFinding } from "./ProtectedTrees.js"
import type { Target } from "./Targets.js"

export type { PreparedRule } from "./PreparedRule.js"

/** A path of the call in every form it may be opened as, each with symlinks resolved. */
export interface PreparedPath {
  readonly given: string
  readonly forms: ReadonlyArray<string>
  /**
   * False when the path is written other than by a redirection (`mv x /dev/null`, Write of `/dev/zero`): a device
   * then does not count as inside the working directories (as root, that would replace the device itself).
   */
  readonly deviceOk?: boolean | undefined
}

/** Everything the stages need to know about one call, computed once. */
export interface Prepared {
  readonly tool: Tool.Any
  readonly input: unknown
  readonly mode: PermissionMode
  readonly target: Target
  /** The shell analysis of a Bash command. */
  readonly analysis: ShellAnalysis | undefined
  /** The target paths (file tools) or every path a Bash command reads or writes, resolved as the shell would. */
  readonly paths: ReadonlyArray<PreparedPath>
  /** Bash only: the paths with their access, the ones only known at run time, and the Read/Edit rules for them. */
  readonly bash?: BashPathCheck | undefined
  readonly workingDirs: ReadonlyArray<string>
  /** The call's directory and the home directory, as given: reasons show paths relative to them. */
  readonly cwd?: string | undefined
  readonly home?: string | undefined
  readonly readOnly: boolean
  /** The call edits files: an `Edit(...)`-covered call (what acceptEdits mode allows). */
  readonly edits: boolean
  /** The call writes: an edit, a write resource, or a Bash command that is not read-only (safety paths apply). */
  readonly writes: boolean
  readonly host: string | undefined
  readonly allow: ReadonlyArray<PreparedRule>
  readonly ask: ReadonlyArray<PreparedRule>
  readonly deny: ReadonlyArray<PreparedRule>
  readonly opinion: PermissionOpinion
  /** Bash copying or moving trees: a protected name found in one of the directories it names (see ProtectedTrees). */
  readonly trees?: TreeFinding | undefined
  /** Bash with the sandbox on: how the command will run, and whether a sandboxed run is allowed without asking. */
  readonly sandbox?: { readonly plan: RunPlan; readonly autoAllow: boolean } | undefined
}

/** One stage of the pipeline: a trace step whose outcome is a verdict, or `passthrough` to go on. */
export type Stage = (call: Prepared) => TraceStep

/** A step that decides nothing: the pipeline goes on. */
export const pass = (step: string, reason: string): TraceStep => ({ step, outcome: "passthrough", reason })

/** How a rule is named in reasons: its text and the settings file it came from. */
export const where = (rule: PermissionRule.Rule) => `${rule.text} in ${rule.source}`

/** Devices that hold no data of anyone's: reading or writing them is as good as staying inside the project. */
const neutralDevices: ReadonlySet<string> = new Set(["/dev/null", "/dev/zero", "/dev/random", "/dev/urandom"])

/**
 * Every form of the path is inside one of the working directories (or is a neutral device such as /dev/null, read
 * or written through a redirection).
 */
export const inside = (call: Prepared, path: PreparedPath): boolean =>
  path.forms.every(
    (form) =>
      (neutralDevices.has(form) && path.deviceOk !== false) ||
      call.workingDirs.some((dir) => PermissionRule.isInside(dir, form))
  )

/** A path rule matches some form of the path (`every`: all of its forms). */
export const ruleMatchesPath = (pr: PreparedRule, path: PreparedPath, every: boolean): boolean =>
  pr.anchor !== undefined &&
  pr.pattern !== undefined &&
  (every ? path.forms.every : path.forms.some).call(path.forms, (form: string) =>
    PermissionRule.matchesPath(pr.anchor!, pr.pattern!, form, pr.rule.behavior)
  )

/** The first rule that names the whole tool (no specifier). */
export const wholeTool = (rules: ReadonlyArray<PreparedRule>, tool: Tool.Any) =>
  rules.find((pr) => pr.rule.content === undefined && PermissionRule.namesTool(pr.rule.tool, tool))

/**
 * A deny or ask rule for a whole tool, where a tool-wide `Edit` rule also names every tool that edits files
 * (Write, MultiEdit, NotebookEdit) and a tool-wide `Read` rule every tool that reads their contents (Grep): denying
 * `Edit` must not leave `Write` open.
 */
export const wholeToolRestriction = (rules: ReadonlyArray<PreparedRule>, tool: Tool.Any) =>
  wholeTool(rules, tool) ??
  rules.find(
    (pr) =>
      pr.rule.content === undefined &&
      ((pr.rule.tool === "Edit" && PermissionRule.editTools.has(tool.name)) ||
        (pr.rule.tool === "Read" && tool.name === "Grep"))
  )
