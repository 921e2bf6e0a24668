/**
 * A call's step spans (CallSpans): calls running at the same time each keep their own parent span, whatever order
 * their fibers take turns in; a fiber the tool forks nests under the body; the body's span ends with what the body
 * gave (a failure, a defect, a timeout); and the caller's context is left as it was. (An interrupted call's body span,
 * ended when the call's fiber ends, is checked in ExecutorTelemetry.test.ts.)
 */
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { describe, expect, it } from "@effect/vitest"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Deferred, Effect, Fiber, Layer, Option, Schema, TestClock } from "effect"
import { ToolFailure } from "../../../src/domain/Errors.js"
import type { ToolCall } from "../../../src/domain/ExecutorEvent.js"
import * as Tool from "../../../src/domain/Tool.js"
import * as StreamingExecutor from "../../../src/layers/executor/StreamingExecutor.js"
import * as Spans from "../../../src/layers/observability/Spans.js"
import * as ToolRegistryLive from "../../../src/layers/registry/ToolRegistryLive.js"
import * as MemoryResultStore from "../../../src/layers/results/MemoryResultStore.js"
import * as SessionLive from "../../../src/layers/session/SessionLive.js"
import * as Approver from "../../../src/services/Approver.js"
import * as Hooks from "../../../src/services/Hooks.js"
import * as PermissionPolicy from "../../../src/services/PermissionPolicy.js"
import { ToolExecutor } from "../../../src/services/ToolExecutor.js"

/** Released by the test once both Turn calls are inside their bodies, so their fibers take turns from then on. */
class Gate extends Effect.Service<Gate>()("test/CallSpansGate", {
  effect: Effect.map(Deferred.make<void>(), (open) => ({ open, entered: { count: 0 } }))
}) {}

const Input = Schema.Struct({ tag: Schema.String })

const tool = (
  name: string,
  call: (input: { readonly tag: string }) => Effect.Effect<string, ToolFailure>,
  extra = {}
) =>
  ToolRegistryLive.register(
    Tool.make({
      name,
      description: name,
      input: Input,
      output: Schema.String,
      isConcurrencySafe: () => true,
      call,
      ...extra
    })
  )

const tools = Layer.mergeAll(
  // waits for the gate, then opens spans from its own fiber and from a fiber it forks, yielding in between
  ToolRegistryLive.register(
    Effect.flatMap(Gate, (gate) =>
      Tool.make({
        name: "Turn",
        description: "takes turns",
        input: Input,
        output: Schema.String,
        isConcurrencySafe: () => true,
        call: ({ tag }) =>
          Effect.gen(function* () {
            gate.entered.count++
            yield* Deferred.await(gate.open)
            yield* Effect.yieldNow().pipe(Effect.withSpan(`own ${tag}`))
            yield* Effect.yieldNow()
            const forked = yield* Effect.fork(Effect.yieldNow().pipe(Effect.withSpan(`forked ${tag}`)))
            yield* Fiber.join(forked)
            return tag
          })
      })
    )
  ),
  tool("Broken", () => Effect.fail(new ToolFailure({ message: "broken" }))),
  tool("Dies", () => Effect.die("boom")),
  tool("Stuck", () => Effect.never, { timeout: "1 second" })
)

// one exporter per test: the SDK shuts its exporter down when the test's layer closes
const engine = (exporter: InMemorySpanExporter) =>
  StreamingExecutor.layer({ maxConcurrency: 10 }).pipe(
    Layer.provideMerge(tools),
    Layer.provideMerge(ToolRegistryLive.layer),
    Layer.provideMerge(
      Layer.mergeAll(
        PermissionPolicy.allowAll,
        Approver.headless,
        Hooks.none,
        MemoryResultStore.layer,
        SessionLive.layer({ cwd: process.cwd() }),
        Gate.Default
      )
    ),
    Layer.provideMerge(NodeSdk.layer(() => ({ spanProcessor: new SimpleSpanProcessor(exporter) }))),
    Layer.provideMerge(Spans.layerExecutorSpans)
  )

