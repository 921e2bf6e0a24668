/**
 * The permission pipeline as a chain of stages: guards (rules nothing overrides), a PreToolUse hook's decision,
 * then the stages that may allow; the first stage with a verdict decides, and nothing allowing the call asks.
 * See docs/permissions.md.
 */
import * as Path from "node:path"
import type { PermissionBehavior, PermissionDecision, TraceStep } from "../../domain/Permission.js"
import { allowRules, mode, readOnlyInside } from "./AllowStages.js"
import { bashPathRules } from "./BashPaths.js"
import { hiddenCodeStage } from "./HiddenCodeStage.js"
import type { Prepared, Stage } from "./Prepared.js"
import { contentAsk, contentDeny, toolCheck, wholeToolAsk, wholeToolDeny } from "./RuleStages.js"
import { safetyPaths } from "./SafetyPaths.js"
import { sandboxEscape, sandboxed } from "./SandboxStages.js"

/** Nothing allowed the call: ask, with the most useful reason found on the way. */
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
  bashPathRules,
  contentAsk,
  hiddenCodeStage,
  safetyPaths,
  toolCheck,
  sandboxEscape
]

/** Steps 4–6. */
export const allowStages: ReadonlyArray<Stage> = [mode, allowRules, sandboxed, readOnlyInside]

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

/**
 * A reason as the model reads it: paths inside the project relative to it (`.env`, not `/home/u/proj/.env`), the
 * home directory as `~`, so that no absolute path of the user's machine (a settings file's among them) goes out.
 */
export const relativeText = (text: string, call: Prepared): string => {
  const roots = [...new Set([call.cwd, ...call.workingDirs].filter((d): d is string => d !== undefined && d !== "/"))]
    .map((dir) => dir.replace(/\/+$/, ""))
    .sort((a, b) => b.length - a.length)
  let out = text
  for (const root of roots) {
    out = out
      .split(`${root}/`)
      .join("")
      .replace(new RegExp(`${root.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?=[\\s,:;)\`'"]|$)`, "g"), ".")
  }
  const home = call.home?.replace(/\/+$/, "")
  if (home !== undefined && home !== "" && home !== "/") out = out.split(`${home}/`).join("~/")
  return out
}

const finish = (call: Prepared, decisive: TraceStep, trace: ReadonlyArray<TraceStep>): PermissionDecision => {
  const decision = finishRaw(call, decisive, trace)
  // A settings file outside the project and home (`--settings /x/y.json`) is named by its file name alone.
  const source = decisive.source
  const outside = (text: string) => {
    const relative = relativeText(text, call)
    return source?.startsWith("/") ? relative.split(source).join(Path.basename(source)) : relative
  }
  return { ...decision, message: outside(decision.message), reason: outside(decision.reason) }
}

const finishRaw = (call: Prepared, decisive: TraceStep, trace: ReadonlyArray<TraceStep>): PermissionDecision => {
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

/** Runs the stages on a prepared call, honouring a PreToolUse hook's decision. */
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
