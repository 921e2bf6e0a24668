/**
 * The permission pipeline of SPEC §5.4 as a chain of stages over settings rules, the shell analyzer and the file
 * system. Each stage is a pure function of a prepared call (its target, resolved paths and rules) returning one
 * trace step; the first stage with a verdict decides.
 */
import * as Path from "node:path"
import { FileSystem } from "@effect/platform"
import { Effect, Layer, Ref } from "effect"
import type {
  PermissionBehavior,
  PermissionDecision,
  PermissionMode,
  PermissionOpinion,
  TraceStep
} from "../../domain/Permission.js"
import * as PermissionRule from "../../domain/PermissionRule.js"
import { resourcesOf } from "../../domain/Resources.js"
import * as Tool from "../../domain/Tool.js"
import { PermissionPolicy, type PermissionRequest } from "../../services/PermissionPolicy.js"
import { Settings } from "../../services/Settings.js"
import { type ShellAnalysis, ShellAnalyzer } from "../../services/ShellAnalyzer.js"

/** What a call acts on, as far as rules are concerned. */
export type Target =
  | { readonly _tag: "Command"; readonly command: string }
  | { readonly _tag: "Paths"; readonly paths: ReadonlyArray<string> }
  | { readonly _tag: "Url"; readonly url: string }
  | { readonly _tag: "None" }

const stringField = (input: unknown, key: string): string | undefined => {
  if (typeof input !== "object" || input === null) return undefined
  const value = (input as Record<string, unknown>)[key]
  return typeof value === "string" ? value : undefined
}

const looksLikePath = (key: string): boolean =>
  key.startsWith("/") || key.startsWith("./") || key.startsWith("../") || key === "~" || key.startsWith("~/")

/**
 * The target of a call: Bash's `command`, the `file_path` of Read/Write/Edit, the `path` of Glob/Grep (default: the
 * working directory), WebFetch's `url`; for other tools, the path-like keys of `tool.resources(input)`.
 */
export const targetOf = (tool: Tool.Any, input: unknown): Target => {
  switch (tool.name) {
    case "Bash":
      return { _tag: "Command", command: stringField(input, "command") ?? "" }
    case "Read":
    case "Write":
    case "Edit":
    case "MultiEdit":
      return { _tag: "Paths", paths: [stringField(input, "file_path") ?? ""] }
    case "NotebookEdit":
      return { _tag: "Paths", paths: [stringField(input, "notebook_path") ?? ""] }
    case "Glob":
    case "Grep":
    case "LS":
      return { _tag: "Paths", paths: [stringField(input, "path") ?? "."] }
    case "WebFetch":
      return { _tag: "Url", url: stringField(input, "url") ?? "" }
  }
  const keys = resourcesOf(tool, input)
    .map((r) => r.key)
    .filter(looksLikePath)
  return keys.length > 0 ? { _tag: "Paths", paths: keys } : { _tag: "None" }
}

/** A path of the call in every form it may be opened as, each with symlinks resolved. */
export interface PreparedPath {
  readonly given: string
  readonly forms: ReadonlyArray<string>
}

/** A rule with its path anchor resolved (path rules only). */
export interface PreparedRule {
  readonly rule: PermissionRule.Rule
  readonly anchor?: string | undefined
  readonly pattern?: string | undefined
}

/** Everything the stages need to know about one call, computed once. */
export interface Prepared {
  readonly tool: Tool.Any
  readonly input: unknown
  readonly mode: PermissionMode
  readonly target: Target
  /** The shell analysis of a Bash command. */
  readonly analysis: ShellAnalysis | undefined
  /** The target paths (file tools) or the non-flag arguments of every simple command (Bash). */
  readonly paths: ReadonlyArray<PreparedPath>
  readonly workingDirs: ReadonlyArray<string>
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
}

/** One stage of the pipeline: a trace step whose outcome is a verdict, or `passthrough` to go on. */
export type Stage = (call: Prepared) => TraceStep

const pass = (step: string, reason: string): TraceStep => ({ step, outcome: "passthrough", reason })

const where = (rule: PermissionRule.Rule) => `${rule.text} in ${rule.source}`

