/**
 * Tool policies in traces: each retry, rate-limit wait and refusal by an open circuit is an event on the call's span
 * (`armature.policy.*`), with the same fields as the call's policy event.
 */
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { describe, expect, it } from "@effect/vitest"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Fiber, Layer, Option, Ref, Schema, TestClock } from "effect"
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
import * as ToolPolicies from "../../../src/services/ToolPolicies.js"

/** Failed attempts so far, per tool name. */
const attempts = Effect.runSync(Ref.make(new Map<string, number>()))

/** A read-only tool whose first `failures` attempts fail transiently; an unsafe one runs alone, in arrival order. */
const flaky = (name: string, failures: number, concurrencySafe = true) =>
  ToolRegistryLive.register(
    Tool.make({
      name,
      description: name,
      input: Schema.Struct({}),
      output: Schema.String,
      isReadOnly: () => true,
      isConcurrencySafe: () => concurrencySafe,
      call: () =>
        Effect.gen(function* () {
          const before = yield* Ref.modify(attempts, (m) => [
            m.get(name) ?? 0,
            new Map(m).set(name, (m.get(name) ?? 0) + 1)
          ])
          if (before < failures)
            return yield* new ToolFailure({ message: `503 (attempt ${before + 1})`, transient: true })
          return `ok ${name}`
        })
    })
  )

const engine = (exporter: InMemorySpanExporter) =>
  StreamingExecutor.layer({ maxConcurrency: 10 }).pipe(
    Layer.provideMerge(Layer.mergeAll(flaky("Lookup", 2), flaky("Quote", 0), flaky("Down", 100, false))),
    Layer.provideMerge(ToolRegistryLive.layer),
    Layer.provideMerge(
      Layer.mergeAll(
        ToolPolicies.layerStatic({
          Lookup: { retry: { times: 3, backoff: "exponential", baseMs: 200 } },
          Quote: { rateLimit: { limit: 1, intervalMs: 1000 } },
          Down: { circuitBreaker: { failures: 1, resetMs: 30000 } }
        }),
        PermissionPolicy.allowAll,
        Approver.headless,
        Hooks.none,
        MemoryResultStore.layer,
        SessionLive.layer({ cwd: process.cwd() })
      )
    ),
    Layer.provideMerge(NodeSdk.layer(() => ({ spanProcessor: new SimpleSpanProcessor(exporter) }))),
    Layer.provideMerge(Spans.layerExecutorSpans)
  )

const call = (id: string, name: string): ToolCall => ({ type: "tool_use", id, name, input: {} })
const callSpan = (spans: ReadonlyArray<ReadableSpan>, id: string) =>
  spans.find((s) => s.name.startsWith("execute_tool") && s.attributes["gen_ai.tool.call.id"] === id)!
const policyEvents = (span: ReadableSpan) =>
  span.events.filter((e) => e.name.startsWith("armature.policy.")).map((e) => [e.name, e.attributes])

describe("policy span events", () => {
  const exporter = new InMemorySpanExporter()
  it.scoped("retries, rate-limit waits and an open circuit's refusal are events of the call's span", () =>
    Effect.gen(function* () {
      const executor = yield* ToolExecutor
      const running = yield* Effect.fork(
        executor.runBatchCollect([
          call("r", "Lookup"),
          call("q1", "Quote"),
          call("q2", "Quote"),
          call("d1", "Down"),
          call("d2", "Down")
        ])
      )
      while (Option.isNone(yield* Fiber.poll(running))) yield* TestClock.adjust("100 millis")
      const results = yield* Fiber.join(running)
      expect(results.map((r) => [r.tool_use_id, r.is_error === true])).toEqual([
        ["r", false],
        ["q1", false],
        ["q2", false],
        ["d1", true],
        ["d2", true]
      ])
      const spans = exporter.getFinishedSpans()
      expect(policyEvents(callSpan(spans, "r"))).toMatchObject([
        ["armature.policy.retry", { action: "retry", key: "Lookup", attempt: 1, delay_ms: 200 }],
        ["armature.policy.retry", { action: "retry", key: "Lookup", attempt: 2, delay_ms: 400 }]
      ])
      // one of the two Quote calls takes the limit's only permit; the other waits its turn, once
      const waits = ["q1", "q2"].flatMap((id) => policyEvents(callSpan(spans, id)))
      expect(waits).toMatchObject([["armature.policy.rate_limit", { action: "rate_limit", key: "Quote" }]])
      expect(policyEvents(callSpan(spans, "d1"))).toEqual([])
      expect(policyEvents(callSpan(spans, "d2"))).toMatchObject([
        ["armature.policy.circuit_open", { action: "circuit_open", key: "Down" }]
      ])
    }).pipe(Effect.provide(engine(exporter)))
  )
})
