/**
 * The rule stages nothing overrides: whole-tool deny and ask, content-level deny and ask (any part of the call
 * matched decides), and the tool's own permission check.
 */
import * as PermissionRule from "../../domain/PermissionRule.js"
import { matchesByMeaning, readings } from "../../domain/shell/RuleMeaning.js"
import {
  type Prepared,
  type PreparedRule,
  pass,
  ruleMatchesPath,
  type Stage,
  where,
  wholeToolRestriction
} from "./Prepared.js"

/** The parts of a call a content rule matched (for deny and ask: any part; a Bash command or a path). */
const contentHit = (pr: PreparedRule, call: Prepared): string | undefined => {
  const rule = pr.rule
  if (rule.content === undefined || !PermissionRule.coversCall(rule, call.tool, call.input)) return undefined
  const target = call.target
  switch (target._tag) {
    case "Command": {
      const analysis = call.analysis
      // Deny and ask rules match by meaning: each reading of the rule (`/bin/rm:*` is `rm:*`, `npm pub` is
      // `npm publish`), and options through the command's table (`rm -fr` under `Bash(rm -rf:*)`; RuleMeaning.ts).
      const contents = readings(rule.content)
      for (const command of analysis?.commands ?? []) {
        if (
          command.forms.some((form) =>
            contents.some((content) => PermissionRule.mayMatchCommand(content, form) || matchesByMeaning(content, form))
          )
        ) {
          return command.normalized
        }
      }
      // A command that does not parse may be anything the rule names: when in doubt, the rule matches.
      if (analysis !== undefined && !analysis.parsed) return target.command
      return contents.some((content) => PermissionRule.matchesCommand(content, target.command))
        ? target.command
        : undefined
    }
    case "Paths":
      return call.paths.find((path) => ruleMatchesPath(pr, path, false))?.given
    case "Url":
      return call.host !== undefined &&
        rule.content.startsWith("domain:") &&
        PermissionRule.matchesDomain(rule.content, call.host)
        ? call.host
        : undefined
    case "Name":
      return PermissionRule.matchesName(rule.content, target.name) ? target.name : undefined
    case "None":
      return undefined
  }
}

/** A deny rule for the whole tool. */
export const wholeToolDeny: Stage = (call) => {
  const hit = wholeToolRestriction(call.deny, call.tool)
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

/** An ask rule for the whole tool. */
export const wholeToolAsk: Stage = (call) => {
  const hit = wholeToolRestriction(call.ask, call.tool)
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

/** Content-level deny rules (any part of the call matched denies it). */
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

/** Content-level ask rules. */
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

/** The tool's own `checkPermissions`; its deny and ask decide, its allow is applied with the allow rules. */
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
