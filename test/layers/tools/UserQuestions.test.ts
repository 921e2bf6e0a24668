import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { PassThrough, Writable } from "node:stream"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as UserQuestions from "../../../src/domain/UserQuestions.js"
import * as AgentLoop from "../../../src/layers/agent/AgentLoop.js"
import * as TerminalApprover from "../../../src/layers/permissions/TerminalApprover.js"
import * as TerminalQuestions from "../../../src/layers/permissions/TerminalQuestions.js"
import type { ModelRequest } from "../../../src/services/LanguageModel.js"
import { ScriptedLanguageModel, TestEngine } from "../../../src/testing/index.js"

const { text, toolUse, turn } = ScriptedLanguageModel
const tempDir = () => Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-questions-")))
const lastText = (request: ModelRequest): string => JSON.stringify(request.messages.at(-1))

const question = {
  question: "Which date library should we use?",
  header: "Library",
  options: [
    { label: "date-fns", description: "Functions, tree-shakable" },
    { label: "Luxon", description: "Immutable DateTime objects" }
  ],
  multiSelect: false
}

/** A terminal whose user types `lines`; what it was shown is collected in `shown`. */
const terminal = (lines: string) => {
  const input = new PassThrough()
  input.end(lines)
  const shown: Array<string> = []
  const output = new Writable({
    write(chunk, _encoding, done) {
      shown.push(String(chunk))
      done()
    }
  })
  return { approver: TerminalApprover.layerWith({ input, output }), shown }
}

describe("AskUserQuestion and ExitPlanMode through the Approver (agent loop, scripted model)", () => {
  it.effect("AskUserQuestion headless: an error result the model can read, and the run goes on", () =>
    Effect.gen(function* () {
      const requests = yield* ScriptedLanguageModel.ScriptedRequests
      const result = yield* AgentLoop.run({ prompt: "pick a library" })
      expect(result).toMatchObject({ subtype: "success", result: "chose date-fns myself" })
      const answer = (yield* requests.all)[1]!.messages.at(-1)!
      expect(answer.content).toEqual([
        expect.objectContaining({
          type: "tool_result",
          is_error: true,
          content: expect.stringContaining(UserQuestions.noOneToAsk)
        })
      ])
    }).pipe(
      Effect.provide(
        TestEngine.layer({
          cwd: tempDir(),
          script: [turn(toolUse("AskUserQuestion", { questions: [question] })), turn(text("chose date-fns myself"))]
        })
      )
    )
  )

  it.effect("AskUserQuestion on the terminal: the choice by number, or a free answer, comes back by question", () => {
    const { approver, shown } = terminal("2\nwhatever is smallest\n")
    const second = { ...question, question: "Which one is second?", header: "Second" }
    return Effect.gen(function* () {
      const requests = yield* ScriptedLanguageModel.ScriptedRequests
      yield* AgentLoop.run({ prompt: "pick" })
      const answer = lastText((yield* requests.all)[1]!)
      expect(answer).toContain('\\"Which date library should we use?\\" = \\"Luxon\\"')
      expect(answer).toContain('\\"Which one is second?\\" = \\"whatever is smallest\\"')
      expect(shown.join("")).toContain("  2. Luxon — Immutable DateTime objects")
    }).pipe(
      Effect.provide(
        TestEngine.layer({
          cwd: tempDir(),
          approver,
          script: [turn(toolUse("AskUserQuestion", { questions: [question, second] })), turn(text("ok"))]
        })
      )
    )
  })

  it.effect("AskUserQuestion input is Claude Code's: 2-4 choices, unique questions; others are refused", () =>
    Effect.gen(function* () {
      const requests = yield* ScriptedLanguageModel.ScriptedRequests
      yield* AgentLoop.run({ prompt: "ask" })
      const all = yield* requests.all
      expect(lastText(all[1]!)).toContain("InputValidationError")
      expect(lastText(all[2]!)).toContain("is asked twice")
    }).pipe(
      Effect.provide(
        TestEngine.layer({
          cwd: tempDir(),
          script: [
            turn(toolUse("AskUserQuestion", { questions: [{ ...question, options: [question.options[0]] }] })),
            turn(toolUse("AskUserQuestion", { questions: [question, question] })),
            turn(text("ok"))
          ]
        })
      )
    )
  )

  it.effect("ExitPlanMode headless: refused, plan mode stays on (a write is still denied)", () => {
    const dir = tempDir()
    const file = Path.join(dir, "out.txt")
    return Effect.gen(function* () {
      const requests = yield* ScriptedLanguageModel.ScriptedRequests
      yield* AgentLoop.run({ prompt: "plan" })
      const all = yield* requests.all
      expect(lastText(all[1]!)).toContain(UserQuestions.noOneToApprove)
      expect(lastText(all[2]!)).toContain("Plan mode")
      expect(Fs.existsSync(file)).toBe(false)
    }).pipe(
      Effect.provide(
        TestEngine.layer({
          cwd: dir,
          permissionMode: "plan",
          script: [
            turn(toolUse("ExitPlanMode", { plan: "1. write out.txt" })),
            turn(toolUse("Write", { file_path: file, content: "x" })),
            turn(text("done"))
          ]
        })
      )
    )
  })

  it.effect(
    "ExitPlanMode approved on the terminal ends plan mode: the write that follows is asked for and runs",
    () => {
      const dir = tempDir()
      const file = Path.join(dir, "out.txt")
      const { approver, shown } = terminal("y\ny\n")
      return Effect.gen(function* () {
        const requests = yield* ScriptedLanguageModel.ScriptedRequests
        yield* AgentLoop.run({ prompt: "plan" })
        const all = yield* requests.all
        expect(lastText(all[1]!)).toContain("Plan mode is over: the session is now in default mode")
        expect(Fs.readFileSync(file, "utf8")).toBe("x")
        expect(shown.join("")).toContain("The model's plan:\n1. write out.txt\n\nIt will need to:\n- Bash: run tests")
        // once out of plan mode, a second ExitPlanMode is refused
        expect(lastText(all[3]!)).toContain("You are not in plan mode")
      }).pipe(
        Effect.provide(
          TestEngine.layer({
            cwd: dir,
            permissionMode: "plan",
            approver,
            script: [
              turn(
                toolUse("ExitPlanMode", {
                  plan: "1. write out.txt",
                  allowedPrompts: [{ tool: "Bash", prompt: "run tests" }]
                })
              ),
              turn(toolUse("Write", { file_path: file, content: "x" })),
              turn(toolUse("ExitPlanMode", { plan: "again" })),
              turn(text("done"))
            ]
          })
        )
      )
    }
  )

  it("terminal answers: numbers for multiSelect, out-of-range numbers are asked again", () => {
    const multi = { ...question, multiSelect: true }
    expect(TerminalQuestions.parseChoice(multi, "2, 1")).toBe("Luxon, date-fns")
    expect(TerminalQuestions.parseChoice(question, "1 2")).toBeUndefined()
    expect(TerminalQuestions.parseChoice(question, "7")).toBeUndefined()
    expect(TerminalQuestions.parseChoice(question, "  ")).toBeUndefined()
  })
})
