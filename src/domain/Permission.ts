/**
 * Permission decisions and their traces (docs/permissions.md). Rule parsing and matching live in `PermissionRule.ts`.
 */

/** The permission modes, Claude Code's (docs/permissions.md). */
export type PermissionMode = "default" | "acceptEdits" | "plan" | "bypassPermissions" | "dontAsk"

/** Every permission mode, in the order the CLI lists them. */
export const permissionModes: ReadonlyArray<PermissionMode> = [
  "default",
  "acceptEdits",
  "plan",
  "bypassPermissions",
  "dontAsk"
]

/** The outcome of a permission decision. */
export type PermissionBehavior = "allow" | "deny" | "ask"

/**
 * A tool's own permission opinion (a step of the pipeline in docs/permissions.md); `passthrough` leaves the decision to
 * later steps.
 */
export type PermissionOpinion =
  | { readonly behavior: "passthrough" }
  | {
      readonly behavior: PermissionBehavior
      readonly reason: string
      readonly rule?: string | undefined
      readonly source?: string | undefined
    }

/** The opinion of a tool that has no opinion. */
export const passthrough: PermissionOpinion = { behavior: "passthrough" }

/** One step of a decision's explanation (what `armature permissions check` prints). */
export interface TraceStep {
  readonly step: string
  readonly outcome: PermissionBehavior | "passthrough" | "skip"
  readonly reason: string
  readonly rule?: string | undefined
  readonly source?: string | undefined
}

/** A permission decision with the rule that made it and a trace of every step consulted. */
export interface PermissionDecision {
  readonly behavior: PermissionBehavior
  /** Text sent to the model when the call does not run. */
  readonly message: string
  readonly reason: string
  readonly rule: string | null
  readonly source: string | null
  readonly trace: ReadonlyArray<TraceStep>
}
