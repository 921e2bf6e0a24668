/**
 * Code the Bash deny and ask rules cannot see. A command that runs code written in another language on its
 * command line (`python3 -c`, `perl -e`, `node --eval`, `awk 'BEGIN{system(…)}'`, `sed 'e …'`, `gdb -ex`), reads it
 * from stdin, or names a program through a variable (`PAGER=…`) may do what a deny rule forbids without the rule
 * ever seeing a denied word. When such rules exist (Bash deny or ask rules, or Read/Edit/Write rules that Bash paths
 * are checked against), the call asks, whatever allows it later (a tool-wide `allow: ["Bash"]`, bypass mode).
 */

import * as PermissionRule from "../../domain/PermissionRule.js"
import { describe } from "../../domain/shell/CommandEffect.js"
import { hiddenAssignment, hiddenCode } from "../../domain/shell/HiddenCode.js"
import { interpreterFor } from "../../domain/shell/Interpreters.js"
import { shells } from "../shell/WrapperTables.js"
import { type Prepared, type PreparedRule, pass, type Stage, where } from "./Prepared.js"

/** The first rule whose reach the hidden code could escape: a Bash content rule or a path rule Bash paths meet. */
const blindRule = (call: Prepared): PreparedRule | undefined => {
  const bashRule = (pr: PreparedRule) =>
    pr.rule.content !== undefined && PermissionRule.namesTool(pr.rule.tool, call.tool)
  return call.deny.find(bashRule) ?? call.ask.find(bashRule) ?? call.bash?.rules[0]
}

/** Paths are compared by their last segment: the line's `cd`s are not followed here, so this errs toward asking. */
const bare = (path: string): string => path.slice(path.lastIndexOf("/") + 1)

/** Commands that run a file named among their words: shells, interpreters, `source`. */
const runsFiles = (head: string): boolean => {
  const name = head.slice(head.lastIndexOf("/") + 1)
  return shells.has(name) || interpreterFor(name) !== undefined || name === "source" || name === "."
}

/** The last segments of the files a line writes by a redirection, `tee`, `cp`/`mv`/`ln`/`install`, `curl -o`, `wget -O`. */
const writtenFiles = (call: Prepared): ReadonlySet<string> => {
  const out = new Set<string>()
  for (const step of call.analysis?.pathSteps ?? []) {
    if (step._tag !== "Redirect" || !step.operator.includes(">")) continue
    const text = step.target.map((piece) => (piece._tag === "Text" ? piece.text : "")).join("")
    if (text !== "" && !text.startsWith("&") && text !== "/dev/null") out.add(bare(text))
  }
  for (const command of call.analysis?.commands ?? []) {
    const [name, ...args] = command.argv
    const operands = args.filter((arg) => !arg.startsWith("-"))
    if (name === "tee") for (const operand of operands) out.add(bare(operand))
    if ((name === "cp" || name === "mv" || name === "ln" || name === "install") && operands.length > 1) {
      out.add(bare(operands[operands.length - 1]))
    }
    args.forEach((arg, at) => {
      const output = (name === "curl" && (arg === "-o" || arg === "--output")) || (name === "wget" && arg === "-O")
      if (output && at + 1 < args.length) out.add(bare(args[at + 1]))
    })
  }
  return out
}

/**
 * A file the line writes and then runs, as a program or a script (`echo 'rm x' > a.sh && sh a.sh`): what it holds is
 * only known once the line runs.
 */
const writtenThenRun = (call: Prepared): { readonly command: string; readonly finding: string } | undefined => {
  const written = writtenFiles(call)
  if (written.size === 0) return undefined
  for (const command of call.analysis?.commands ?? []) {
    for (const form of command.forms) {
      const head = form[0]
      if (head === null || head === undefined) continue
      const ran = written.has(bare(head))
        ? head
        : runsFiles(head)
          ? form.slice(1).find((word) => word !== null && written.has(bare(word)))
          : undefined
      if (ran !== undefined && ran !== null) {
        return { command: command.text, finding: `\`${ran}\` is written by this command line and then run` }
      }
    }
  }
  return undefined
}

/**
 * A program run by a path (`./r x`), or a script given to a shell or interpreter, after a command of the same line
 * that may write files the tables do not know of (`dd of=r`, `rsync /bin/rm ./r`): what runs is only known once the
 * line runs, so the line is not enumerable.
 */
const runAfterUnknownWrite = (call: Prepared): { readonly command: string; readonly finding: string } | undefined => {
  let writer: string | undefined
  for (const command of call.analysis?.commands ?? []) {
    const head = command.argv[0]
    if (writer !== undefined && head !== undefined) {
      const script = runsFiles(head) ? command.argv.slice(1).find((word) => !word.startsWith("-")) : undefined
      const ran = head.includes("/") ? head : script
      if (ran !== undefined) {
        return {
          command: command.text,
          finding: `\`${ran}\` is run after \`${writer}\`, which may write it`
        }
      }
    }
    if (writer === undefined && head !== undefined) {
      const effect = describe(command.argv)
      if (!effect.readOnly && (!effect.known || effect.writes.length > 0)) writer = command.normalized
    }
  }
  return undefined
}

/** The first finding of hidden code in the call's commands, with the command it is in. */
export const findHiddenCode = (call: Prepared): { readonly command: string; readonly finding: string } | undefined => {
  // Not enumerable: the line may start a program no rule has seen (docs/permissions.md, "Enumerability").
  const opaque = call.analysis?.opaque?.[0]
  if (opaque !== undefined)
    return { command: call.analysis?.commands[0]?.text ?? "", finding: `The line uses ${opaque}` }
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
  return writtenThenRun(call) ?? runAfterUnknownWrite(call)
}

/** Asks for a command whose code the deny and ask rules cannot see, when such rules exist. */
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
