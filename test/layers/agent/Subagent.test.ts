import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Ref } from "effect"
import * as AgentDefinition from "../../../src/domain/AgentDefinition.js"
import * as AgentLoop from "../../../src/layers/agent/AgentLoop.js"
import * as Compaction from "../../../src/layers/agent/Compaction.js"
import * as HooksLive from "../../../src/layers/hooks/HooksLive.js"
import type { Message } from "../../../src/services/LanguageModel.js"
import { ScriptedLanguageModel, TestEngine } from "../../../src/testing/index.js"

const tempDir = () => Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-subagent-")))
const { text, toolUse, turn } = ScriptedLanguageModel

const helper: AgentDefinition.AgentDefinition = {
  name: "helper",
  description: "Helps",
  tools: ["Glob"],
  model: "haiku",
  prompt: "You are the helper.",
  source: "options"
}

describe("AgentLoop: sub-agents and compaction (library, scripted model)", () => {
  it.effect("AgentLoop options offer sub-agents; a scripted lane plays the sub-agent; usage is rolled up", () =>
    Effect.gen(function* () {
      const requests = yield* ScriptedLanguageModel.ScriptedRequests
      const result = yield* AgentLoop.run({
        prompt: "delegate",
        agents: { definitions: [AgentDefinition.generalPurpose, helper] }
      })
      expect(result).toMatchObject({ subtype: "success", result: "helper said: found it" })
      expect(result.usage.input_tokens).toBe(10 + 20 + 7)
      const all = yield* requests.all
      const sub = all.find((r) => ScriptedLanguageModel.systemText(r).includes("You are the helper."))!
      expect(sub.model).toBe("claude-haiku-4-5")
      expect(sub.tools.map((t) => t.name)).toEqual(["Glob"])
      expect(JSON.stringify(all[0]!.tools[0])).toContain("- helper: Helps (Tools: Glob)")
      expect(JSON.stringify(all[0]!.tools[0])).toContain("- general-purpose: ")
    }).pipe(
      Effect.provide(
        TestEngine.layer({
          cwd: tempDir(),
          script: [
            {
              ...turn(toolUse("Agent", { description: "d", prompt: "find it", subagent_type: "helper" })),
              usage: { input_tokens: 10 }
            },
            (request) => ({
              ...turn(
                text(
                  `helper said: ${JSON.stringify(request.messages.at(-1)).includes('"found it"') ? "found it" : "?"}`
                )
              ),
              usage: { input_tokens: 20 }
            })
          ],
          lanes: ScriptedLanguageModel.lanes({
            subagents: { "You are the helper.": [{ ...turn(text("found it")), usage: { input_tokens: 7 } }] }
          })
        })
      )
    )
  )

  it.effect(
    "an unknown subagent_type is refused with the available agents; a sub-agent cannot call a tool it lacks",
    () =>
      Effect.gen(function* () {
        const requests = yield* ScriptedLanguageModel.ScriptedRequests
        const result = yield* AgentLoop.run({ prompt: "go", agents: { definitions: [helper] } })
        expect(result).toMatchObject({ subtype: "success", result: "done" })
        const all = yield* requests.all
        const last = JSON.stringify(all.at(-1)!.messages)
        expect(last).toContain("Agent type 'nobody' not found. Available agents: helper")
        const sub = all.filter((r) => ScriptedLanguageModel.systemText(r).includes("You are the helper."))
        expect(JSON.stringify(sub.at(-1)!.messages)).toContain("No such tool available: Bash")
      }).pipe(
        Effect.provide(
          TestEngine.layer({
            cwd: tempDir(),
            allowAll: true,
            script: [
              turn(
                toolUse("Agent", { description: "d", prompt: "p", subagent_type: "nobody" }),
                toolUse("Agent", { description: "d", prompt: "p", subagent_type: "helper" })
              ),
              turn(text("done"))
            ],
            lanes: ScriptedLanguageModel.lanes({
              subagents: { "You are the helper.": [turn(toolUse("Bash", { command: "echo hi" })), turn(text("ok"))] }
            })
          })
        )
      )
  )

  it.effect("a sub-agent that ends without an answer (its turn limit) fails the Agent call with the reason", () =>
    Effect.gen(function* () {
      const requests = yield* ScriptedLanguageModel.ScriptedRequests
      const result = yield* AgentLoop.run({ prompt: "go", agents: { definitions: [helper], maxTurns: 1 } })
      expect(result).toMatchObject({ subtype: "success", result: "done" })
      const last = JSON.stringify((yield* requests.all).at(-1)!.messages)
      expect(last).toContain("The helper agent did not finish (error_max_turns): ")
      expect(last).toContain('"is_error":true')
    }).pipe(
      Effect.provide(
        TestEngine.layer({
          cwd: tempDir(),
          script: [
            turn(toolUse("Agent", { description: "d", prompt: "p", subagent_type: "helper" })),
            turn(text("done"))
          ],
          lanes: ScriptedLanguageModel.lanes({
            subagents: { "You are the helper.": [turn(toolUse("Glob", { pattern: "*" })), turn(text("never"))] }
          })
        })
      )
    )
  )

  it.effect("a sub-agent's end runs SubagentStop, not Stop; a blocking SubagentStop hook sends it on once", () => {
    const seen = Effect.runSync(Ref.make<ReadonlyArray<string>>([]))
    const note = (event: "Stop" | "SubagentStop") =>
      HooksLive.addHook(event, undefined, (input) =>
        Effect.map(
          Ref.updateAndGet(seen, (all) => [...all, event]),
          (all) =>
            event === "SubagentStop" && input.stop_hook_active === false && all.length === 1
              ? { decision: "block" as const, reason: "add the line count" }
              : undefined
        )
      )
    return Effect.gen(function* () {
      const requests = yield* ScriptedLanguageModel.ScriptedRequests
      const result = yield* AgentLoop.run({ prompt: "delegate", agents: { definitions: [helper] } })
      expect(result).toMatchObject({ subtype: "success", result: "parent done" })
      expect(yield* Ref.get(seen)).toEqual(["SubagentStop", "SubagentStop", "Stop"])
      const all = yield* requests.all
      const sub = all.filter((r) => ScriptedLanguageModel.systemText(r).includes("You are the helper."))
      expect(JSON.stringify(sub.at(-1)!.messages.at(-1))).toContain("add the line count")
      expect(JSON.stringify(all.at(-1)!.messages)).toContain("first answer, 12 lines")
    }).pipe(
      Effect.provide(
        TestEngine.layer({
          cwd: tempDir(),
          hooks: [note("Stop"), note("SubagentStop")],
          script: [
            turn(toolUse("Agent", { description: "d", prompt: "count", subagent_type: "helper" })),
            turn(text("parent done"))
          ],
          lanes: ScriptedLanguageModel.lanes({
            subagents: { "You are the helper.": [turn(text("first answer")), turn(text("first answer, 12 lines"))] }
          })
        })
      )
    )
  })

  it.effect(
    "auto-compaction in the library: the compaction lane's text becomes the summary, the todo list is kept",
    () =>
      Effect.gen(function* () {
        const requests = yield* ScriptedLanguageModel.ScriptedRequests
        const result = yield* AgentLoop.run({ prompt: "plan it", compaction: { threshold: 1000 } })
        expect(result).toMatchObject({ subtype: "success", result: "done" })
        const all = yield* requests.all
        expect(all.map((r) => ScriptedLanguageModel.isCompactionRequest(r))).toEqual([false, true, false])
        const opening = JSON.stringify(all[2]!.messages[0])
        expect(opening).toContain("THE SUMMARY")
        expect(opening).toContain("plan it")
        expect(opening).toContain("[~] Writing the plan")
      }).pipe(
        Effect.provide(
          TestEngine.layer({
            cwd: tempDir(),
            allowAll: true,
            script: [
              {
                ...turn(
                  toolUse("TodoWrite", {
                    todos: [{ content: "Write the plan", activeForm: "Writing the plan", status: "in_progress" }]
                  })
                ),
                usage: { input_tokens: 1500 }
              },
              turn(text("done"))
            ],
            lanes: ScriptedLanguageModel.lanes({ compaction: [turn(text("THE SUMMARY"))] })
          })
        )
      )
  )
})