const inside = (call: Prepared, path: PreparedPath): boolean =>
  path.forms.every((form) => call.workingDirs.some((dir) => PermissionRule.isInside(dir, form)))

const ruleMatchesPath = (pr: PreparedRule, path: PreparedPath, every: boolean): boolean =>
  pr.anchor !== undefined &&
  pr.pattern !== undefined &&
  (every ? path.forms.every : path.forms.some).call(path.forms, (form: string) =>
    PermissionRule.matchesPath(pr.anchor!, pr.pattern!, form, pr.rule.behavior)
  )

/** The parts of a call a content rule matched (for deny and ask: any part; a Bash command or a path). */
const contentHit = (pr: PreparedRule, call: Prepared): string | undefined => {
  const rule = pr.rule
  if (rule.content === undefined || !PermissionRule.coversCall(rule, call.tool, call.input)) return undefined
  const target = call.target
  switch (target._tag) {
    case "Command": {
      const commands = call.analysis?.commands ?? []
      for (const command of commands) {
        if (PermissionRule.denyForms(command.argv).some((form) => PermissionRule.matchesCommand(rule.content!, form))) {
          return command.normalized
        }
      }
      return PermissionRule.matchesCommand(rule.content, target.command) ? target.command : undefined
    }
    case "Paths":
      return call.paths.find((path) => ruleMatchesPath(pr, path, false))?.given
    case "Url":
      return call.host !== undefined &&
        rule.content.startsWith("domain:") &&
        PermissionRule.matchesDomain(rule.content, call.host)
        ? call.host
        : undefined
    case "None":
      return undefined
  }
}

const wholeTool = (rules: ReadonlyArray<PreparedRule>, tool: Tool.Any) =>
  rules.find((pr) => pr.rule.content === undefined && PermissionRule.namesTool(pr.rule.tool, tool))

/** Step 1: a deny rule for the whole tool. */
export const wholeToolDeny: Stage = (call) => {
  const hit = wholeTool(call.deny, call.tool)
  return hit === undefined
    ? pass("wholeToolDeny", "no deny rule for the whole tool")
    : {
        step: "wholeToolDeny",
        outcome: "deny",
        reason: `${call.tool.name} is denied by rule ${where(hit.rule)}`,
        rule: hit.rule.text,
        source: hit.rule.source
      }
}

/** Step 2: an ask rule for the whole tool. */
export const wholeToolAsk: Stage = (call) => {
  const hit = wholeTool(call.ask, call.tool)
  return hit === undefined
    ? pass("wholeToolAsk", "no ask rule for the whole tool")
    : {
        step: "wholeToolAsk",
        outcome: "ask",
        reason: `Rule ${where(hit.rule)} requires approval for every ${call.tool.name} call`,
        rule: hit.rule.text,
        source: hit.rule.source
      }
}

/** Step 3a: content-level deny rules (any part of the call matched denies it). */
export const contentDeny: Stage = (call) => {
  for (const pr of call.deny) {
    const hit = contentHit(pr, call)
    if (hit !== undefined) {
      return {
        step: "contentDeny",
        outcome: "deny",
        reason: `${call.tool.name} on ${hit} is denied by rule ${where(pr.rule)}`,
        rule: pr.rule.text,
        source: pr.rule.source
      }
    }
  }
  return pass("contentDeny", "no content-level deny rule matches")
}

/** Step 3b: content-level ask rules. */
export const contentAsk: Stage = (call) => {
  for (const pr of call.ask) {
    const hit = contentHit(pr, call)
    if (hit !== undefined) {
      return {
        step: "contentAsk",
        outcome: "ask",
        reason: `Rule ${where(pr.rule)} requires approval for ${call.tool.name} on ${hit}`,
        rule: pr.rule.text,
        source: pr.rule.source
      }
    }
  }
  return pass("contentAsk", "no content-level ask rule matches")
}

const protectedDirs: ReadonlyArray<string> = [".git", ".claude", ".armature"]

const shellStartupFiles: ReadonlySet<string> = new Set([
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".bash_logout",
  ".profile",
  ".zshrc",
  ".zshenv",
  ".zprofile",
  ".zlogin",
  ".zlogout",
  ".cshrc",
  ".tcshrc",
  ".kshrc"
])

