/**
 * The stages that may allow a call once no guard stopped it: the permission mode, allow rules, and read-only calls
 * inside the working directories.
 */
import type { TraceStep } from "../../domain/Permission.js"
import * as PermissionRule from "../../domain/PermissionRule.js"
import { codeRunningOption } from "../../domain/shell/CodeOptions.js"
import { isReadOnlyCommand } from "../../domain/shell/ReadOnlyCommands.js"
import type { ShellAnalysis } from "../../services/ShellAnalyzer.js"
import {
  inside,
  type Prepared,
  type PreparedRule,
  pass,
  ruleMatchesPath,
  type Stage,
  where,
  wholeTool
} from "./Prepared.js"

const acceptEditsCommands: ReadonlySet<string> = new Set(["mkdir", "touch", "mv", "cp"])

const cleanCommand = (analysis: ShellAnalysis | undefined): analysis is ShellAnalysis =>
  analysis?.parsed === true && analysis.dangers.length === 0 && analysis.commands.length > 0

/**
 * A line whose only effect beyond reading is writing files through redirections (`echo x > notes.txt`,
 * `sort a > b`): every program it can start is named and read-only with harmless variables, and its only dangers are
 * output redirections. With every path it touches inside the working directories, it is an edit like Write's.
 */
const writesOnlyByRedirection = (analysis: ShellAnalysis | undefined): analysis is ShellAnalysis =>
  analysis?.parsed === true &&
  analysis.commands.length > 0 &&
  (analysis.opaque ?? []).length === 0 &&
  analysis.dangers.length > 0 &&
  analysis.dangers.every((danger) => danger.startsWith("output redirection to ")) &&
  analysis.commands.every(
    (c) => (c.assigned ?? []).every(PermissionRule.isHarmlessAssignment) && isReadOnlyCommand(c.argv)
  )

/** The permission mode (see docs/permissions.md). */
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
      const allInside =
        call.paths.length > 0 && call.paths.every((p) => inside(call, p)) && (call.bash?.unresolved ?? []).length === 0
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
      if (call.tool.name === "Bash" && writesOnlyByRedirection(call.analysis) && allInside) {
        return {
          step: "mode",
          outcome: "allow",
          reason:
            "acceptEdits mode allows a read-only command writing through redirections inside the working directories"
        }
      }
      return pass("mode", "acceptEdits mode: not an edit inside the working directories")
    }
    default:
      return pass("mode", `${call.mode} mode decides nothing by itself`)
  }
}

/**
 * The allow rule covering one simple command: a `Bash(…)` rule with content matches only when every variable assigned
 * for the command is harmless (`A=1 cmd`, `env A=1 cmd`: GIT_CONFIG_*, PATH, LD_PRELOAD, BASH_ENV … change what runs).
 */
export const commandAllowRule = (
  call: Prepared,
  command: { readonly argv: ReadonlyArray<string>; readonly assigned?: ReadonlyArray<string> | undefined }
): PreparedRule | undefined => {
  const harmless = (command.assigned ?? []).every(PermissionRule.isHarmlessAssignment)
  // A rule naming a program never covers an option of it that runs code (`rg --pre`, `make -E`; CodeOptions.ts).
  const runsCode = codeRunningOption(command.argv) !== undefined
  return call.allow.find(
    (pr) =>
      PermissionRule.namesTool(pr.rule.tool, call.tool) &&
      (pr.rule.content === undefined ||
        (harmless && !runsCode && PermissionRule.matchesCommand(pr.rule.content, command.argv.join(" "))))
  )
}

/** Allow rules (every part of the call must be covered) and the tool's own allow. */
export const allowRules: Stage = (call) => {
  const allowed = (pr: PreparedRule): TraceStep => ({
    step: "allowRules",
    outcome: "allow",
    reason: `Allowed by rule ${where(pr.rule)}`,
    rule: pr.rule.text,
    source: pr.rule.source
  })
  // A rule for the whole tool allows every call of it (deny and ask rules and the safety paths came first).
  const whole = wholeTool(call.allow, call.tool)
  if (whole !== undefined) return allowed(whole)
  if (call.target._tag === "Command") {
    const analysis = call.analysis
    if (analysis === undefined || analysis.commands.length === 0) return pass("allowRules", "the command is empty")
    const matched = analysis.commands.map((c) => [c, commandAllowRule(call, c)] as const)
    // A read-only command next to covered ones needs no rule of its own (`npm test | grep -i fail`, `cd web && npm
    // test`, `set -e; make`), as when it runs alone; the paths of the whole line are checked below as for the rule.
    const readOnlyPart = (c: (typeof analysis.commands)[number]) =>
      c.readOnly === true && (analysis.opaque ?? []).length === 0 && matched.some(([, pr]) => pr !== undefined)
    // The reason names a command that asks: one not read-only before a read-only one (`find … | xargs rm`).
    const uncovered =
      matched.find(([c, pr]) => pr === undefined && c.readOnly === false) ??
      matched.find(([c, pr]) => pr === undefined && !readOnlyPart(c))
    if (uncovered !== undefined) {
      const option = codeRunningOption(uncovered[0].argv)
      return pass(
        "allowRules",
        option === undefined
          ? `no allow rule covers \`${uncovered[0].normalized}\``
          : `no allow rule covers \`${uncovered[0].normalized}\`: its option ${option} runs code the rule does not name`
      )
    }
    if (!analysis.parsed || analysis.dangers.length > 0) {
      const dangers = analysis.parsed ? analysis.dangers : ["input that does not parse", ...analysis.dangers]
      return pass("allowRules", `allow rules never cover ${[...new Set(dangers)].join(", ")}`)
    }
    // A `Bash(…)` rule names a command, not the files it may touch: as for Claude Code's path-checked commands, a
    // path outside the working directories (`ls /etc` under `Bash(ls:*)`) or one only known at run time still asks.
    const named = matched.filter(([, pr]) => pr?.rule.content !== undefined)
    if (named.length > 0) {
      const outside = call.paths.find((p) => !inside(call, p))
      if (outside !== undefined) {
        return pass(
          "allowRules",
          `an allow rule covers the command, but ${outside.given} is outside the working directories`
        )
      }
      const unknown = call.bash?.unresolved[0]
      if (unknown !== undefined) {
        return pass(
          "allowRules",
          `an allow rule covers the command, but ${unknown.given} is only known at run time (${unknown.reason})`
        )
      }
    }
    const first = matched.find(([, pr]) => pr !== undefined)![1]!
    return allowed(first)
  }
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
    if (call.target._tag === "Name" && PermissionRule.matchesName(rule.content, call.target.name)) return allowed(pr)
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

/** Read-only calls whose paths are all inside the working directories (not network or MCP calls). */
export const readOnlyInside: Stage = (call) => {
  if (!call.readOnly) return pass("readOnly", "the call is not read-only")
  if (call.target._tag === "Url" || call.tool.category === "network" || call.tool.category === "mcp") {
    return pass("readOnly", "network and MCP calls are not allowed by being read-only")
  }
  const outside = call.paths.find((p) => !inside(call, p))
  if (outside !== undefined) return pass("readOnly", `${outside.given} is outside the working directories`)
  const unknown = call.bash?.unresolved[0]
  if (unknown !== undefined) {
    const known = `${unknown.given} is only known at run time`
    return pass("readOnly", unknown.reason.startsWith(known) ? unknown.reason : `${known} (${unknown.reason})`)
  }
  return {
    step: "readOnly",
    outcome: "allow",
    reason: "the call is read-only and stays inside the working directories"
  }
}
