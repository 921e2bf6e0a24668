/**
 * The spans and metrics of one executor batch, through the OpenTelemetry SDK with an in-memory exporter: a call that
 * is allowed, one a rule denies, one cancelled while it runs (its sibling failed) and the failing one.
 */
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { describe, expect, it } from "@effect/vitest"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Deferred, Effect, Fiber, Layer, Metric, Schema } from "effect"
import { ToolFailure } from "../../../src/domain/Errors.js"
import type { ToolCall } from "../../../src/domain/ExecutorEvent.js"
import * as Tool from "../../../src/domain/Tool.js"
import * as StreamingExecutor from "../../../src/layers/executor/StreamingExecutor.js"
import * as Metrics from "../../../src/layers/observability/Metrics.js"
import * as Spans from "../../../src/layers/observability/Spans.js"
import * as ToolRegistryLive from "../../../src/layers/registry/ToolRegistryLive.js"
import * as MemoryResultStore from "../../../src/layers/results/MemoryResultStore.js"
import * as SessionLive from "../../../src/layers/session/SessionLive.js"
import * as Approver from "../../../src/services/Approver.js"
import * as Hooks from "../../../src/services/Hooks.js"
import { PermissionPolicy } from "../../../src/services/PermissionPolicy.js"
import { ToolExecutor } from "../../../src/services/ToolExecutor.js"

const Input = Schema.Struct({})

/** Completed when the slow call is running, so the failing call fails while its sibling runs. */
class SlowStarted extends Effect.Service<SlowStarted>()("test/SlowStarted", {
  effect: Deferred.make<void>()
}) {}

const tools = Layer.mergeAll(
  ToolRegistryLive.register(
    Tool.make({
      name: "Look",
      description: "ok",
      input: Input,
      output: Schema.String,
      call: () => Effect.succeed("seen")
    })
  ),
  ToolRegistryLive.register(
    Tool.make({
      name: "Write",
      description: "denied",
      input: Input,
      output: Schema.String,
      call: () => Effect.succeed("")
    })
  ),
  ToolRegistryLive.register(
    Effect.flatMap(SlowStarted, (started) =>
      Tool.make({
        name: "Slow",
        description: "runs until cancelled",
        input: Input,
        output: Schema.String,
        isConcurrencySafe: () => true,
        call: () => Effect.zipRight(Deferred.succeed(started, undefined), Effect.never)
      })
    )
  ),
  ToolRegistryLive.register(
    Effect.flatMap(SlowStarted, (started) =>
      Tool.make({
        name: "Fail",
        description: "fails once Slow runs",
        input: Input,
        output: Schema.String,
        isConcurrencySafe: () => true,
        cancelsSiblingsOnError: true,
        call: () => Effect.zipRight(Deferred.await(started), Effect.fail(new ToolFailure({ message: "broken" })))
      })
    )
  )
)

/** Denies Write by a rule, allows the rest. */
const policy = Layer.succeed(
  PermissionPolicy,
  PermissionPolicy.of({
    mode: "default",
    decide: (request) =>
      Effect.succeed(
        request.tool.name === "Write"
          ? {
              behavior: "deny",
              message: "Permission to use Write has been denied.",
              reason: "deny rule",
              rule: "Write",
              source: "cliArg",
              trace: []
            }
          : { behavior: "allow", message: "", reason: "allowed", rule: "Look", source: "session", trace: [] }
      ),
    isToolDenied: () => false
  })
)

const exporter = new InMemorySpanExporter()

const engine = StreamingExecutor.layer({ maxConcurrency: 10 }).pipe(
  Layer.provideMerge(tools),
  Layer.provideMerge(ToolRegistryLive.layer),
  Layer.provideMerge(
    Layer.mergeAll(
      policy,
      Approver.headless,
      Hooks.none,
      MemoryResultStore.layer,
      SessionLive.layer({ cwd: process.cwd() }),
      SlowStarted.Default
    )
  ),
  Layer.provideMerge(NodeSdk.layer(() => ({ spanProcessor: new SimpleSpanProcessor(exporter) }))),
  Layer.provideMerge(Spans.layerExecutorSpans)
)

const call = (id: string, name: string): ToolCall => ({ type: "tool_use", id, name, input: {} })
const batch = [call("ok", "Look"), call("denied", "Write"), call("slow", "Slow"), call("fail", "Fail")]

const byName = (spans: ReadonlyArray<ReadableSpan>, name: string) => spans.filter((s) => s.name === name)
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId

const count = (metric: Metric.Metric.Counter<number>, tags: Record<string, string>) =>
  Effect.map(
    Metric.value(Object.entries(tags).reduce((m, [k, v]) => Metric.tagged(m, k, v), metric)),
    (state) => state.count
  )

/**
 * The metrics this batch moves. Effect's metric registry is one per process, and the unit project's files share a
 * worker process, so other files' calls of the same tool names count there too: the test compares readings taken
 * before and after its batch.
 */
