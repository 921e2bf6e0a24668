/**
 * AskUserQuestion: the model puts one to four multiple-choice questions to the user (Claude Code's input) through
 * the Approver port — the terminal approver asks them, a library's approver answers as it likes, and with nobody to
 * ask (headless) the call fails with a text telling the model to decide by itself. See docs/tools.md.
 */
import { Effect, Option, Schema } from "effect"
import { ToolValidationError } from "../../domain/Errors.js"
import * as Tool from "../../domain/Tool.js"
import * as UserQuestions from "../../domain/UserQuestions.js"
import { Approver } from "../../services/Approver.js"
import * as ToolRegistryLive from "../registry/ToolRegistryLive.js"

/** The tool's name. */
export const name = "AskUserQuestion"

const Choice = Schema.Struct({
  label: Schema.String.annotations({
    description: "The choice as the user sees it: short (1-5 words) and distinct from the other choices."
  }),
  description: Schema.String.annotations({ description: "What choosing it means, or what follows from it." }),
  preview: Schema.optional(
    Schema.String.annotations({ description: "Optional content shown with the choice (a mockup, a code snippet)." })
  )
})

const Question = Schema.Struct({
  question: Schema.String.annotations({
    description: 'The whole question, clear and ending with "?", e.g. "Which date library should we use?"'
  }),
  header: Schema.String.annotations({
    description: 'A very short label for it (12 characters at most), e.g. "Library".'
  }),
  options: Schema.Array(Choice).pipe(Schema.minItems(2), Schema.maxItems(4)).annotations({
    description:
      "2 to 4 choices, mutually exclusive unless multiSelect. Do not add an 'Other' choice: the user can always answer in their own words."
  }),
  multiSelect: Schema.optional(
    Schema.Boolean.annotations({ description: "true lets the user pick several choices (default false)." })
  )
})

const Input = Schema.Struct({
  questions: Schema.Array(Question)
    .pipe(Schema.minItems(1), Schema.maxItems(4))
    .annotations({ description: "The questions to ask (1 to 4)." })
})

/** AskUserQuestion's decoded input. */
export type Input = typeof Input.Type

const description = `Asks the user one to four multiple-choice questions and returns their answers.

Use it when you need the user's decision to go on and cannot make it well yourself: an ambiguous request, a choice
between approaches with real trade-offs, a preference only they know. Do not use it for things you can find out by
reading the code or running a command, nor to ask for permission to use a tool (that is asked for you).

Each question has a short header, 2 to 4 choices with a label and a description, and multiSelect when several
choices may be picked. The user can always answer in their own words instead of a choice.

Result: the answers, by question. When there is no user to ask (a run without a terminal), the call fails: then make
the choice yourself, say which and why, and go on.`

const duplicate = (values: ReadonlyArray<string>): string | undefined =>
  values.find((value, i) => values.indexOf(value) !== i)

/** No one can answer questions here (a headless session, or an approver that cannot ask). */
export class NoOneToAsk extends Schema.TaggedError<NoOneToAsk>()("NoOneToAsk", { message: Schema.String }) {}

/** The user declined to answer. */
export class QuestionsDeclined extends Schema.TaggedError<QuestionsDeclined>()("QuestionsDeclined", {
  message: Schema.String
}) {}

/** What AskUserQuestion fails with. */
export const Failure = Schema.Union(NoOneToAsk, QuestionsDeclined)

/** Makes AskUserQuestion over the session's Approver. */
export const make = Effect.gen(function* () {
  // without an Approver in the context (a bare tool set), nobody can be asked, as when headless
  const approver = Option.getOrUndefined(yield* Effect.serviceOption(Approver))
  return yield* Tool.make({
    name,
    description,
    input: Input,
    output: Schema.String,
    category: "workflow",
    searchHint: "ask user question choice clarify decide",
    isReadOnly: () => true,
    interruptBehavior: "cancel",
    checkPermissions: () =>
      Effect.succeed({ behavior: "allow", reason: "asking the user is the user's own interaction" } as const),
    summarize: (input) => input.questions.map((q) => q.header).join(", "),
    validate: (input) => {
      const question = duplicate(input.questions.map((q) => q.question))
      if (question !== undefined) {
        return Effect.fail(new ToolValidationError({ message: `The question "${question}" is asked twice.` }))
      }
      for (const q of input.questions) {
        const label = duplicate(q.options.map((o) => o.label))
        if (label !== undefined) {
          return Effect.fail(
            new ToolValidationError({ message: `The question "${q.question}" has the choice "${label}" twice.` })
          )
        }
      }
      return Effect.void
    },
    failure: Failure,
    call: (input, ctx) =>
      Effect.gen(function* () {
        if (approver?.askQuestions === undefined) {
          return yield* new NoOneToAsk({ message: UserQuestions.noOneToAsk })
        }
        const answer = yield* approver.askQuestions({
          toolUseId: ctx.toolUseId,
          questions: input.questions.map((q) => ({ ...q, multiSelect: q.multiSelect ?? false }))
        })
        if (answer._tag === "Declined") return yield* new QuestionsDeclined({ message: answer.message })
        return UserQuestions.answersText(answer)
      })
  })
})

/** Registers AskUserQuestion; requires ToolRegistry; uses the Approver when there is one. */
export const layer = ToolRegistryLive.register(make)
