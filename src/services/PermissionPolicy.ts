/**
 * The permission pipeline's port (docs/permissions.md, "The pipeline"): decides whether a call may run, with a trace.
 */
import { Context, Effect, Layer } from "effect"
import type { PermissionBehavior, PermissionDecision, PermissionMode } from "../domain/Permission.js"
import type * as Tool from "../domain/Tool.js"

/** What the policy is asked about one call. */
export interface PermissionRequest {
  readonly tool: Tool.Any
  /** The decoded input (after any PreToolUse `updatedInput`). */
  readonly input: unknown
  readonly toolUseId: string
  readonly context: Tool.ToolContext
  /** A PreToolUse hook's decision, if any (docs/permissions.md explains where it applies). */
  readonly hookDecision?: PermissionBehavior | undefined
}

/** The port. */
export class PermissionPolicy extends Context.Tag("armature/PermissionPolicy")<
  PermissionPolicy,
  {
    readonly mode: PermissionMode
    readonly decide: (request: PermissionRequest) => Effect.Effect<PermissionDecision>
    /** Whether a tool is denied outright (then it is hidden from the pool). */
    readonly isToolDenied: (tool: Tool.Any) => boolean
  }
>() {}

/** allowAll's decision, the same for every call: made once. */
const allowed: Effect.Effect<PermissionDecision> = Effect.succeed({
  behavior: "allow",
  message: "",
  reason: "every call is allowed (allowAll policy)",
  rule: null,
  source: null,
  trace: [{ step: "allowAll", outcome: "allow", reason: "every call is allowed (allowAll policy)" }]
})

/** A policy that allows every call: for tests and for applications that decide elsewhere. */
export const allowAll = Layer.succeed(
  PermissionPolicy,
  PermissionPolicy.of({ mode: "bypassPermissions", decide: () => allowed, isToolDenied: () => false })
)
