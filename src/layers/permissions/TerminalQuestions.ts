/**
 * The terminal approver's questions from the model itself: AskUserQuestion's multiple-choice questions (a choice by
 * number, several numbers for multiSelect, or an answer in the user's own words) and ExitPlanMode's plan (approve,
 * approve and accept edits, or reject with feedback). Text from the model is shown with control characters made
 * visible. See docs/tools.md.
 */
import { Effect, Option } from "effect"
import type {
  PlanAnswer,
  PlanRequest,
  Question,
  QuestionsAnswer,
  QuestionsRequest
} from "../../domain/UserQuestions.js"
import { type Io, printable } from "./TerminalForms.js"

const attempts = 3

/** The prompt of one question: header, question, numbered choices, and how to answer. */
export const questionText = (q: Question): string => {
  const choices = q.options.map(
    (o, i) =>
      `  ${i + 1}. ${printable(o.label)} — ${printable(o.description)}${o.preview === undefined ? "" : `\n     ${printable(o.preview).replace(/\n/g, "\n     ")}`}`
  )
  const how = q.multiSelect
    ? "Answer with the numbers of your choices (e.g. 1,3), or in your own words: "
    : "Answer with a number, or in your own words: "
  return `[${printable(q.header)}] ${printable(q.question)}\n${choices.join("\n")}\n${how}`
}

/** The answer a line gives to a question: the chosen labels, or the line itself as a free answer. */
export const parseChoice = (q: Question, line: string): string | undefined => {
  const text = line.trim()
  if (text === "") return undefined
  const numbers = text.split(/[\s,]+/)
  if (numbers.every((n) => /^\d+$/.test(n))) {
    const picked = numbers.map((n) => q.options[Number(n) - 1])
    if (picked.some((o) => o === undefined) || (!q.multiSelect && picked.length > 1)) return undefined
    return [...new Set(picked.map((o) => o!.label))].join(", ")
  }
  return text
}

/** Asks the questions one by one; a closed input or no usable answer declines them all. */
export const askQuestions = (io: Io, request: QuestionsRequest): Effect.Effect<QuestionsAnswer> =>
  Effect.gen(function* () {
    const answers: Record<string, string> = {}
    yield* io.write("The model asks:\n")
    for (const q of request.questions) {
      let answer: string | undefined
      for (let attempt = 0; attempt < attempts && answer === undefined; attempt++) {
        yield* io.write(attempt === 0 ? questionText(q) : "Please answer with a listed number or in words: ")
        const line = yield* io.read
        if (Option.isNone(line)) {
          return { _tag: "Declined", message: "The user gave no answer (the input was closed)." } as const
        }
        answer = parseChoice(q, line.value)
      }
      if (answer === undefined) {
        return { _tag: "Declined", message: `The user gave no usable answer to "${q.question}".` } as const
      }
      answers[q.question] = answer
    }
    return { _tag: "Answered", answers } as const
  })

/** Shows the plan and asks for a verdict: y (approve), a (approve, accept edits), n and feedback (reject). */
export const approvePlan = (io: Io, request: PlanRequest): Effect.Effect<PlanAnswer> =>
  Effect.gen(function* () {
    yield* io.write(`The model's plan:\n${printable(request.plan)}\n`)
    for (let attempt = 0; attempt < attempts; attempt++) {
      yield* io.write(
        attempt === 0
          ? "Approve it and leave plan mode? [y] yes  [a] yes, and accept edits  [n] no (add what to change) "
          : "Please answer y, a or n: "
      )
      const line = yield* io.read
      if (Option.isNone(line)) return { _tag: "Rejected", message: "No answer (the input was closed)." } as const
      const text = line.value.trim()
      const word = text.split(/\s+/)[0]?.toLowerCase() ?? ""
      if (word === "y" || word === "yes") return { _tag: "Approved", mode: "default" } as const
      if (word === "a") return { _tag: "Approved", mode: "acceptEdits" } as const
      if (word === "n" || word === "no") {
        const feedback = text.slice(text.split(/\s+/)[0]!.length).trim()
        return { _tag: "Rejected", message: feedback === "" ? "" : `The user's feedback: ${feedback}` } as const
      }
    }
    return { _tag: "Rejected", message: "No clear answer." } as const
  })
