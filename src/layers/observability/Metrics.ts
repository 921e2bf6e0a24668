/**
 * The engine's metrics, as Effect `Metric`s: calls by tool and outcome, denials by reason, call duration and queue
 * wait, the calls executing now, model tokens and cost. They live in Effect's metric registry; an application reads
 * them with `Metric.value`/`Metric.snapshot` or exports them (the CLI does over OTLP, see docs/observability.md).
 *
 * Updates on the executor's path use a metric's `unsafeUpdate` with label arrays built once per (tool, outcome), so
 * that recording a call is a map lookup and an addition, not a registry search.
 */
import { Effect, Metric, MetricBoundaries, MetricLabel } from "effect"
import { kindOf, type Outcome } from "../../domain/Outcome.js"
import { costOf, type Usage } from "../../services/LanguageModel.js"

const millis = MetricBoundaries.exponential({ start: 1, factor: 2, count: 18 })

/** Tool calls that ended, tagged `gen_ai.tool.name` and `armature.outcome` (ok, error, denied, cancelled, interrupted). */
export const toolCalls = Metric.counter("armature.tool.calls", {
  description: "Tool calls that ended, by tool and outcome",
  incremental: true
})

/** Refused calls, tagged `gen_ai.tool.name` and `armature.denial.reason` (policy, a hook, the approver). */
export const toolDenials = Metric.counter("armature.tool.denials", {
  description: "Tool calls refused, by tool and reason",
  incremental: true
})

/** How long started calls executed, in milliseconds, tagged `gen_ai.tool.name`. */
export const toolDuration = Metric.histogram("armature.tool.duration", millis, "Execution time of tool calls in ms")

/** How long started calls waited in the queue, in milliseconds, tagged `gen_ai.tool.name`. */
export const toolQueueWait = Metric.histogram("armature.tool.queue_wait", millis, "Queue wait of tool calls in ms")

/** Calls executing now (raised when a call starts, lowered when it ends). */
export const toolExecuting = Metric.gauge("armature.tool.executing", { description: "Tool calls executing now" })

/** Model tokens, tagged `gen_ai.request.model` and `gen_ai.token.type` (input, output, cache_read, cache_write). */
export const modelTokens = Metric.counter("armature.model.tokens", {
  description: "Model tokens used, by model and token type",
  incremental: true
})

/** Model cost in US dollars (list prices), tagged `gen_ai.request.model`. */
export const modelCost = Metric.counter("armature.model.cost_usd", {
  description: "Model cost in USD at list prices, by model",
  incremental: true
})

type Labels = ReadonlyArray<MetricLabel.MetricLabel>

const labelCache = new Map<string, Labels>()

/** The same label array for the same pairs (the metric hooks are cached per array). */
const labels = (...pairs: ReadonlyArray<string>): Labels => {
  const key = pairs.join("\u0000")
  let cached = labelCache.get(key)
  if (cached === undefined) {
    const built: Array<MetricLabel.MetricLabel> = []
    for (let i = 0; i < pairs.length; i += 2) built.push(MetricLabel.make(pairs[i], pairs[i + 1]))
    cached = built
    labelCache.set(key, cached)
  }
  return cached
}

/** A tool's label arrays, kept per tool name: recording a call is then a map lookup, without building a key. */
interface ToolLabels {
  readonly tool: Labels
  readonly outcome: Map<string, Labels>
  readonly denial: Map<string, Labels>
}

const toolLabelCache = new Map<string, ToolLabels>()

const toolLabels = (tool: string): ToolLabels => {
  let cached = toolLabelCache.get(tool)
  if (cached === undefined) {
    cached = { tool: labels("gen_ai.tool.name", tool), outcome: new Map(), denial: new Map() }
    toolLabelCache.set(tool, cached)
  }
  return cached
}

const labelsIn = (cache: Map<string, Labels>, tool: string, key: string, value: string): Labels => {
  let cached = cache.get(value)
  if (cached === undefined) {
    cached = labels("gen_ai.tool.name", tool, key, value)
    cache.set(value, cached)
  }
  return cached
}

const none: Labels = []

/** A call started after waiting `queueWaitMs`. */
export const callStarted = (tool: string, queueWaitMs: number): void => {
  toolExecuting.unsafeModify(1, none)
  toolQueueWait.unsafeUpdate(queueWaitMs, toolLabels(tool).tool)
}

/** A call ended with `outcome`; `executedMs` is its execution time when it had started. */
export const callEnded = (tool: string, outcome: Outcome, executedMs: number | undefined): void => {
  const cached = toolLabels(tool)
  toolCalls.unsafeUpdate(1, labelsIn(cached.outcome, tool, "armature.outcome", kindOf(outcome)))
  if (outcome.denied !== undefined) {
    toolDenials.unsafeUpdate(1, labelsIn(cached.denial, tool, "armature.denial.reason", outcome.denied))
  }
  if (executedMs !== undefined) {
    toolExecuting.unsafeModify(-1, none)
    toolDuration.unsafeUpdate(executedMs, cached.tool)
  }
}

/** Records a model turn's tokens and cost. */
export const recordUsage = (model: string, usage: Usage): Effect.Effect<void> =>
  Effect.sync(() => {
    const add = (type: string, n: number) => {
      if (n > 0) modelTokens.unsafeUpdate(n, labels("gen_ai.request.model", model, "gen_ai.token.type", type))
    }
    add("input", usage.input_tokens)
    add("output", usage.output_tokens)
    add("cache_read", usage.cache_read_input_tokens)
    add("cache_write", usage.cache_creation_input_tokens)
    const cost = costOf(model, usage)
    if (cost > 0) modelCost.unsafeUpdate(cost, labels("gen_ai.request.model", model))
  })