/** Why writing this (resolved) path always needs approval, or undefined when it may be written. */
export const protectedReason = (path: string): string | undefined => {
  const segments = path.split(Path.sep).map((s) => s.toLowerCase())
  const dir = protectedDirs.find((d) => segments.includes(d))
  if (dir !== undefined) return `${path} is inside a ${dir}/ directory`
  const base = segments[segments.length - 1]
  return shellStartupFiles.has(base) ? `${path} is a shell startup file` : undefined
}

/** Step 3c: writes to safety paths (`.git/`, `.claude/`, `.armature/`, shell rc files) always ask. */
export const safetyPaths: Stage = (call) => {
  const writes = call.writes
  if (writes) {
    for (const path of call.paths) {
      for (const form of path.forms) {
        const reason = protectedReason(form)
        if (reason !== undefined) {
          return { step: "safetyPaths", outcome: "ask", reason: `${reason}: writing there always needs approval` }
        }
      }
    }
  }
  return pass("safetyPaths", writes ? "no protected path is written" : "the call writes no files")
}

/** Step 3d: the tool's own `checkPermissions`; its deny and ask decide, its allow is applied at step 5. */
export const toolCheck: Stage = (call) => {
  const opinion = call.opinion
  if (opinion.behavior === "deny" || opinion.behavior === "ask") {
    return {
      step: "toolCheck",
      outcome: opinion.behavior,
      reason: opinion.reason,
      rule: opinion.rule,
      source: opinion.source
    }
  }
  return pass(
    "toolCheck",
    opinion.behavior === "allow" ? `the tool allows the call (${opinion.reason})` : "the tool has no opinion"
  )
}

const acceptEditsCommands: ReadonlySet<string> = new Set(["mkdir", "touch", "mv", "cp"])

const cleanCommand = (analysis: ShellAnalysis | undefined): analysis is ShellAnalysis =>
  analysis?.parsed === true && analysis.dangers.length === 0 && analysis.commands.length > 0

/** Step 4: the permission mode (SPEC §5.3). */
export const mode: Stage = (call) => {
  const name = call.tool.name
  switch (call.mode) {
    case "bypassPermissions":
      return { step: "mode", outcome: "allow", reason: "bypassPermissions mode allows every call no rule stops" }
    case "plan":
      return call.readOnly
        ? pass("mode", "plan mode: the call is read-only")
        : { step: "mode", outcome: "deny", reason: `Plan mode: ${name} is not read-only` }
    case "acceptEdits": {
      const allInside = call.paths.length > 0 && call.paths.every((p) => inside(call, p))
      if (call.edits && call.target._tag === "Paths" && allInside) {
        return {
          step: "mode",
          outcome: "allow",
          reason: "acceptEdits mode allows edits inside the working directories"
        }
      }
      if (
        cleanCommand(call.analysis) &&
        call.analysis.commands.every((c) => acceptEditsCommands.has(c.argv[0] ?? "")) &&
        allInside
      ) {
        return {
          step: "mode",
          outcome: "allow",
          reason: "acceptEdits mode allows mkdir, touch, mv and cp inside the working directories"
        }
      }
      return pass("mode", "acceptEdits mode: not an edit inside the working directories")
    }
    default:
      return pass("mode", `${call.mode} mode decides nothing by itself`)
  }
}

const commandAllowRule = (call: Prepared, argv: ReadonlyArray<string>): PreparedRule | undefined =>
  call.allow.find(
    (pr) =>
      PermissionRule.namesTool(pr.rule.tool, call.tool) &&
      (pr.rule.content === undefined || PermissionRule.matchesCommand(pr.rule.content, argv.join(" ")))
  )

