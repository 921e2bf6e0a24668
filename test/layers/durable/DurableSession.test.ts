import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Workflow from "@effect/workflow/Workflow"
import { Chunk, Effect, Layer, Schema, Stream } from "effect"
import type { Outcome } from "../../../src/domain/Outcome.js"
import * as DurableSession from "../../../src/layers/durable/DurableSession.js"
import * as DurableStep from "../../../src/layers/durable/DurableStep.js"
import * as DurableStore from "../../../src/layers/durable/DurableStore.js"
import type { ModelEvent, ModelRequest } from "../../../src/services/LanguageModel.js"

const ok = (text: string): Outcome => ({
  content: text,
  isError: false,
  continue: true,
  stopReason: undefined,
  modifier: undefined,
  executionFailed: false
})

const request: ModelRequest = { model: "m", maxTokens: 10, system: [], tools: [], messages: [] }
const usage = { input_tokens: 1, output_tokens: 2, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }
const turnEvents: ReadonlyArray<ModelEvent> = [
  { type: "message_start", id: "msg_1", model: "m", usage },
  { type: "content_block", index: 0, block: { type: "text", text: "hello" } },
  { type: "message_delta", stopReason: "end_turn", usage },
  { type: "message_stop" }
]

/** What the executions of the test workflow saw: how often each body ran, and what came back. */
interface Seen {
  readonly runs: Record<string, number>
  readonly results: Record<string, unknown>
}

const TestWorkflow = Workflow.make({
  name: "DurableSessionTest",
  payload: { id: Schema.String },
  success: Schema.Unknown,
  idempotencyKey: ({ id }) => id
})

/** The calls whose process got past its gate (CallProcesses' start marks): only b. */
const started = (toolUseId: string) => Effect.succeed(toolUseId === "b")

/**
 * One workflow execution standing for a session's life: a first process ("exec-1") runs a call and a turn, a
 * second one ("exec-2", as after a crash) replays them; calls b and c were begun by exec-1 and never finished.
 */
const body = (seen: Seen) =>
  Effect.gen(function* () {
    const counted = (name: string) =>
      Effect.sync(() => {
        seen.runs[name] = (seen.runs[name] ?? 0) + 1
        return ok(`${name} ran`)
      })
    const model = {
      stream: () =>
        Stream.fromIterable(turnEvents).pipe(
          Stream.ensuring(
            Effect.sync(() => {
              seen.runs.model = (seen.runs.model ?? 0) + 1
            })
          )
        )
    }
    const first = yield* DurableSession.make({ execution: "exec-1", started })
    seen.results.a1 = yield* first.journal.record({ toolUseId: "a", toolName: "Bash", readOnly: false }, counted("a"))
    seen.results.turn1 = Chunk.toArray(yield* Stream.runCollect(first.model(model).stream(request)))
    yield* DurableStep.once("begin/b", Schema.String, Effect.succeed("exec-1"))
    yield* DurableStep.once("begin/c", Schema.String, Effect.succeed("exec-1"))
    // d was begun by exec-1 too, which died before its process was started (b's process was: it has a start mark)
    yield* DurableStep.once("begin/d", Schema.String, Effect.succeed("exec-1"))

    const second = yield* DurableSession.make({ execution: "exec-2", started })
    seen.results.a2 = yield* second.journal.record({ toolUseId: "a", toolName: "Bash", readOnly: false }, counted("a"))
    seen.results.turn2 = Chunk.toArray(yield* Stream.runCollect(second.model(model).stream(request)))
    seen.results.b = yield* second.journal.record({ toolUseId: "b", toolName: "Bash", readOnly: false }, counted("b"))
    seen.results.c = yield* second.journal.record({ toolUseId: "c", toolName: "Read", readOnly: true }, counted("c"))
    seen.results.d = yield* second.journal.record({ toolUseId: "d", toolName: "Bash", readOnly: false }, counted("d"))
    return "done"
  })

