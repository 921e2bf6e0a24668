/**
 * The permission stages of the OS sandbox (see docs/sandbox.md): a guard that sends every request to run outside the
 * sandbox (`dangerouslyDisableSandbox`) to an approval, or refuses it when the settings forbid it, and the
 * `autoAllowBashIfSandboxed` stage that allows a command the sandbox will contain.
 */
import { pass, type Stage } from "./Prepared.js"

/** A guard: a run outside the sandbox always asks (never a rule's, a mode's or a hook's allow); a refused run denies. */
export const sandboxEscape: Stage = (call) => {
  const sandbox = call.sandbox
  if (sandbox === undefined) return { step: "sandboxEscape", outcome: "skip", reason: "not Bash with the sandbox on" }
  const plan = sandbox.plan
  if (plan._tag === "Refused") return { step: "sandboxEscape", outcome: "deny", reason: plan.message }
  if (plan._tag === "Unsandboxed" && plan.why === "requested") {
    return {
      step: "sandboxEscape",
      outcome: "ask",
      reason:
        "The command asks to run outside the OS sandbox (dangerouslyDisableSandbox): running it unsandboxed always needs approval"
    }
  }
  return pass(
    "sandboxEscape",
    plan._tag === "Sandboxed" ? "the command runs in the sandbox" : "the command is excluded from the sandbox"
  )
}

/** Allows a Bash command that runs inside the sandbox when `autoAllowBashIfSandboxed` is on (the default). */
export const sandboxed: Stage = (call) => {
  const sandbox = call.sandbox
  if (sandbox === undefined) return { step: "sandboxed", outcome: "skip", reason: "not Bash with the sandbox on" }
  if (sandbox.plan._tag !== "Sandboxed") return pass("sandboxed", "the command does not run in the sandbox")
  if (!sandbox.autoAllow) return pass("sandboxed", "sandbox.autoAllowBashIfSandboxed is off")
  return {
    step: "sandboxed",
    outcome: "allow",
    reason:
      "The command runs in the OS sandbox (sandbox.autoAllowBashIfSandboxed): it can write only in the writable paths and reach only the allowed hosts"
  }
}
