/**
 * A LanguageModel that plays a script instead of calling an API: each request is answered by the next scripted
 * turn, streamed as the Messages API would (message_start, text deltas, whole content blocks, message_delta,
 * message_stop). Blocks may arrive after a delay on Effect's Clock, so under `TestClock` a test decides exactly when
 * each tool_use block reaches the executor. No HTTP, no API key.
 */
import { Context, type Duration, Effect, Layer, Stream, SubscriptionRef } from "effect"
import * as Compaction from "../layers/agent/Compaction.js"
import {
  type AssistantContent,
  emptyUsage,
  LanguageModel,
  ModelError,
  type ModelEvent,
  type ModelRequest,
  type StopReason,
  type Usage
} from "../services/LanguageModel.js"

/** One block of a scripted turn; `delay` is the time after the previous block (default 0). */
export type ScriptedBlock =
  | { readonly type: "text"; readonly text: string; readonly delay?: Duration.DurationInput | undefined }
  | {
      readonly type: "tool_use"
      /** Defaults to `toolu_<turn>_<index>`. */
      readonly id?: string | undefined
      readonly name: string
      readonly input: unknown
      readonly delay?: Duration.DurationInput | undefined
    }

/** One assistant message. */
export interface ScriptedTurn {
  readonly blocks: ReadonlyArray<ScriptedBlock>
  /** Defaults to `tool_use` when the turn has a tool_use block, else `end_turn`. */
  readonly stopReason?: StopReason | undefined
  readonly usage?: Partial<Usage> | undefined
  /** Fails the stream after the blocks, as a cut connection would (a retryable ModelError). */
  readonly failAfterBlocks?: boolean | undefined
}

/** A turn, or a function of the request that makes it (to answer from the tool results sent back). */
export type ScriptStep = ScriptedTurn | ((request: ModelRequest) => ScriptedTurn)

/** What the scripted model saw: every request, in order. */
export class ScriptedRequests extends Context.Tag("armature/testing/ScriptedRequests")<
  ScriptedRequests,
  {
    readonly all: Effect.Effect<ReadonlyArray<ModelRequest>>
    /** Completes once `count` requests have been made (no polling: it follows the recorded requests). */
    readonly waitFor: (count: number) => Effect.Effect<void>
  }
>() {}

/** A text block. */
export const text = (value: string, delay?: Duration.DurationInput): ScriptedBlock => ({
  type: "text",
  text: value,
  delay
})

/** A tool_use block. */
export const toolUse = (
  name: string,
  input: unknown,
  options: { readonly id?: string; readonly delay?: Duration.DurationInput } = {}
): ScriptedBlock => ({ type: "tool_use", name, input, id: options.id, delay: options.delay })

/** A turn of blocks. */
export const turn = (...blocks: ReadonlyArray<ScriptedBlock>): ScriptedTurn => ({ blocks })

const toContent = (block: ScriptedBlock, turnIndex: number | string, index: number): AssistantContent =>
  block.type === "text"
    ? { type: "text", text: block.text }
    : { type: "tool_use", id: block.id ?? `toolu_${turnIndex}_${index}`, name: block.name, input: block.input }

const blockEventsOf = (block: ScriptedBlock, turnIndex: number | string, index: number): ReadonlyArray<ModelEvent> => {
  const whole: ModelEvent = { type: "content_block", index, block: toContent(block, turnIndex, index) }
  return block.type === "text" ? [{ type: "text_delta", index, text: block.text }, whole] : [whole]
}

/** The events of one scripted turn, each block after its delay. */
export const events = (
  script: ScriptedTurn,
  turnIndex: number | string,
  model: string
): Stream.Stream<ModelEvent, ModelError> => {
  const usage: Usage = { ...emptyUsage, ...script.usage }
  const hasToolUse = script.blocks.some((b) => b.type === "tool_use")
  const blockEvents = Stream.fromIterable(script.blocks.map((block, index) => [block, index] as const)).pipe(
    Stream.mapConcatEffect(([block, index]) =>
      Effect.as(
        block.delay === undefined ? Effect.void : Effect.sleep(block.delay),
        blockEventsOf(block, turnIndex, index)
      )
    )
  )
  const start: ModelEvent = {
    type: "message_start",
    id: `msg_scripted_${turnIndex}`,
    model,
    usage: { ...emptyUsage, input_tokens: usage.input_tokens }
  }
  const stop: ReadonlyArray<ModelEvent> = [
    { type: "message_delta", stopReason: script.stopReason ?? (hasToolUse ? "tool_use" : "end_turn"), usage },
    { type: "message_stop" }
  ]
  const end: Stream.Stream<ModelEvent, ModelError> = script.failAfterBlocks
    ? Stream.fail(new ModelError({ message: "scripted stream cut", retryable: true, phase: "stream" }))
    : Stream.fromIterable(stop)
  return Stream.succeed(start).pipe(Stream.concat(blockEvents), Stream.concat(end))
}