/** Step 5: allow rules (every part of the call must be covered) and the tool's own allow. */
export const allowRules: Stage = (call) => {
  const allowed = (pr: PreparedRule): TraceStep => ({
    step: "allowRules",
    outcome: "allow",
    reason: `Allowed by rule ${where(pr.rule)}`,
    rule: pr.rule.text,
    source: pr.rule.source
  })
  if (call.target._tag === "Command") {
    const analysis = call.analysis
    if (analysis === undefined || analysis.commands.length === 0) return pass("allowRules", "the command is empty")
    const matched = analysis.commands.map((c) => [c, commandAllowRule(call, c.argv)] as const)
    const uncovered = matched.find(([, pr]) => pr === undefined)
    if (uncovered !== undefined) return pass("allowRules", `no allow rule covers \`${uncovered[0].normalized}\``)
    if (!analysis.parsed || analysis.dangers.length > 0) {
      const dangers = analysis.parsed ? analysis.dangers : ["input that does not parse", ...analysis.dangers]
      return pass("allowRules", `allow rules never cover ${[...new Set(dangers)].join(", ")}`)
    }
    const first = matched[0][1]!
    return allowed(first)
  }
  const whole = wholeTool(call.allow, call.tool)
  if (whole !== undefined) return allowed(whole)
  for (const pr of call.allow) {
    const rule = pr.rule
    if (rule.content === undefined || !PermissionRule.coversCall(rule, call.tool, call.input)) continue
    if (
      call.target._tag === "Paths" &&
      call.paths.length > 0 &&
      call.paths.every((p) => ruleMatchesPath(pr, p, true))
    ) {
      return allowed(pr)
    }
    if (
      call.target._tag === "Url" &&
      call.host !== undefined &&
      PermissionRule.matchesDomain(rule.content, call.host)
    ) {
      return allowed(pr)
    }
  }
  if (call.opinion.behavior === "allow") {
    return {
      step: "allowRules",
      outcome: "allow",
      reason: call.opinion.reason,
      rule: call.opinion.rule,
      source: call.opinion.source
    }
  }
  return pass("allowRules", "no allow rule matches")
}

/** Step 6: read-only calls whose paths are all inside the working directories (not network or MCP calls). */
export const readOnlyInside: Stage = (call) => {
  if (!call.readOnly) return pass("readOnly", "the call is not read-only")
  if (call.target._tag === "Url" || call.tool.category === "network" || call.tool.category === "mcp") {
    return pass("readOnly", "network and MCP calls are not allowed by being read-only")
  }
  const outside = call.paths.find((p) => !inside(call, p))
  if (outside !== undefined) return pass("readOnly", `${outside.given} is outside the working directories`)
  return {
    step: "readOnly",
    outcome: "allow",
    reason: "the call is read-only and stays inside the working directories"
  }
}

/** Step 7: nothing allowed the call: ask, with the most useful reason found on the way. */
export const fallbackAsk = (call: Prepared, trace: ReadonlyArray<TraceStep>): TraceStep => {
  const analysis = call.analysis
  if (analysis !== undefined && (!analysis.parsed || analysis.dangers.length > 0)) {
    const dangers = analysis.parsed ? analysis.dangers : ["input that does not parse", ...analysis.dangers]
    return {
      step: "ask",
      outcome: "ask",
      reason: `The command contains ${[...new Set(dangers)].join(", ")}, which no allow rule covers: it needs explicit approval`
    }
  }
  const detail = trace.find((t) => t.step === "allowRules")?.reason
  const readOnly = trace.find((t) => t.step === "readOnly")?.reason
  const parts = [detail, call.readOnly ? readOnly : undefined].filter((s) => s !== undefined)
  return { step: "ask", outcome: "ask", reason: `${call.tool.name} needs approval: ${parts.join("; ")}` }
}

/** Steps 1–3: rules and checks that nothing (not a hook's allow, not bypass mode) overrides. */
export const guardStages: ReadonlyArray<Stage> = [
  wholeToolDeny,
  wholeToolAsk,
  contentDeny,
  contentAsk,
  safetyPaths,
  toolCheck
]

/** Steps 4–6. */
export const allowStages: ReadonlyArray<Stage> = [mode, allowRules, readOnlyInside]

const messageFor = (call: Prepared, step: TraceStep): string => {
  if (step.outcome === "ask") return step.reason
  if (step.outcome !== "deny") return ""
  if (
    step.rule !== undefined &&
    step.source !== undefined &&
    (step.step === "wholeToolDeny" || step.step === "contentDeny")
  ) {
    return `Permission to use ${call.tool.name} has been denied by rule ${step.rule} in ${step.source}.`
  }
  return step.reason
}

