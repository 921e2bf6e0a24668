/**
 * The spans the engine emits, through Effect's tracer: names and attributes in one place. Attributes follow the
 * OpenTelemetry GenAI conventions where they exist (`gen_ai.*`, `error.type`) and Armature's own under `armature.*`.
 * The engine only emits Effect spans; an application chooses where they go (see docs/observability.md).
 */
import { Chunk, Clock, Context, Effect, Exit, FiberRef, HashMap, Layer, Option, Tracer } from "effect"
import { contentText, type ToolResultContent } from "../../domain/Blocks.js"
import { kindOf, type Outcome } from "../../domain/Outcome.js"
import type { PermissionDecision } from "../../domain/Permission.js"
import type * as Tool from "../../domain/Tool.js"

/**
 * Whether the executor opens its per-call spans (`execute_tool` and its children), read when the executor is built.
 * Off by default: on a no-op call they still cost more than the 10% the project allows (three spans of Effect's
 * default tracer and a context per call; see bench/Executor.bench.ts, `spans_ratio`, and docs/observability.md).
 * An application turns them on with {@link layerExecutorSpans}; the CLI does when it exports to an OTLP endpoint.
 * Agent and model spans are always on.
 */
export class ExecutorSpans extends Context.Reference<ExecutorSpans>()("armature/ExecutorSpans", {
  defaultValue: () => false
}) {}

/** Turns the executor's per-call spans on. */
export const layerExecutorSpans: Layer.Layer<ExecutorSpans> = Layer.succeed(ExecutorSpans, true)

/** Turns the executor's per-call spans off (the default). */
export const layerNoExecutorSpans: Layer.Layer<ExecutorSpans> = Layer.succeed(ExecutorSpans, false)

/** Span names. */
export const names = {
  agent: "invoke_agent armature",
  chat: (model: string) => `chat ${model}`,
  tool: (name: string) => `execute_tool ${name}`,
  permission: "armature.permission",
  hook: (event: string) => `armature.hook ${event}`,
  approval: "armature.approval",
  body: "armature.tool_body",
  persist: "armature.result.persist",
  mcp: (method: string, target: string) => `${method} ${target}`
} as const

const options = (attributes: Record<string, unknown> | undefined): Tracer.SpanOptions => ({
  attributes,
  kind: "internal",
  // no stack trace is captured: it costs an Error per span on the executor's hot path
  captureStackTrace: false
})

