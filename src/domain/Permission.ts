/**
 * Permission decisions and their traces (SPEC §5). Rule parsing and matching live in `PermissionRule.ts`.
 */

/** The permission modes of SPEC §5.3. */
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

/** A tool's own permission opinion (step 3 of SPEC §5.4); `passthrough` leaves the decision to later steps. */
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

/** One step of a decision's explanation (SPEC §5.6). */
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