const finish = (call: Prepared, decisive: TraceStep, trace: ReadonlyArray<TraceStep>): PermissionDecision => {
  if (decisive.outcome === "ask" && call.mode === "dontAsk") {
    const step: TraceStep = {
      step: "dontAsk",
      outcome: "deny",
      reason: `dontAsk mode turns this ask into a deny: ${decisive.reason}`,
      rule: decisive.rule,
      source: decisive.source
    }
    return {
      behavior: "deny",
      message: `Permission to use ${call.tool.name} has been denied (dontAsk mode). ${decisive.reason}`,
      reason: step.reason,
      rule: decisive.rule ?? null,
      source: decisive.source ?? null,
      trace: [...trace, step]
    }
  }
  return {
    behavior: decisive.outcome as PermissionBehavior,
    message: messageFor(call, decisive),
    reason: decisive.reason,
    rule: decisive.rule ?? null,
    source: decisive.source ?? null,
    trace
  }
}

/** Runs the stages of SPEC §5.4 on a prepared call, honouring a PreToolUse hook's decision. */
export const runStages = (call: Prepared, hookDecision?: PermissionBehavior | undefined): PermissionDecision => {
  const trace: Array<TraceStep> = []
  if (hookDecision === "deny") {
    const step: TraceStep = { step: "hook", outcome: "deny", reason: "A PreToolUse hook denied this call" }
    return finish(call, step, [step])
  }
  for (const stage of guardStages) {
    const step = stage(call)
    trace.push(step)
    if (step.outcome !== "passthrough" && step.outcome !== "skip") return finish(call, step, trace)
  }
  if (hookDecision === "allow" || hookDecision === "ask") {
    const step: TraceStep =
      hookDecision === "allow"
        ? { step: "hook", outcome: "allow", reason: "A PreToolUse hook allowed this call" }
        : { step: "hook", outcome: "ask", reason: "A PreToolUse hook asked for approval of this call" }
    trace.push(step)
    return finish(call, step, trace)
  }
  for (const stage of allowStages) {
    const step = stage(call)
    trace.push(step)
    if (step.outcome !== "passthrough" && step.outcome !== "skip") return finish(call, step, trace)
  }
  const ask = fallbackAsk(call, trace)
  trace.push(ask)
  return finish(call, ask, trace)
}

// --- Preparation (the effectful part) ----------------------------------------------------------------------------

/**
 * Resolves an absolute path the way the OS opens it: component by component, following each symlink before the
 * next `..` is applied (Node's `fs.realpath` collapses `..` first, which a symlink can escape). Components past the
 * longest existing prefix are appended lexically.
 */
export const realpathLoose = (path: string): Effect.Effect<string, never, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    let current = "/"
    let exists = true
    for (const segment of path.split("/")) {
      if (segment === "" || segment === ".") continue
      if (segment === "..") {
        current = Path.dirname(current)
        continue
      }
      const next = Path.join(current, segment)
      if (!exists) {
        current = next
        continue
      }
      const real = yield* fs.realPath(next).pipe(Effect.option)
      if (real._tag === "Some") current = real.value
      else {
        exists = false
        current = next
      }
    }
    return current
  })

const expand = (given: string, cwd: string, home: string): string => {
  if (given === "~") return home
  if (given.startsWith("~/")) return `${home}/${given.slice(2)}`
  if (Path.isAbsolute(given)) return given
  return `${cwd.replace(/\/+$/, "")}/${given}`
}

/**
 * A path in both forms it may be opened as: as the OS would follow it (symlink, then `..`) and as a tool that
 * normalizes `..` first would; each with symlinks resolved.
 */
export const preparePath = (given: string, cwd: string, home: string) =>
  Effect.gen(function* () {
    const raw = expand(given, cwd, home)
    const forms = [yield* realpathLoose(raw), yield* realpathLoose(Path.resolve(raw))]
    return { given, forms: [...new Set(forms)] } satisfies PreparedPath
  })

/** The inputs of `prepare`. */
export interface PrepareOptions {
  readonly request: PermissionRequest
  readonly mode: PermissionMode
  readonly rules: {
    readonly allow: ReadonlyArray<PermissionRule.Rule>
    readonly ask: ReadonlyArray<PermissionRule.Rule>
    readonly deny: ReadonlyArray<PermissionRule.Rule>
  }
  readonly additionalDirectories: ReadonlyArray<string>
  readonly home: string
  readonly analyze: (command: string) => ShellAnalysis
}

