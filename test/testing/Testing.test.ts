import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Clock, Effect, Fiber, Queue, Schema, TestClock } from "effect"
import * as Texts from "../../src/domain/Texts.js"
import * as Tool from "../../src/domain/Tool.js"
import * as AgentLoop from "../../src/layers/agent/AgentLoop.js"
import { ToolExecutor } from "../../src/services/ToolExecutor.js"
import { ExecutorTest, runTool, ScriptedLanguageModel, TestEngine } from "../../src/testing/index.js"

const tempDir = () => Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-testing-"))

// A tool that reports when it starts (virtual ms) and takes `ms` of virtual time.
const makeTimed = (starts: Queue.Enqueue<readonly [string, number]>) =>
  Tool.make({
    name: "Timed",
    description: "Waits",
    input: Schema.Struct({ ms: Schema.Number }),
    output: Schema.String,
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    call: ({ ms }, ctx) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        yield* Queue.offer(starts, [ctx.toolUseId, now] as const)
        yield* Effect.sleep(ms)
        return `waited ${ms}`
      })
  })

describe("effect-armature/testing", () => {
  it.scoped("a scripted turn streams tool_use blocks over virtual time; calls start before the message ends", () => {
    const starts = Effect.runSync(Queue.unbounded<readonly [string, number]>())
    const script = [
      ScriptedLanguageModel.turn(
        ScriptedLanguageModel.text("Two waits."),
        ScriptedLanguageModel.toolUse("Timed", { ms: 1000 }, { id: "a", delay: "100 millis" }),
        ScriptedLanguageModel.toolUse("Timed", { ms: 1000 }, { id: "b", delay: "400 millis" })
      ),
      (request: { readonly messages: ReadonlyArray<unknown> }) =>
        ScriptedLanguageModel.turn(ScriptedLanguageModel.text(`saw ${request.messages.length} messages`))
    ]
    const engine = TestEngine.layer({
      cwd: tempDir(),
      builtins: false,
      tools: [makeTimed(starts)],
      allowedTools: ["Timed"],
      script
    })
    return Effect.gen(function* () {
      const requests = yield* ScriptedLanguageModel.ScriptedRequests
      const run = yield* Effect.fork(AgentLoop.run({ prompt: "wait twice" }))
      // The engine is built and the model asked: from here on, only virtual time passes.
      yield* requests.waitFor(1)
      yield* TestClock.adjust("99 millis")
      expect(yield* Queue.size(starts)).toBe(0)
      yield* TestClock.adjust("1 millis")
      // The first call starts when its block arrives (the clock stands still while we wait for it), while the
      // second block is still 400 ms away.
      expect(yield* Queue.take(starts)).toEqual(["a", 100])
      yield* TestClock.adjust("400 millis")
      expect(yield* Queue.take(starts)).toEqual(["b", 500])
      yield* TestClock.adjust("2 seconds")
      const result = yield* Fiber.join(run)
      expect(result).toMatchObject({ subtype: "success", num_turns: 2, result: "saw 3 messages" })
      expect((yield* requests.all).length).toBe(2)
    }).pipe(Effect.provide(engine))
  })

  it.effect("a request beyond the script fails with a ModelError naming it", () =>
    Effect.gen(function* () {
      const result = yield* AgentLoop.run({
        prompt: "hi",
        retry: { baseDelay: "1 millis", maxDelay: "1 millis", maxAttempts: 1 }
      }).pipe(Effect.provide(TestEngine.layer({ cwd: tempDir(), builtins: false, script: [] })))
      expect(result).toMatchObject({
        subtype: "error_during_execution",
        is_error: true,
        result: "API error: The script has 0 turn(s); request 1 has none"
      })
    })
  )

  it.effect("the engine's executor runs a batch with the rule policy: allowed, denied by default", () =>
    Effect.gen(function* () {
      const cwd = tempDir()
      Fs.writeFileSync(Path.join(cwd, "a.txt"), "alpha\n")
      const results = yield* Effect.flatMap(ToolExecutor, (executor) =>
        executor.runBatchCollect([
          { type: "tool_use", id: "r", name: "Read", input: { file_path: Path.join(cwd, "a.txt") } },
          { type: "tool_use", id: "w", name: "Write", input: { file_path: Path.join(cwd, "b.txt"), content: "x" } }
        ])
      ).pipe(Effect.provide(TestEngine.layer({ cwd })))
      expect(String(results[0].content)).toContain("alpha")
      expect(results[0].is_error).toBeUndefined()
      expect(results[1]).toMatchObject({ is_error: true })
      expect(String(results[1].content)).toContain("Permission to use Write has not been granted")
      expect(Fs.existsSync(Path.join(cwd, "b.txt"))).toBe(false)
    })
  )

  it.effect("ExecutorTest runs an application's tools through the preset's executor at exact virtual times", () =>
    Effect.gen(function* () {
      // a safe tool and an unsafe one that the user's interrupt cancels
      const wait = (name: string, safe: boolean) =>
        Tool.make({
          name,
          description: name,
          input: Schema.Struct({ ms: Schema.Number }),
          output: Schema.String,
          isReadOnly: () => safe,
          isConcurrencySafe: () => safe,
          interruptBehavior: "cancel",
          call: ({ ms }) => Effect.as(Effect.sleep(ms), `${name} ${ms}`)
        })
      const engine = TestEngine.layer({
        cwd: tempDir(),
        builtins: false,
        allowAll: true,
        tools: [wait("Look", true), wait("Change", false)]
      })
      const batch = [
        ExecutorTest.toolUse("a", "Look", { ms: 1000 }),
        ExecutorTest.toolUse("b", "Look", { ms: 2000 }),
        ExecutorTest.toolUse("c", "Change", { ms: 500 }),
        ExecutorTest.toolUse("d", "Look", { ms: 100 })
      ]
      const events = yield* ExecutorTest.run(batch).pipe(Effect.provide(engine))
      // a and b run together; the unsafe c waits for both and runs alone; d waits for c
      expect(["a", "b", "c", "d"].map((id) => ExecutorTest.stateAt(events, id, "executing"))).toEqual([
        0, 0, 2000, 2500
      ])
      expect(ExecutorTest.results(events).map((r) => [r.tool_use_id, r.content, r.t_ms])).toEqual([
        ["a", "Look 1000", 1000],
        ["b", "Look 2000", 2000],
        ["c", "Change 500", 2500],
        ["d", "Look 100", 2600]
      ])

      // interrupted at 1.5 s: b is cancelled while running, c and d never start
      const interrupted = yield* ExecutorTest.runControlled(batch, (control) => control.interrupt, "1500 millis").pipe(
        Effect.provide(engine)
      )
      expect(ExecutorTest.results(interrupted).map((r) => [r.tool_use_id, r.content])).toEqual([
        ["a", "Look 1000"],
        ["b", Texts.rejected],
        ["c", Texts.alreadyCancelled],
        ["d", Texts.alreadyCancelled]
      ])
    })
  )

  it.effect("runTool decodes the input, runs the handler and renders the result", () =>
    Effect.gen(function* () {
      const starts = yield* Queue.unbounded<readonly [string, number]>()
      const fiber = yield* Effect.fork(runTool(makeTimed(starts), { ms: 50 }, { toolUseId: "t1" }))
      yield* TestClock.adjust("50 millis")
      const run = yield* Fiber.join(fiber)
      expect(run.output).toBe("waited 50")
      expect(run.content).toBe("waited 50")
      expect(yield* Queue.takeAll(starts)).toEqual(Chunk.make(["t1", 0]))
      const bad = yield* Effect.flip(runTool(makeTimed(starts), { ms: "soon" }))
      expect(bad._tag).toBe("ParseError")
    })
  )
})