describe("DurableSession", () => {
  it.live(
    "replays stored calls and turns; a call begun by a crashed execution is retried only when read-only or provably never started",
    () =>
      Effect.gen(function* () {
        const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-durable-session-"))
        const location: DurableStore.Location = { _tag: "Sqlite", file: Path.join(dir, "s.db") }
        const seen: Seen = { runs: {}, results: {} }
        const layer = TestWorkflow.toLayer(() => Effect.orDie(body(seen))).pipe(
          Layer.provideMerge(DurableStore.engineLayer(location)),
          Layer.provideMerge(DurableStore.sqlLayer(location))
        )
        const result = yield* TestWorkflow.execute({ id: "one" }).pipe(Effect.provide(layer))
        Fs.rmSync(dir, { recursive: true, force: true })
        expect(result).toBe("done")
        // a ran once; the replay got its stored outcome; the model was asked once and its turn replayed whole
        expect(seen.runs).toEqual({ a: 1, model: 1, c: 1, d: 1 })
        expect(seen.results.a1).toMatchObject({ content: "a ran", isError: false })
        expect(seen.results.a2).toMatchObject({ content: "a ran", isError: false })
        expect(seen.results.turn1).toEqual(turnEvents)
        expect(seen.results.turn2).toEqual(turnEvents)
        // b may have partly run: it is not run again, the model is told; c only reads: it runs again
        expect(seen.results.b).toMatchObject({ content: DurableSession.crashedText("Bash"), isError: true })
        expect(seen.results.c).toMatchObject({ content: "c ran", isError: false })
        // d never started its process: it runs now, once, instead of being reported as a crash
        expect(seen.results.d).toMatchObject({ content: "d ran", isError: false })
      })
  )
})

const NestedWorkflow = Workflow.make({
  name: "DurableSessionNestedTest",
  payload: { id: Schema.String },
  success: Schema.Unknown,
  idempotencyKey: ({ id }) => id
})

/** A model whose n-th response says `reply n`. */
const countingModel = (runs: { model: number }) => ({
  stream: () =>
    Stream.suspend(() => {
      runs.model++
      return Stream.make<Array<ModelEvent>>(
        { type: "message_start", id: `msg_${runs.model}`, model: "m", usage },
        { type: "content_block", index: 0, block: { type: "text", text: `reply ${runs.model}` } },
        { type: "message_stop" }
      )
    })
})

const texts = (events: ReadonlyArray<ModelEvent>) =>
  events.flatMap((e) => (e.type === "content_block" && e.block.type === "text" ? [e.block.text] : []))

describe("DurableSession, a sub-agent's turns", () => {
  it.live("are numbered apart: a replayed sub-agent call does not shift the session's own turns", () =>
    Effect.gen(function* () {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-durable-nested-"))
      const location: DurableStore.Location = { _tag: "Sqlite", file: Path.join(dir, "s.db") }
      const runs = { model: 0 }
      const seen: Record<string, ReadonlyArray<string>> = {}
      const session = (execution: string) =>
        Effect.gen(function* () {
          const durable = yield* DurableSession.make({ execution })
          const model = durable.model(countingModel(runs))
          const turn = Effect.map(Stream.runCollect(model.stream(request)), (c) => texts(Chunk.toArray(c)))
          const first = yield* turn
          // an Agent call: its sub-agent asks the model once, inside the call
          const agent = yield* durable.journal.record(
            { toolUseId: "toolu_agent", toolName: "Agent", readOnly: false },
            Effect.map(Effect.orDie(turn), (t) => ok(t.join()))
          )
          const second = yield* turn
          seen[execution] = [...first, String(agent.content), ...second]
        })
      const layer = NestedWorkflow.toLayer(() =>
        Effect.orDie(Effect.zipRight(session("exec-1"), session("exec-2")))
      ).pipe(
        Layer.provideMerge(DurableStore.engineLayer(location)),
        Layer.provideMerge(DurableStore.sqlLayer(location))
      )
      yield* NestedWorkflow.execute({ id: "nested" }).pipe(Effect.provide(layer))
      Fs.rmSync(dir, { recursive: true, force: true })
      expect(seen["exec-1"]).toEqual(["reply 1", "reply 2", "reply 3"])
      // replayed whole: the model is not asked again, and the session's second turn is its own
      expect(seen["exec-2"]).toEqual(["reply 1", "reply 2", "reply 3"])
      expect(runs.model).toBe(3)
    })
  )
})