/** Computes everything the stages need: the target, resolved paths and rule anchors, and the tool's opinion. */
export const prepare = (options: PrepareOptions) =>
  Effect.gen(function* () {
    const { request } = options
    const tool = request.tool
    const input = request.input
    const cwd = request.context.cwd
    const home = options.home
    const target = targetOf(tool, input)
    const analysis = target._tag === "Command" ? options.analyze(target.command) : undefined
    const givenPaths =
      target._tag === "Paths"
        ? target.paths
        : (analysis?.commands ?? []).flatMap((c) => c.argv.slice(1).filter((a) => a !== "" && !a.startsWith("-")))
    const paths = yield* Effect.forEach(givenPaths, (p) => preparePath(p, cwd, home))
    const workingDirs = yield* Effect.forEach([cwd, ...options.additionalDirectories], (d) =>
      realpathLoose(Path.resolve(cwd, d))
    )
    const prepareRule = (rule: PermissionRule.Rule) =>
      Effect.gen(function* () {
        const isPathRule =
          rule.content !== undefined &&
          target._tag === "Paths" &&
          rule.tool !== "WebFetch" &&
          rule.tool !== "Bash" &&
          PermissionRule.coversCall(rule, tool, input)
        if (!isPathRule) return { rule } satisfies PreparedRule
        const { anchor, pattern } = PermissionRule.pathPattern(rule, { cwd, home })
        return { rule, anchor: yield* realpathLoose(anchor), pattern } satisfies PreparedRule
      })
    const opinion = yield* tool.checkPermissions(input, request.context).pipe(
      Effect.catchAllDefect((defect) =>
        Effect.succeed<PermissionOpinion>({
          behavior: "ask",
          reason: `${tool.name}'s permission check failed: ${String(defect)}`
        })
      )
    )
    const readOnly = Tool.safely(tool.isReadOnly, input) && (analysis === undefined || analysis.readOnly)
    const writesResource = resourcesOf(tool, input).some((r) => r.access === "write")
    return {
      tool,
      input,
      mode: options.mode,
      target,
      analysis,
      paths,
      workingDirs,
      readOnly,
      edits: target._tag === "Paths" && PermissionRule.isEditCall(tool, input),
      writes:
        (target._tag === "Paths" && (PermissionRule.isEditCall(tool, input) || writesResource)) ||
        (analysis !== undefined && !readOnly),
      host: target._tag === "Url" ? PermissionRule.hostOf(target.url) : undefined,
      allow: yield* Effect.forEach(options.rules.allow, prepareRule),
      ask: yield* Effect.forEach(options.rules.ask, prepareRule),
      deny: yield* Effect.forEach(options.rules.deny, prepareRule),
      opinion
    } satisfies Prepared
  })

/** Builds the policy from the Settings service, the ShellAnalyzer and the FileSystem. */
export const make = Effect.gen(function* () {
  const settings = yield* Settings
  const analyzer = yield* ShellAnalyzer
  const fs = yield* FileSystem.FileSystem
  const permissions = settings.permissions
  const mode = permissions.defaultMode
  return PermissionPolicy.of({
    mode,
    decide: (request) =>
      Effect.gen(function* () {
        const session = yield* Ref.get(settings.sessionRules)
        const byBehavior = (b: PermissionBehavior) => session.filter((r) => r.behavior === b)
        const call = yield* prepare({
          request,
          mode,
          rules: {
            allow: [...permissions.allow, ...byBehavior("allow")],
            ask: [...permissions.ask, ...byBehavior("ask")],
            deny: [...permissions.deny, ...byBehavior("deny")]
          },
          additionalDirectories: permissions.additionalDirectories,
          home: settings.home,
          analyze: analyzer.analyze
        })
        return runStages(call, request.hookDecision)
      }).pipe(Effect.provideService(FileSystem.FileSystem, fs)),
    isToolDenied: (tool) =>
      permissions.deny.some((rule) => rule.content === undefined && PermissionRule.namesTool(rule.tool, tool))
  })
})

/** The rule-based PermissionPolicy. */
export const layer = Layer.effect(PermissionPolicy, make)
