/**
 * With the executor's per-call spans on, what a call's steps open nests under them: a span opened while the result
 * is stored (outside the tool body) is a child of `execute_tool`, one opened by the tool itself a child of
 * `armature.tool_body`. By default no per-call span is opened, and the tool's own span hangs under the caller's span.
 */
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { describe, expect, it } from "@effect/vitest"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Layer, Schema } from "effect"
import type { ToolCall } from "../../../src/domain/ExecutorEvent.js"
import * as Tool from "../../../src/domain/Tool.js"
import * as StreamingExecutor from "../../../src/layers/executor/StreamingExecutor.js"
import * as Spans from "../../../src/layers/observability/Spans.js"
import * as ToolRegistryLive from "../../../src/layers/registry/ToolRegistryLive.js"
import { memorySpill } from "../../../src/layers/results/MemoryResultStore.js"
import * as SessionLive from "../../../src/layers/session/SessionLive.js"
import * as Approver from "../../../src/services/Approver.js"
import * as Hooks from "../../../src/services/Hooks.js"
import * as PermissionPolicy from "../../../src/services/PermissionPolicy.js"
import { ResultStore } from "../../../src/services/ResultStore.js"
import { ToolExecutor } from "../../../src/services/ToolExecutor.js"

/** A tool whose body opens a span of its own. */
const look = ToolRegistryLive.register(
  Tool.make({
    name: "Look",
    description: "opens a span in its body",
    input: Schema.Struct({}),
    output: Schema.String,
    isConcurrencySafe: () => true,
    call: () => Effect.succeed("seen").pipe(Effect.withSpan("inside the tool"))
  })
)

/** A result store that opens a span while it stores a result (as the file store does when it persists one). */
const store = Layer.succeed(
  ResultStore,
  ResultStore.of({
    process: (r) => Effect.succeed(r.content).pipe(Effect.withSpan("storing the result")),
    openSpill: memorySpill
  })
)

const engine = (exporter: InMemorySpanExporter) =>
  StreamingExecutor.layer({ maxConcurrency: 10 }).pipe(
    Layer.provideMerge(look),
    Layer.provideMerge(ToolRegistryLive.layer),
    Layer.provideMerge(
      Layer.mergeAll(
        PermissionPolicy.allowAll,
        Approver.headless,
        Hooks.none,
        store,
        SessionLive.layer({ cwd: process.cwd() })
      )
    ),
    Layer.provideMerge(NodeSdk.layer(() => ({ spanProcessor: new SimpleSpanProcessor(exporter) })))
  )

const calls: ReadonlyArray<ToolCall> = [
  { type: "tool_use", id: "one", name: "Look", input: {} },
  { type: "tool_use", id: "two", name: "Look", input: {} }
]

const one = (spans: ReadonlyArray<ReadableSpan>, name: string) => {
  const found = spans.filter((s) => s.name === name)
  expect(found.map((s) => s.name)).toEqual([name])
  return found[0]
}
const named = (spans: ReadonlyArray<ReadableSpan>, name: string) => spans.filter((s) => s.name === name)
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId
const idOf = (span: ReadableSpan) => span.spanContext().spanId

const runBatch = Effect.gen(function* () {
  const executor = yield* ToolExecutor
  const results = yield* executor.runBatchCollect(calls).pipe(Effect.withSpan("turn"))
  expect(results.map((r) => [r.tool_use_id, r.content])).toEqual([
    ["one", "seen"],
    ["two", "seen"]
  ])
})

describe("executor spans", () => {
  const exporter = new InMemorySpanExporter()
  it.scoped("when on, a call's steps open their spans under its execute_tool span", () =>
    Effect.gen(function* () {
      exporter.reset()
      yield* runBatch
      const spans = exporter.getFinishedSpans()
      const turn = one(spans, "turn")
      const tools = named(spans, "execute_tool Look")
      expect(tools.map((s) => s.attributes["gen_ai.tool.call.id"]).sort()).toEqual(["one", "two"])
      for (const tool of tools) {
        expect(parentOf(tool)).toBe(idOf(turn))
        const children = spans.filter((s) => parentOf(s) === idOf(tool))
        expect(children.map((s) => s.name).sort()).toEqual([
          "armature.permission",
          "armature.tool_body",
          "storing the result"
        ])
        const body = children.find((s) => s.name === "armature.tool_body")!
        expect(spans.filter((s) => parentOf(s) === idOf(body)).map((s) => s.name)).toEqual(["inside the tool"])
      }
    }).pipe(Effect.provide(engine(exporter).pipe(Layer.provide(Spans.layerExecutorSpans))))
  )

  const quiet = new InMemorySpanExporter()
  it.scoped("are off by default: the steps' own spans then hang under the caller's span", () =>
    Effect.gen(function* () {
      quiet.reset()
      yield* runBatch
      const spans = quiet.getFinishedSpans()
      const turn = one(spans, "turn")
      expect(spans.filter((s) => s.name.startsWith("execute_tool") || s.name.startsWith("armature."))).toEqual([])
      const inside = named(spans, "inside the tool")
      expect(inside.map(parentOf)).toEqual([idOf(turn), idOf(turn)])
    }).pipe(Effect.provide(engine(quiet)))
  )
})
