/**
 * ExitPlanMode: in plan mode, the model presents its plan and asks to start carrying it out. Plan mode ends only
 * when the user approves the plan through the Approver port (the session then goes on in the mode the user chose,
 * default otherwise); a rejected plan, or one nobody can approve (headless), leaves plan mode on. See docs/tools.md.
 */
import { Effect, Option, Schema } from "effect"
import { ToolValidationError } from "../../domain/Errors.js"
import * as SessionMode from "../../domain/SessionMode.js"
import * as Tool from "../../domain/Tool.js"
import * as UserQuestions from "../../domain/UserQuestions.js"
import { Approver } from "../../services/Approver.js"
import * as ToolRegistryLive from "../registry/ToolRegistryLive.js"

/** The tool's name. */
export const name = "ExitPlanMode"

const Input = Schema.Struct({
  plan: Schema.optional(
    Schema.String.annotations({
      description: "The plan to carry out, as you want the user to read it (Markdown; concise, step by step)."
    })
  ),
  allowedPrompts: Schema.optional(
    Schema.Array(
      Schema.Struct({
        tool: Schema.Literal("Bash").annotations({ description: "The tool this applies to." }),
        prompt: Schema.String.annotations({
          description: 'What kind of action it is, e.g. "run tests", "install dependencies".'
        })
      })
    ).annotations({ description: "The kinds of commands the plan will need to run, shown to the user with the plan." })
  )
})

/** ExitPlanMode's decoded input. */
export type Input = typeof Input.Type

const description = `Presents your plan to the user and asks to leave plan mode, so that you can start carrying it out.

Use it only in plan mode, once you have finished planning a task that changes things (code, files, commands with
effects) and are ready to start. Do not use it for research or questions about the code: answer those directly.
If something is unclear, resolve it first (read more, or use AskUserQuestion), then present the plan.

The user approves or rejects the plan. Approved: plan mode ends, and your calls are checked in the ordinary way
again. Rejected: plan mode stays on; the result gives the user's feedback, so revise the plan and present it again.
When there is no user to approve it (a run without a terminal), plan mode stays on: give the plan as your answer.`

/** The text of a plan for the user: the plan, then the kinds of commands it will run. */
const planText = (input: Input): string => {
  const commands = (input.allowedPrompts ?? []).map((p) => `- ${p.tool}: ${p.prompt}`)
  return [input.plan ?? "", ...(commands.length > 0 ? ["", "It will need to:", ...commands] : [])].join("\n").trim()
}

/** No one can approve a plan here (a headless session, or an approver that cannot). */
export class NoOneToApprove extends Schema.TaggedError<NoOneToApprove>()("NoOneToApprove", {
  message: Schema.String
}) {}

/** The user did not approve the plan; plan mode stays on. */
export class PlanRejected extends Schema.TaggedError<PlanRejected>()("PlanRejected", { message: Schema.String }) {}

/** What ExitPlanMode fails with. */
export const Failure = Schema.Union(NoOneToApprove, PlanRejected)

/** Makes ExitPlanMode over the session's Approver. */
export const make = Effect.gen(function* () {
  // without an Approver in the context (a bare tool set), nobody can be asked, as when headless
  const approver = Option.getOrUndefined(yield* Effect.serviceOption(Approver))
  return yield* Tool.make({
    name,
    description,
    input: Input,
    output: Schema.String,
    category: "plan",
    searchHint: "plan mode exit approve start implementing",
    // it changes nothing itself: the user's approval is what ends plan mode
    isReadOnly: () => true,
    checkPermissions: () =>
      Effect.succeed({ behavior: "allow", reason: "the plan is put to the user by the call itself" } as const),
    summarize: (input) => (input.plan ?? "").split("\n")[0] ?? "",
    validate: (_input, ctx) =>
      Effect.flatMap(SessionMode.effectiveMode(ctx.state, ctx.permissionMode), (mode) =>
        mode === "plan"
          ? Effect.void
          : Effect.fail(
              new ToolValidationError({
                message: `You are not in plan mode (the session is in ${mode} mode): there is nothing to exit. Go on with the task.`
              })
            )
      ),
    failure: Failure,
    call: (input, ctx) =>
      Effect.gen(function* () {
        if (approver?.approvePlan === undefined) {
          return yield* new NoOneToApprove({ message: UserQuestions.noOneToApprove })
        }
        const answer = yield* approver.approvePlan({ toolUseId: ctx.toolUseId, plan: planText(input) })
        if (answer._tag === "Rejected") {
          return yield* new PlanRejected({
            message: `The user did not approve the plan, so plan mode stays on. ${answer.message}`.trim()
          })
        }
        const mode = answer.mode ?? "default"
        yield* ctx.state.set(SessionMode.sessionModeKey, mode)
        return `The user approved your plan. Plan mode is over: the session is now in ${mode} mode. Start carrying out the plan.`
      })
  })
})

/** Registers ExitPlanMode; requires ToolRegistry; uses the Approver when there is one. */
export const layer = ToolRegistryLive.register(make)
