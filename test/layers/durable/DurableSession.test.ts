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
    const first = yield* DurableSession.make("exec-1")
    seen.results.a1 = yield* first.journal.record({ toolUseId: "a", toolName: "Bash", readOnly: false }, counted("a"))
    seen.results.turn1 = Chunk.toArray(yield* Stream.runCollect(first.model(model).stream(request)))
    yield* DurableStep.once("begin/b", Schema.String, Effect.succeed("exec-1"))
    yield* DurableStep.once("begin/c", Schema.String, Effect.succeed("exec-1"))

    const second = yield* DurableSession.make("exec-2")
    seen.results.a2 = yield* second.journal.record({ toolUseId: "a", toolName: "Bash", readOnly: false }, counted("a"))
    seen.results.turn2 = Chunk.toArray(yield* Stream.runCollect(second.model(model).stream(request)))
    seen.results.b = yield* second.journal.record({ toolUseId: "b", toolName: "Bash", readOnly: false }, counted("b"))
    seen.results.c = yield* second.journal.record({ toolUseId: "c", toolName: "Read", readOnly: true }, counted("c"))
    return "done"
  })

describe("DurableSession", () => {
  it.live("replays stored calls and turns; a call begun by a crashed execution is retried only when read-only", () =>
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
      expect(seen.runs).toEqual({ a: 1, model: 1, c: 1 })
      expect(seen.results.a1).toMatchObject({ content: "a ran", isError: false })
      expect(seen.results.a2).toMatchObject({ content: "a ran", isError: false })
      expect(seen.results.turn1).toEqual(turnEvents)
      expect(seen.results.turn2).toEqual(turnEvents)
      // b may have partly run: it is not run again, the model is told; c only reads: it runs again
      expect(seen.results.b).toMatchObject({ content: DurableSession.crashedText("Bash"), isError: true })
      expect(seen.results.c).toMatchObject({ content: "c ran", isError: false })
    })
  )
})