describe("Compaction (pure parts)", () => {
  const result = (id: string, content: string): Message => ({
    role: "user",
    content: [{ type: "tool_result", tool_use_id: id, content }]
  })

  it("micro-compaction stubs old large results, naming the persisted file or else the transcript", () => {
    const big = "x".repeat(3000)
    const persisted = `<persisted-output>\nOutput too large (61.0KB). Full output saved to: /s/results/t1.txt\n\n${big}`
    const messages = [result("t1", persisted), result("t2", big), result("t3", "small"), result("t4", big)]
    const out = Compaction.microCompact(messages, { microKeepRecent: 1 }, "/s/transcripts/x.jsonl")
    const contents = out.map((m) => (m.content as ReadonlyArray<{ content: string }>)[0]!.content)
    expect(contents[0]).toBe(
      `[Old tool result cleared to save context (${persisted.length} characters); the full text is in /s/results/t1.txt. Read it again if you need it.]`
    )
    expect(contents[1]).toContain("the full text is in /s/transcripts/x.jsonl")
    expect(contents.slice(2)).toEqual(["small", big])
    expect(Compaction.microCompact(messages, { microMinChars: 0 }, "/t")).toBe(messages)
  })

  it("the short history of a conversation not waiting on results is one user message", () => {
    const messages: ReadonlyArray<Message> = [
      { role: "user", content: [{ type: "text", text: "first" }] },
      { role: "assistant", content: [{ type: "text", text: "ok" }] },
      { role: "user", content: "second request" }
    ]
    const short = Compaction.shortHistory(messages, "S", [])
    expect(short).toHaveLength(1)
    expect(JSON.stringify(short[0])).toContain("second request")
    expect(Compaction.thresholdOf(undefined)).toBe(160_000)
    expect(Compaction.thresholdOf({ contextWindow: 1000 })).toBe(800)
  })
})