const call = (id: string, name: string): ToolCall => ({ type: "tool_use", id, name, input: { tag: id } })

const named = (spans: ReadonlyArray<ReadableSpan>, name: string) => {
  const found = spans.filter((s) => s.name === name)
  expect(found.map((s) => s.name)).toEqual([name])
  return found[0]
}
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId
const idOf = (span: ReadableSpan) => span.spanContext().spanId
const callOf = (spans: ReadonlyArray<ReadableSpan>, id: string) =>
  spans.find((s) => s.name.startsWith("execute_tool") && s.attributes["gen_ai.tool.call.id"] === id)!
const bodyOf = (spans: ReadonlyArray<ReadableSpan>, id: string) =>
  spans.find((s) => s.name === "armature.tool_body" && parentOf(s) === idOf(callOf(spans, id)))!

describe("CallSpans", () => {
  const exporter = new InMemorySpanExporter()
  it.scoped("calls running at once keep their own parents while their fibers take turns", () =>
    Effect.gen(function* () {
      const executor = yield* ToolExecutor
      const gate = yield* Gate
      const running = yield* Effect.fork(
        Effect.gen(function* () {
          const results = yield* executor.runBatchCollect([call("a", "Turn"), call("b", "Turn")])
          return { results, parent: yield* Effect.currentParentSpan }
        }).pipe(Effect.withSpan("turn"))
      )
      while (gate.entered.count < 2) yield* Effect.yieldNow()
      yield* Deferred.succeed(gate.open, undefined)
      const { results, parent } = yield* Fiber.join(running)
      expect(results.map((r) => [r.tool_use_id, r.content])).toEqual([
        ["a", "a"],
        ["b", "b"]
      ])
      const spans = exporter.getFinishedSpans()
      for (const id of ["a", "b"]) {
        const body = bodyOf(spans, id)
        expect(parentOf(named(spans, `own ${id}`))).toBe(idOf(body))
        expect(parentOf(named(spans, `forked ${id}`))).toBe(idOf(body))
      }
      // the caller's own context is not the one a call's steps switch: its parent span is still its own
      expect(parent.spanId).toBe(idOf(named(spans, "turn")))
    }).pipe(Effect.provide(engine(exporter)))
  )

  const second = new InMemorySpanExporter()
  it.scoped("the body's span ends with the body's failure, defect or timeout", () =>
    Effect.gen(function* () {
      const executor = yield* ToolExecutor
      const running = yield* Effect.fork(
        executor.runBatchCollect([call("broken", "Broken"), call("dies", "Dies"), call("stuck", "Stuck")])
      )
      // the clock moves until the batch is done (Stuck's timeout is a virtual second)
      while (Option.isNone(yield* Fiber.poll(running))) yield* TestClock.adjust("1 second")
      const results = yield* Fiber.join(running)
      expect(results.map((r) => [r.tool_use_id, r.is_error === true])).toEqual([
        ["broken", true],
        ["dies", true],
        ["stuck", true]
      ])
      const spans = second.getFinishedSpans()
      for (const id of ["broken", "dies"]) expect(bodyOf(spans, id).status.code).toBe(2) // ERROR
      // a body cut short by its timeout ends as interrupted (as Effect marks an interrupted span)
      expect(bodyOf(spans, "stuck").attributes["status.interrupted"]).toBe(true)
      for (const id of ["broken", "dies", "stuck"]) {
        expect(callOf(spans, id).attributes["armature.outcome"]).toBe("error")
      }
      // the permission step ended normally before each body
      const permissions = spans.filter((s) => s.name === "armature.permission")
      expect(permissions.map((s) => s.status.code)).toEqual([1, 1, 1]) // OK
    }).pipe(Effect.provide(engine(second)))
  )
})