const readings = Effect.all({
  lookOk: count(Metrics.toolCalls, { "gen_ai.tool.name": "Look", "armature.outcome": "ok" }),
  slowCancelled: count(Metrics.toolCalls, { "gen_ai.tool.name": "Slow", "armature.outcome": "cancelled" }),
  failError: count(Metrics.toolCalls, { "gen_ai.tool.name": "Fail", "armature.outcome": "error" }),
  writeDenied: count(Metrics.toolDenials, { "gen_ai.tool.name": "Write", "armature.denial.reason": "policy" }),
  slowDurations: Effect.map(
    Metric.value(Metric.tagged(Metrics.toolDuration, "gen_ai.tool.name", "Slow")),
    (h) => h.count
  ),
  lookWaits: Effect.map(Metric.value(Metric.tagged(Metrics.toolQueueWait, "gen_ai.tool.name", "Look")), (h) => h.count),
  executing: Effect.map(Metric.value(Metrics.toolExecuting), (g) => g.value)
})

describe("executor telemetry", () => {
  it.scoped("a batch's span tree: execute_tool per call under the caller's span, with its decision and body", () =>
    Effect.gen(function* () {
      exporter.reset()
      const executor = yield* ToolExecutor
      const before = yield* readings
      const results = yield* executor.runBatchCollect(batch).pipe(Effect.withSpan("turn"))
      expect(results.map((r) => [r.tool_use_id, r.is_error === true])).toEqual([
        ["ok", false],
        ["denied", true],
        ["slow", true],
        ["fail", true]
      ])
      const spans = exporter.getFinishedSpans()
      const [turn] = byName(spans, "turn")
      const tools = spans.filter((s) => s.name.startsWith("execute_tool "))
      expect(tools.map((s) => s.name).sort()).toEqual([
        "execute_tool Fail",
        "execute_tool Look",
        "execute_tool Slow",
        "execute_tool Write"
      ])
      const tool = (id: string) => tools.find((s) => s.attributes["gen_ai.tool.call.id"] === id)!
      for (const s of tools) {
        expect(parentOf(s)).toBe(turn.spanContext().spanId)
        expect(s.attributes["gen_ai.operation.name"]).toBe("execute_tool")
        expect(s.attributes["armature.started"]).toBe(true)
        expect(typeof s.attributes["armature.queue_wait_ms"]).toBe("number")
      }
      expect(tool("ok").attributes).toMatchObject({ "gen_ai.tool.name": "Look", "armature.outcome": "ok" })
      expect(tool("ok").attributes["error.type"]).toBeUndefined()
      expect(tool("denied").attributes).toMatchObject({
        "armature.outcome": "denied",
        "armature.denial.reason": "policy",
        "error.type": "denied"
      })
      expect(tool("slow").attributes).toMatchObject({
        "armature.outcome": "cancelled",
        "armature.cancellation.cause": "sibling_error",
        "error.type": "cancelled"
      })
      expect(tool("fail").attributes).toMatchObject({ "armature.outcome": "error", "error.type": "tool_error" })
      expect(tool("fail").status.code).toBe(2) // ERROR

      // every call has its permission decision as a child; only the calls allowed to run have a tool body
      const permissions = byName(spans, "armature.permission")
      expect(permissions.map(parentOf).sort()).toEqual(tools.map((s) => s.spanContext().spanId).sort())
      const decisionOf = (id: string) => permissions.find((p) => parentOf(p) === tool(id).spanContext().spanId)!
      expect(decisionOf("denied").attributes).toMatchObject({
        "armature.decision.behavior": "deny",
        "armature.decision.rule": "Write",
        "armature.decision.source": "cliArg"
      })
      expect(decisionOf("ok").attributes["armature.decision.behavior"]).toBe("allow")
      const bodies = byName(spans, "armature.tool_body")
      expect(bodies.map(parentOf).sort()).toEqual(
        ["ok", "slow", "fail"].map((id) => tool(id).spanContext().spanId).sort()
      )

      // metrics after the batch: one more of each, and no call left executing
      const after = yield* readings
      expect({
        lookOk: after.lookOk - before.lookOk,
        slowCancelled: after.slowCancelled - before.slowCancelled,
        failError: after.failError - before.failError,
        writeDenied: after.writeDenied - before.writeDenied,
        slowDurations: after.slowDurations - before.slowDurations,
        lookWaits: after.lookWaits - before.lookWaits,
        executing: after.executing - before.executing
      }).toEqual({
        lookOk: 1,
        slowCancelled: 1,
        failError: 1,
        writeDenied: 1,
        slowDurations: 1,
        lookWaits: 1,
        executing: 0
      })
    }).pipe(Effect.provide(engine))
  )
  it.scoped(
    "a batch interrupted from outside while a call runs lowers the executing gauge and counts the call as interrupted",
    () =>
      Effect.gen(function* () {
        const executor = yield* ToolExecutor
        const executing = Effect.map(Metric.value(Metrics.toolExecuting), (g) => g.value)
        const before = yield* executing
        const cutBefore = yield* count(Metrics.toolCalls, {
          "gen_ai.tool.name": "Slow",
          "armature.outcome": "interrupted"
        })
        const fiber = yield* Effect.fork(executor.runBatchCollect([call("cut", "Slow")]))
        // the Slow call runs (and never ends by itself) once the gauge has gone up
        while ((yield* executing) === before) yield* Effect.yieldNow()
        yield* Fiber.interrupt(fiber)
        expect(yield* executing).toBe(before)
        const cutAfter = yield* count(Metrics.toolCalls, {
          "gen_ai.tool.name": "Slow",
          "armature.outcome": "interrupted"
        })
        expect(cutAfter - cutBefore).toBe(1)
      }).pipe(Effect.provide(engine))
  )
})
