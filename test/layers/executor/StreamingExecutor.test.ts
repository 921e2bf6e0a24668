import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Fiber, Layer, Queue, Ref, Stream, TestClock } from "effect"
import type { ToolCall } from "../../../src/domain/ExecutorEvent.js"
import { emptyOutcome } from "../../../src/domain/Hook.js"
import * as Texts from "../../../src/domain/Texts.js"
import * as ResultCacheLive from "../../../src/layers/results/ResultCacheLive.js"
import * as Hooks from "../../../src/services/Hooks.js"
import { Session } from "../../../src/services/Session.js"
import { makeControl, ToolExecutor } from "../../../src/services/ToolExecutor.js"
import { executorLayer, results, runAll, runControlled, stateAt, traces, use } from "./ExecutorHarness.js"

const startTimes = (events: Parameters<typeof stateAt>[0], ids: ReadonlyArray<string>) =>
  ids.map((id) => stateAt(events, id, "executing"))

describe("StreamingExecutor", () => {
  it.effect("runs the seed 000 example as {a,b}, then Bash, then c", () =>
    Effect.gen(function* () {
      const events = yield* runAll([
        use("a", "Read", { ms: 1000 }),
        use("b", "Read", { ms: 2000 }),
        use("bash", "Bash", { ms: 3000 }),
        use("c", "Read", { ms: 1000 })
      ])
      expect(startTimes(events, ["a", "b", "bash", "c"])).toEqual([0, 0, 2000, 5000])
      expect(results(events).map((r) => [r.tool_use_id, r.t_ms])).toEqual([
        ["a", 1000],
        ["b", 2000],
        ["bash", 5000],
        ["c", 6000]
      ])
    }).pipe(Effect.provide(executorLayer()))
  )

  it.effect("a queued unsafe call blocks later safe calls", () =>
    Effect.gen(function* () {
      const events = yield* runAll([
        use("r1", "Read", { ms: 3000 }),
        use("w", "Write", { ms: 1000 }),
        use("r2", "Read", { ms: 1000 })
      ])
      expect(startTimes(events, ["r1", "w", "r2"])).toEqual([0, 3000, 4000])
    }).pipe(Effect.provide(executorLayer()))
  )

  it.effect("never runs more than maxConcurrency calls", () =>
    Effect.gen(function* () {
      const calls = Array.from({ length: 12 }, (_, i) => use(`r${i}`, "Read", { ms: 1000 + i }))
      const events = yield* runAll(calls)
      expect(
        startTimes(
          events,
          calls.map((c) => c.id)
        )
      ).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1000, 1001])
    }).pipe(Effect.provide(executorLayer({ maxConcurrency: 10 })))
  )

  it.effect("the cap comes from the per-execution option too", () =>
    Effect.gen(function* () {
      const calls = Array.from({ length: 3 }, (_, i) => use(`r${i}`, "Read", { ms: 1000 }))
      const events = yield* runAll(calls, { maxConcurrency: 1 })
      expect(startTimes(events, ["r0", "r1", "r2"])).toEqual([0, 1000, 2000])
    }).pipe(Effect.provide(executorLayer()))
  )

  it.effect("a fast later result waits for a slow earlier one", () =>
    Effect.gen(function* () {
      const events = yield* runAll([use("slow", "Read", { ms: 3000 }), use("fast", "Read", { ms: 1000 })])
      expect(stateAt(events, "fast", "completed")).toBe(1000)
      expect(stateAt(events, "fast", "yielded")).toBe(3000)
      expect(results(events).map((r) => r.tool_use_id)).toEqual(["slow", "fast"])
    }).pipe(Effect.provide(executorLayer()))
  )

  it.effect("progress arrives at once, before earlier results", () =>
    Effect.gen(function* () {
      const events = yield* runAll([
        use("slow", "Read", { ms: 5000 }),
        { type: "tool_use", id: "sleep", name: "Sleep", input: { duration_ms: 3000 } }
      ])
      const progress = events.filter((e) => e.type === "progress")
      expect(progress.map((p) => [p.tool_use_id, p.t_ms, p.type === "progress" ? p.data : null])).toEqual([
        ["sleep", 1000, { elapsed_ms: 1000, remaining_ms: 2000 }],
        ["sleep", 2000, { elapsed_ms: 2000, remaining_ms: 1000 }]
      ])
      const firstResult = events.findIndex((e) => e.type === "tool_result")
      expect(events.indexOf(progress[1])).toBeLessThan(firstResult)
      expect(results(events).map((r) => [r.tool_use_id, r.t_ms])).toEqual([
        ["slow", 5000],
        ["sleep", 5000]
      ])
    }).pipe(Effect.provide(executorLayer()))
  )

  it.effect("cascade: a failing Bash cancels its queued siblings; they never start", () =>
    Effect.gen(function* () {
      const events = yield* runAll([
        use("bash", "Bash", { ms: 1000, fail: true, output: "make test" }),
        use("w", "Write", { ms: 1000 }),
        use("r", "Read", { ms: 1000 })
      ])
      const [bash, w, r] = results(events)
      expect(bash.content).toBe("Bash failed\nboom")
      expect(w.content).toBe(Texts.siblingErrored("Bash", "make test"))
      expect(w.content).toBe("<tool_use_error>Cancelled: parallel tool call Bash(make test) errored</tool_use_error>")
      expect(r.is_error).toBe(true)
      expect(stateAt(events, "w", "executing")).toBeUndefined()
      expect(stateAt(events, "r", "executing")).toBeUndefined()
    }).pipe(Effect.provide(executorLayer()))
  )

  it.effect("cascade with any-error interrupts running siblings, whose finalizers run first", () =>
    Effect.gen(function* () {
      const events = yield* runAll([use("a", "Read", { ms: 1000, fail: true }), use("b", "Read", { ms: 5000 })], {
        cancellation: "any-error"
      })
      const [a, b] = results(events)
      expect(a.content).toBe("Read failed\nboom")
      expect(b.content).toBe(Texts.siblingErrored("Read", "ms=1000"))
      expect(b.t_ms).toBe(1000)
      const all = yield* traces
      expect(all.find((t) => t.id === "b")?.finalized).toBe(true)
    }).pipe(Effect.provide(executorLayer()))
  )

  it.effect("isolate: with the declared policy a failing Read leaves its siblings alone", () =>
    Effect.gen(function* () {
      const events = yield* runAll([use("a", "Read", { ms: 1000, fail: true }), use("b", "Read", { ms: 5000 })])
      const [, b] = results(events)
      expect(b.content).toBe("Read done")
      expect(b.t_ms).toBe(5000)
    }).pipe(Effect.provide(executorLayer()))
  )

  it.effect("the none policy never cascades, even for Bash", () =>
    Effect.gen(function* () {
      const events = yield* runAll([use("bash", "Bash", { ms: 10, fail: true }), use("w", "Write", { ms: 10 })], {
        cancellation: "none"
      })
      expect(results(events)[1].content).toBe("Write done")
    }).pipe(Effect.provide(executorLayer()))
  )

  it.effect("the summary is cut at 40 characters with an ellipsis", () =>
    Effect.sync(() => {
      expect(Texts.siblingErrored("Bash", "x".repeat(41))).toBe(
        `<tool_use_error>Cancelled: parallel tool call Bash(${"x".repeat(40)}…) errored</tool_use_error>`
      )
    })
  )

  it.effect("discard: nothing more is yielded, queued calls never start, running calls are interrupted", () =>
    Effect.gen(function* () {
      const events = yield* runControlled(
        [use("a", "Read", { ms: 500 }), use("b", "Read", { ms: 5000 }), use("w", "Write", { ms: 10 })],
        (control) => control.discard
      )
      expect(results(events).map((r) => r.tool_use_id)).toEqual(["a"])
      const all = yield* traces
      expect(all.map((t) => t.id)).toEqual(["a", "b"])
      expect(all.find((t) => t.id === "b")?.finalized).toBe(true)
    }).pipe(Effect.provide(executorLayer()))
  )

  it.effect("interrupt cancels `cancel` calls, lets `block` calls finish, and never starts queued ones", () =>
    Effect.gen(function* () {
      const events = yield* runControlled(
        [use("c", "Cancel", { ms: 5000 }), use("b", "Block", { ms: 3000 }), use("w", "Write", { ms: 10 })],
        (control) => control.interrupt
      )
      const [c, b, w] = results(events)
      expect(c.content).toBe(Texts.rejected)
      expect(stateAt(events, "c", "completed")).toBe(1000)
      expect(b.content).toBe("Block done")
      expect(stateAt(events, "b", "completed")).toBe(3000)
      expect(w.content).toBe(Texts.alreadyCancelled)
      expect(stateAt(events, "w", "executing")).toBeUndefined()
    }).pipe(Effect.provide(executorLayer()))
  )

  it.effect("a hard abort cancels `block` calls too", () =>
    Effect.gen(function* () {
      const [b] = results(yield* runControlled([use("b", "Block", { ms: 3000 })], (control) => control.abort))
      expect(b.content).toBe(Texts.rejected)
      expect(b.t_ms).toBe(1000)
    }).pipe(Effect.provide(executorLayer()))
  )

  it.effect("a call over its timeout is interrupted with the exact text", () =>
    Effect.gen(function* () {
      const events = yield* runAll([use("t", "Timed", { ms: 5000 })])
      const [t] = results(events)
      expect(t.content).toBe("Tool Timed timed out after 2000 ms")
      expect(t.is_error).toBe(true)
      expect(t.t_ms).toBe(2000)
      expect((yield* traces)[0].finalized).toBe(true)
    }).pipe(Effect.provide(executorLayer()))
  )

  it.effect("modifiers of unsafe calls apply at completion; of safe calls after the run, in request order", () =>
    Effect.gen(function* () {
      const session = yield* Session
      yield* runAll([
        use("r1", "Read", { ms: 3000, cwd: "a" }),
        use("r2", "Read", { ms: 1000, cwd: "b" }),
        use("w", "Write", { ms: 1000, cwd: "c" })
      ])
      expect((yield* Ref.get(session.context)).cwd).toBe("/work/a/b/c")
    }).pipe(Effect.provide(executorLayer()))
  )

  it.effect("dependencies: a call starts after its upstream result exists and resolves its input from it", () =>
    Effect.gen(function* () {
      const calls: Array<ToolCall> = [
        {
          ...use("down", "Read", { ms: 0 }),
          depends_on: ["up"],
          resolve: (up) => ({ ms: 10, output: `got ${String(up.get("up")?.content)}` })
        },
        use("up", "Read", { ms: 2000, output: "data" })
      ]
      const events = yield* runAll(calls)
      expect(stateAt(events, "down", "executing")).toBe(2000)
      expect(results(events).map((r) => r.content)).toEqual(["got data", "data"])
    }).pipe(Effect.provide(executorLayer()))
  )

  it.effect("a failed dependency fails its dependants", () =>
    Effect.gen(function* () {
      const events = yield* runAll([
        use("up", "Read", { ms: 10, fail: true }),
        { ...use("down", "Read"), depends_on: ["up"] }
      ])
      expect(results(events)[1].content).toBe("Dependency up failed")
    }).pipe(Effect.provide(executorLayer()))
  )

  it.effect("a dependency cycle is rejected with a typed error before anything starts", () =>
    Effect.gen(function* () {
      const executor = yield* ToolExecutor
      const error = yield* Effect.flip(
        executor.runBatchCollect([
          { ...use("a", "Read"), depends_on: ["b"] },
          { ...use("b", "Read"), depends_on: ["a"] }
        ])
      )
      expect(error._tag).toBe("DependencyCycleError")
      expect(error.message).toBe("Dependency cycle between calls: a -> b -> a")
      expect(yield* traces).toEqual([])
    }).pipe(Effect.provide(executorLayer()))
  )

  it.effect("resource scheduling runs writers of disjoint paths together, conflicting ones apart", () =>
    Effect.gen(function* () {
      const events = yield* runAll(
        [
          use("w1", "Write", { ms: 1000, path: "/p/a" }),
          use("w2", "Write", { ms: 1000, path: "/p/b" }),
          use("w3", "Write", { ms: 1000, path: "/p/a" }),
          use("w4", "Write", { ms: 1000 })
        ],
        { scheduling: "resources" }
      )
      expect(startTimes(events, ["w1", "w2", "w3", "w4"])).toEqual([0, 0, 1000, 2000])
    }).pipe(Effect.provide(executorLayer()))
  )

  it.effect("partition scheduling keeps the same writers apart", () =>
    Effect.gen(function* () {
      const events = yield* runAll([
        use("w1", "Write", { ms: 1000, path: "/p/a" }),
        use("w2", "Write", { ms: 1000, path: "/p/b" })
      ])
      expect(startTimes(events, ["w1", "w2"])).toEqual([0, 1000])
    }).pipe(Effect.provide(executorLayer()))
  )

  it.effect("streaming: calls start as they arrive, before the stream ends", () =>
    Effect.gen(function* () {
      const executor = yield* ToolExecutor
      const input = yield* Queue.unbounded<ToolCall>()
      const fiber = yield* Effect.fork(
        Stream.runCollect(executor.execute(Stream.fromQueue(input).pipe(Stream.takeWhile((c) => c.id !== "end"))))
      )
      yield* Queue.offer(input, use("a", "Read", { ms: 1000 }))
      yield* TestClock.adjust("500 millis")
      yield* Queue.offer(input, use("b", "Read", { ms: 1000 }))
      yield* TestClock.adjust("2 seconds")
      yield* Queue.offer(input, use("end", "Read"))
      const events = Chunk.toReadonlyArray(yield* Fiber.join(fiber))
      expect(startTimes(events, ["a", "b"])).toEqual([0, 500])
      expect(results(events).map((r) => r.tool_use_id)).toEqual(["a", "b"])
    }).pipe(Effect.provide(executorLayer()))
  )

  it.effect("a duplicate id fails the stream after the earlier calls' results are yielded", () =>
    Effect.gen(function* () {
      const executor = yield* ToolExecutor
      const collected: Array<string> = []
      const fiber = yield* Effect.fork(
        executor.execute(Stream.fromIterable([use("a", "Read", { ms: 1000 }), use("a", "Read")])).pipe(
          Stream.runForEach((e) => Effect.sync(() => e.type === "tool_result" && collected.push(e.tool_use_id))),
          Effect.flip
        )
      )
      yield* TestClock.adjust("2 seconds")
      const error = yield* Fiber.join(fiber)
      expect(error._tag).toBe("InvalidInputError")
      expect(collected).toEqual(["a"])
    }).pipe(Effect.provide(executorLayer()))
  )

  it.effect("pipeline texts: unknown tool, decoding, failure, defect, empty output", () =>
    Effect.gen(function* () {
      const events = yield* runAll([
        use("u", "Nope"),
        { type: "tool_use", id: "d1", name: "Read", input: { ms: "1", extra: true } },
        { type: "tool_use", id: "d2", name: "Read", input: {} },
        use("f", "Read", { fail: true }),
        use("x", "Read", { die: true }),
        use("e", "Read", { output: "" })
      ])
      const byId = new Map(results(events).map((r) => [r.tool_use_id, r]))
      expect(byId.get("u")?.content).toBe("<tool_use_error>Error: No such tool available: Nope</tool_use_error>")
      expect(byId.get("d1")?.content).toBe(
        "<tool_use_error>InputValidationError: Read failed due to the following issues:\n" +
          "An unexpected parameter `extra` was provided\n" +
          "The parameter `ms` type is expected as `number` but provided as `string`</tool_use_error>"
      )
      expect(byId.get("d2")?.content).toBe(
        "<tool_use_error>InputValidationError: Read failed due to the following issue:\nThe required parameter `ms` is missing</tool_use_error>"
      )
      expect(byId.get("f")?.content).toBe("Read failed\nboom")
      expect(byId.get("x")?.content).toBe("Error: Read crashed")
      expect(byId.get("x")?.is_error).toBe(true)
      expect(byId.get("e")?.content).toBe("(Read completed with no output)")
      expect(byId.get("e")?.is_error).toBe(false)
    }).pipe(Effect.provide(executorLayer()))
  )

  it.effect("every call moves queued → executing → completed → yielded", () =>
    Effect.gen(function* () {
      const events = yield* runAll([use("a", "Read", { ms: 10 })])
      expect(events.filter((e) => e.type === "state").map((e) => (e.type === "state" ? e.state : ""))).toEqual([
        "queued",
        "executing",
        "completed",
        "yielded"
      ])
    }).pipe(Effect.provide(executorLayer()))
  )

  it.effect("the opt-in result cache reuses identical read-only results until a write touches them", () =>
    Effect.gen(function* () {
      const read = (id: string) => use(id, "Read", { ms: 100, path: "/p/a", output: "content" })
      yield* runAll([read("r1")])
      yield* runAll([read("r2")])
      yield* runAll([use("w", "Write", { ms: 10, path: "/p/a" })])
      yield* runAll([read("r3")])
      expect((yield* traces).map((t) => t.id)).toEqual(["r1", "w", "r3"])
    }).pipe(Effect.provide(executorLayer({}, ResultCacheLive.layer({ tools: ["Read"] }))))
  )

  it.effect("a call arriving after an interrupt is refused without cascading onto running `block` calls", () =>
    Effect.gen(function* () {
      const executor = yield* ToolExecutor
      const control = yield* makeControl
      const input = yield* Queue.unbounded<ToolCall>()
      const fiber = yield* Effect.fork(
        Stream.runCollect(
          executor.execute(Stream.fromQueue(input).pipe(Stream.takeWhile((c) => c.id !== "end")), { control })
        )
      )
      yield* Queue.offer(input, use("b", "Block", { ms: 3000 }))
      yield* TestClock.adjust("1 second")
      yield* control.interrupt
      yield* Queue.offer(input, use("bash", "Bash", { ms: 10 }))
      yield* Queue.offer(input, use("end", "Read"))
      yield* TestClock.adjust("1 minute")
      const [b, bash] = results(Chunk.toReadonlyArray(yield* Fiber.join(fiber)))
      expect(b.content).toBe("Block done")
      expect(bash.content).toBe(Texts.alreadyCancelled)
    }).pipe(Effect.provide(executorLayer()))
  )

  it.effect("a cancellation that lands after the tool returned keeps the tool's real result", () =>
    Effect.gen(function* () {
      // the PostToolUse hook runs from 100 ms to 2,100 ms; the abort lands in the middle of it
      const [r] = results(
        yield* runControlled([use("r", "Read", { ms: 100, output: "written" })], (control) => control.abort)
      )
      expect(r.content).toBe("written")
      expect(r.is_error).toBe(false)
    }).pipe(Effect.provide(executorLayer({}, undefined, slowPostHooks)))
  )

  it.effect("a call that never decoded is an error for itself alone, even under any-error", () =>
    Effect.gen(function* () {
      const events = yield* runAll(
        [{ type: "tool_use", id: "bad", name: "Bash", input: { output: "make all" } }, use("w", "Write", { ms: 10 })],
        { cancellation: "any-error" }
      )
      expect(results(events)[0].is_error).toBe(true)
      expect(results(events)[1]).toMatchObject({ content: "Write done", is_error: false })
    }).pipe(Effect.provide(executorLayer()))
  )
})

const slowPostHooks = Layer.succeed(
  Hooks.Hooks,
  Hooks.Hooks.of({
    run: (event) =>
      event === "PostToolUse" ? Effect.as(Effect.sleep("2 seconds"), emptyOutcome) : Effect.succeed(emptyOutcome)
  })
)