/** Runs `body` in a child span of the current one. */
export const span =
  (name: string, attributes?: Record<string, unknown>) =>
  <A, E, R>(body: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withSpan(body, name, options(attributes))

/** Runs `body` in a child span it can annotate as it learns things (a decision, a size). */
export const spanWith = <A, E, R>(
  name: string,
  attributes: Record<string, unknown> | undefined,
  body: (span: Tracer.Span) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.useSpan(name, options(attributes), (span) => Effect.withParentSpan(body(span), span))

/** A tool call's attributes known when it starts. */
export const toolAttributes = (tool: Tool.Any | undefined, name: string, id: string): Record<string, unknown> => ({
  "gen_ai.operation.name": "execute_tool",
  "gen_ai.tool.name": name,
  "gen_ai.tool.call.id": id,
  "gen_ai.tool.type": tool?.source === "mcp" ? "extension" : "function"
})

/** Starts a call's `execute_tool` span as a child of the current span (not entered: the caller ends it). */
export const startTool = (tool: Tool.Any | undefined, name: string, id: string, queueWaitMs: number | undefined) =>
  Effect.makeSpan(
    names.tool(name),
    options({
      ...toolAttributes(tool, name, id),
      "armature.started": queueWaitMs !== undefined,
      ...(queueWaitMs === undefined ? {} : { "armature.queue_wait_ms": queueWaitMs })
    })
  )

/**
 * Opens and ends spans directly with the current tracer, for the executor's hot path: what `Effect.makeSpan` reads
 * from the fiber (tracer, clock, parent span, span annotations and links, whether tracing and timing are on) is
 * read once per execution, and a span is then a plain function call — no effect, no change of the fiber's context.
 * Spans opened this way are children of an explicit parent, and must be ended by the caller ({@link close}).
 */
export interface Opener {
  readonly tracer: Tracer.Tracer
  /** The span current where the opener was made: the parent of the executor's call spans. */
  readonly parent: Option.Option<Tracer.AnySpan>
  readonly links: ReadonlyArray<Tracer.SpanLink>
  readonly annotations: ReadonlyArray<readonly [string, unknown]>
  /** The time for a span's start or end, in nanoseconds; 0 when timing is off (as Effect's own spans do). */
  readonly now: () => bigint
}

const noContext = Context.empty()

const noLinks: ReadonlyArray<Tracer.SpanLink> = []
const noAnnotations: ReadonlyArray<readonly [string, unknown]> = []
const zero = BigInt(0)
const noTime = () => zero

/**
 * An opener for the current fiber; none when tracing is disabled (`Effect.withTracerEnabled(false)`). Read in one
 * step from the fiber (an execution makes one, so a batch of ten pays for it once).
 */
export const opener: Effect.Effect<Opener | undefined> = Effect.withFiberRuntime((fiber) => {
  if (!fiber.getFiberRef(FiberRef.currentTracerEnabled)) return Effect.succeed(undefined)
  const clock = Context.get(fiber.currentDefaultServices, Clock.Clock)
  const links = fiber.getFiberRef(FiberRef.currentTracerSpanLinks)
  const annotations = fiber.getFiberRef(FiberRef.currentTracerSpanAnnotations)
  return Effect.succeed<Opener>({
    tracer: fiber.currentTracer,
    parent: Context.getOption(fiber.currentContext, Tracer.ParentSpan),
    links: Chunk.isEmpty(links) ? noLinks : Chunk.toReadonlyArray(links),
    annotations: HashMap.isEmpty(annotations) ? noAnnotations : [...HashMap.entries(annotations)],
    now: fiber.getFiberRef(FiberRef.currentTracerTimingEnabled) ? () => clock.unsafeCurrentTimeNanos() : noTime
  })
})

/** Opens a span under `parent` (the opener's own parent when undefined) with `attributes`. */
export const open = (
  opener: Opener,
  name: string,
  parent: Tracer.AnySpan | undefined,
  attributes?: Record<string, unknown>
): Tracer.Span => {
  const span = opener.tracer.span(
    name,
    parent === undefined ? opener.parent : Option.some(parent),
    noContext,
    opener.links,
    opener.now(),
    "internal"
  )
  for (const [key, value] of opener.annotations) span.attribute(key, value)
  if (attributes !== undefined) for (const key in attributes) span.attribute(key, attributes[key])
  return span
}

/** Ends a span opened with {@link open}: with the exit's status (a failure or a defect marks it as an error). */
export const close = (opener: Opener, span: Tracer.Span, exit: Exit.Exit<unknown, unknown>): void => {
  span.end(opener.now(), exit)
}

/** Opens a call's `execute_tool` span (under the opener's parent); `queueWaitMs` undefined for a call never started. */
export const openTool = (
  opener: Opener,
  tool: Tool.Any | undefined,
  name: string,
  id: string,
  queueWaitMs: number | undefined
): Tracer.Span => {
  const span = open(opener, names.tool(name), undefined)
  // the attributes of toolAttributes, set one by one (no record to build and walk per call)
  span.attribute("gen_ai.operation.name", "execute_tool")
  span.attribute("gen_ai.tool.name", name)
  span.attribute("gen_ai.tool.call.id", id)
  span.attribute("gen_ai.tool.type", tool?.source === "mcp" ? "extension" : "function")
  span.attribute("armature.started", queueWaitMs !== undefined)
  if (queueWaitMs !== undefined) span.attribute("armature.queue_wait_ms", queueWaitMs)
  return span
}

/** The size of a result in characters, as the model receives it. */
export const resultSize = (content: ToolResultContent): number =>
  typeof content === "string" ? content.length : contentText(content).length

/** The `error.type` of a call that ended in error (low cardinality, as the convention asks). */
export const errorType = (outcome: Outcome): string | undefined => {
  const kind = kindOf(outcome)
  if (kind === "ok") return undefined
  if (kind === "error") return outcome.executionFailed ? "tool_error" : "invalid_call"
  return kind
}

/** Ends a call's span with what the call produced. */
export const endTool = (span: Tracer.Span, outcome: Outcome, endNanos: bigint): void => {
  span.attribute("armature.outcome", kindOf(outcome))
  span.attribute("armature.result.size", resultSize(outcome.content))
  if (outcome.denied !== undefined) span.attribute("armature.denial.reason", outcome.denied)
  if (outcome.cancelled !== undefined) span.attribute("armature.cancellation.cause", outcome.cancelled)
  const type = errorType(outcome)
  if (type === undefined) {
    span.end(endNanos, Exit.void)
    return
  }
  span.attribute("error.type", type)
  span.end(endNanos, Exit.fail(type))
}

/** Annotates the permission span with the decision. */
export const annotateDecision = (span: Tracer.Span, decision: PermissionDecision): void => {
  span.attribute("armature.decision.behavior", decision.behavior)
  span.attribute("armature.decision.reason", decision.reason)
  if (decision.rule !== null) span.attribute("armature.decision.rule", decision.rule)
  if (decision.source !== null) span.attribute("armature.decision.source", decision.source)
}

/** The attributes of a model request's `chat` span. */
export const chatAttributes = (model: string): Record<string, unknown> => ({
  "gen_ai.operation.name": "chat",
  "gen_ai.request.model": model
})

/** Records a model turn's token usage and stop reason on its span. */
export const annotateUsage = (
  span: Tracer.Span,
  usage: { readonly input_tokens: number; readonly output_tokens: number },
  stopReason: string | null
): void => {
  span.attribute("gen_ai.usage.input_tokens", usage.input_tokens)
  span.attribute("gen_ai.usage.output_tokens", usage.output_tokens)
  if (stopReason !== null) span.attribute("gen_ai.response.finish_reasons", [stopReason])
}

/** The attributes of an agent run's `invoke_agent` span. */
export const agentAttributes = (model: string | undefined): Record<string, unknown> => ({
  "gen_ai.operation.name": "invoke_agent",
  "gen_ai.agent.name": "armature",
  ...(model === undefined ? {} : { "gen_ai.request.model": model })
})

/** Records a run's result line on its `invoke_agent` span. */
export const annotateRun = (
  span: Tracer.Span,
  result: {
    readonly session_id: string
    readonly subtype: string
    readonly num_turns: number
    readonly usage: { readonly input_tokens: number; readonly output_tokens: number }
    readonly total_cost_usd: number
  }
): void => {
  span.attribute("gen_ai.conversation.id", result.session_id)
  span.attribute("gen_ai.usage.input_tokens", result.usage.input_tokens)
  span.attribute("gen_ai.usage.output_tokens", result.usage.output_tokens)
  span.attribute("armature.result.subtype", result.subtype)
  span.attribute("armature.turns", result.num_turns)
  span.attribute("armature.cost_usd", result.total_cost_usd)
}
