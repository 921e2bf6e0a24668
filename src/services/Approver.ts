/**
 * Who answers "ask": a terminal, a callback, or nobody (headless). See docs/library.md, "Who answers \"ask\"".
 */
import { Context, Effect, Layer } from "effect"
import type { PermissionDecision } from "../domain/Permission.js"
import type { PermissionRequest } from "./PermissionPolicy.js"

/** The answer to an ask. */
export type Approval =
  | { readonly _tag: "Approved"; readonly updatedInput?: unknown }
  | { readonly _tag: "Rejected"; readonly message: string }

/** The port. */
export class Approver extends Context.Tag("armature/Approver")<
  Approver,
  {
    readonly approve: (request: PermissionRequest, decision: PermissionDecision) => Effect.Effect<Approval>
  }
>() {}

/** The refusal text when nobody can be asked (a headless run): names the tool and why it asked. */
export const headlessMessage = (toolName: string, reason: string): string =>
  `Permission to use ${toolName} has not been granted. ${reason}`.trimEnd()

/** No one to ask: every ask is refused with the headless text. */
export const headless = Layer.succeed(
  Approver,
  Approver.of({
    approve: (request, decision) =>
      Effect.succeed({ _tag: "Rejected", message: headlessMessage(request.tool.name, decision.reason) })
  })
)
