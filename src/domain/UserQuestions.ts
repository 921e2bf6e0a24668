/**
 * What the model asks the user directly, through the Approver port (docs/tools.md): multiple-choice questions
 * (AskUserQuestion) and approval of a plan (ExitPlanMode), with their answers and the texts the model reads back.
 */

/** One choice of a question. */
export interface QuestionOption {
  readonly label: string
  readonly description: string
  readonly preview?: string | undefined
}

/** One multiple-choice question (Claude Code's AskUserQuestion form). */
export interface Question {
  readonly question: string
  readonly header: string
  readonly options: ReadonlyArray<QuestionOption>
  readonly multiSelect: boolean
}

/** The questions of one AskUserQuestion call. */
export interface QuestionsRequest {
  readonly toolUseId: string
  readonly questions: ReadonlyArray<Question>
}

/** The user's answers, by question text (several choices of a multiSelect question joined with ", "), or a refusal. */
export type QuestionsAnswer =
  | {
      readonly _tag: "Answered"
      readonly answers: Readonly<Record<string, string>>
      /** Free-text notes the user added, by question text. */
      readonly notes?: Readonly<Record<string, string>> | undefined
    }
  | { readonly _tag: "Declined"; readonly message: string }

/** A plan the model asks the user to approve before it leaves plan mode. */
export interface PlanRequest {
  readonly toolUseId: string
  readonly plan: string
}

/** The user's verdict on a plan: approved (and the mode to go on in), or rejected with feedback. */
export type PlanAnswer =
  | { readonly _tag: "Approved"; readonly mode?: "default" | "acceptEdits" | undefined }
  | { readonly _tag: "Rejected"; readonly message: string }

/** The refusal when nobody can be asked (a headless run). */
export const noOneToAsk =
  "There is no user to answer questions in this session (it runs without a terminal or an approver that takes " +
  "questions). Do not wait for an answer: make a reasonable choice yourself, say which and why, and go on."

/** The refusal of a plan when nobody can approve it. */
export const noOneToApprove =
  "There is no user to approve the plan in this session, so plan mode stays on: you may keep reading and planning, " +
  "but you cannot make changes. Present the plan as your final answer instead."

/** The text the model reads for the user's answers. */
export const answersText = (answer: Extract<QuestionsAnswer, { _tag: "Answered" }>): string => {
  const lines = Object.entries(answer.answers).map(([question, choice]) => {
    const note = answer.notes?.[question]
    return `"${question}" = "${choice}"${note === undefined || note === "" ? "" : ` (user's note: ${note})`}`
  })
  return `The user answered: ${lines.join(", ")}. Go on with these answers in mind.`
}
