/**
 * Step 3c: code the Bash deny and ask rules cannot see. A command that runs code written in another language on its
 * command line (`python3 -c`, `perl -e`, `node --eval`, `awk 'BEGIN{system(…)}'`, `sed 'e …'`, `gdb -ex`), reads it
 * from stdin, or names a program through a variable (`PAGER=…`) may do what a deny rule forbids without the rule
 * ever seeing a denied word. When such rules exist (Bash deny or ask rules, or Read/Edit/Write rules that Bash paths
 * are checked against), the call asks, whatever allows it later (a tool-wide `allow: ["Bash"]`, bypass mode).
 */

import * as PermissionRule from "../../domain/PermissionRule.js"
import { hiddenAssignment, hiddenCode } from "../../domain/shell/HiddenCode.js"
import { type Prepared, type PreparedRule, pass, type Stage, where } from "./Prepared.js"

/** The first rule whose reach the hidden code could escape: a Bash content rule or a path rule Bash paths meet. */
const blindRule = (call: Prepared): PreparedRule | undefined => {
  const bashRule = (pr: PreparedRule) =>
    pr.rule.content !== undefined && PermissionRule.namesTool(pr.rule.tool, call.tool)
  return call.deny.find(bashRule) ?? call.ask.find(bashRule) ?? call.bash?.rules[0]
}

/** The first finding of hidden code in the call's commands, with the command it is in. */
export const findHiddenCode = (call: Prepared): { readonly command: string; readonly finding: string } | undefined => {
  for (const command of call.analysis?.commands ?? []) {
    for (const name of command.assigned ?? []) {
      const finding = hiddenAssignment(name)
      if (finding !== undefined) return { command: command.text, finding }
    }
    for (const form of command.forms) {
      const finding = hiddenCode(form)
      if (finding !== undefined) return { command: command.text, finding }
    }
  }
  return undefined
}

/** Step 3c: asks for a command whose code the deny and ask rules cannot see, when such rules exist. */
export const hiddenCodeStage: Stage = (call) => {
  if (call.target._tag !== "Command") return { step: "hiddenCode", outcome: "skip", reason: "not a shell command" }
  const rule = blindRule(call)
  if (rule === undefined) return pass("hiddenCode", "no Bash deny or ask rule could be hidden from")
  const hidden = findHiddenCode(call)
  if (hidden === undefined) return pass("hiddenCode", "no code hidden from the rules")
  return {
    step: "hiddenCode",
    outcome: "ask",
    reason: `${hidden.finding}, which rule ${where(rule.rule)} cannot see into: it needs approval`,
    rule: rule.rule.text,
    source: rule.rule.source
  }
}
