/**
 * Who answers "ask": a terminal, a callback, or nobody (headless). See docs/library.md, "Who answers \"ask\"".
 */
import { Context, Effect, Layer } from "effect"
import type { PermissionDecision } from "../domain/Permission.js"
import type { PlanAnswer, PlanRequest, QuestionsAnswer, QuestionsRequest } from "../domain/UserQuestions.js"
import type {
  ElicitationAnswer,
  ElicitationRequest,
  ProjectServerAnswer,
  ProjectServerRequest,
  SamplingRequest
} from "./McpClients.js"
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
    /**
     * Answers an MCP server's form (`elicitation/create`). Optional: an approver without it declines every form.
     * See docs/mcp.md.
     */
    readonly elicit?: ((request: ElicitationRequest) => Effect.Effect<ElicitationAnswer>) | undefined
    /**
     * Whether an MCP server whose policy is "ask" may use the language model for this request. Optional: an
     * approver without it refuses every such request.
     */
    readonly approveSampling?: ((request: SamplingRequest) => Effect.Effect<boolean>) | undefined
    /**
     * Whether an unapproved server of the project's `.mcp.json` may start. Optional: an approver without it leaves
     * such servers unstarted (with a one-line notice), as when headless.
     */
    readonly approveProjectServer?: ((request: ProjectServerRequest) => Effect.Effect<ProjectServerAnswer>) | undefined
    /**
     * Puts the model's multiple-choice questions to the user (the AskUserQuestion tool). Optional: an approver
     * without it has no one to ask, and the call returns an error the model can read.
     */
    readonly askQuestions?: ((request: QuestionsRequest) => Effect.Effect<QuestionsAnswer>) | undefined
    /**
     * Asks the user to approve the model's plan, which ends plan mode (the ExitPlanMode tool). Optional: an approver
     * without it refuses every plan, and plan mode stays on.
     */
    readonly approvePlan?: ((request: PlanRequest) => Effect.Effect<PlanAnswer>) | undefined
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