/**
 * Scripts of their own for requests that do not follow the main conversation's order: sub-agents (which run
 * concurrently) and compaction requests. `laneOf` names the lane of a request (undefined: the main script); each
 * lane plays its turns in order; ids default to `toolu_<lane>_<turn>_<index>`.
 */
export interface Lanes {
  readonly laneOf: (request: ModelRequest) => string | undefined
  readonly lanes: Readonly<Record<string, ReadonlyArray<ScriptStep>>>
}

/** Whether a request is the agent loop's compaction request (its summary is the turn's text). */
export const isCompactionRequest = Compaction.isCompactionRequest

/** The system prompt of a request as one text (to route a sub-agent's requests by its definition's prompt). */
export const systemText = (request: ModelRequest): string => request.system.map((b) => b.text).join("\n")

/** Lanes for compaction requests (`compaction`) and for sub-agents whose system prompt contains a given text. */
export const lanes = (options: {
  readonly compaction?: ReadonlyArray<ScriptStep> | undefined
  readonly subagents?: Readonly<Record<string, ReadonlyArray<ScriptStep>>> | undefined
}): Lanes => ({
  laneOf: (request) =>
    isCompactionRequest(request)
      ? "compaction"
      : Object.keys(options.subagents ?? {}).find((marker) => systemText(request).includes(marker)),
  lanes: { compaction: options.compaction ?? [], ...options.subagents }
})

/** Makes the scripted model; a request beyond its script fails with a ModelError naming the request number. */
export const make = (script: ReadonlyArray<ScriptStep>, routes?: Lanes) =>
  Effect.gen(function* () {
    const requests = yield* SubscriptionRef.make<ReadonlyArray<ModelRequest>>([])
    const played = new Map<string, number>()
    const model = LanguageModel.of({
      stream: (request) =>
        Stream.unwrap(
          SubscriptionRef.modify(requests, (all) => [all.length, [...all, request]] as const).pipe(
            Effect.map((overall) => {
              const lane = routes?.laneOf(request)
              const steps = lane === undefined ? script : (routes?.lanes[lane] ?? [])
              const key = lane ?? ""
              const index = played.get(key) ?? 0
              played.set(key, index + 1)
              const step = steps[index]
              if (step === undefined) {
                return Stream.fail(
                  new ModelError({
                    message:
                      lane === undefined
                        ? `The script has ${script.length} turn(s); request ${overall + 1} has none`
                        : `The script of lane ${lane} has ${steps.length} turn(s); its request ${index + 1} has none`,
                    retryable: false,
                    phase: "request"
                  })
                )
              }
              const turnIndex = lane === undefined ? index : `${lane}_${index}`
              return events(typeof step === "function" ? step(request) : step, turnIndex, request.model)
            })
          )
        )
    })
    const waitFor = (count: number) =>
      requests.changes.pipe(
        Stream.takeUntil((all) => all.length >= count),
        Stream.runDrain
      )
    return { model, requests: ScriptedRequests.of({ all: SubscriptionRef.get(requests), waitFor }) }
  })

/** The scripted model as a layer, with `ScriptedRequests` to inspect what it was asked. */
export const layer = (
  script: ReadonlyArray<ScriptStep>,
  routes?: Lanes
): Layer.Layer<LanguageModel | ScriptedRequests> =>
  Layer.effectContext(
    Effect.map(make(script, routes), ({ model, requests }) =>
      Context.make(LanguageModel, model).pipe(Context.add(ScriptedRequests, requests))
    )
  )
