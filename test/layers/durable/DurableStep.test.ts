import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Workflow from "@effect/workflow/Workflow"
import { Deferred, Effect, Exit, Fiber, Layer, Option, Schema } from "effect"
import * as DurableStep from "../../../src/layers/durable/DurableStep.js"
import * as DurableStore from "../../../src/layers/durable/DurableStore.js"

const StepWorkflow = Workflow.make({
  name: "DurableStepTest",
  payload: { id: Schema.String },
  success: Schema.String,
  idempotencyKey: ({ id }) => id
})

describe("DurableStep", () => {
  it.live(
    "the stored steps of an execution are read back by name; a value found among them is returned without the engine and without running the body",
    () =>
      Effect.gen(function* () {
        const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-durable-step-"))
        const file = Path.join(dir, "s.db")
        let runs = 0
        const stored = (name: string) => (name === "s" ? Option.some("stored") : Option.none())
        const layer = StepWorkflow.toLayer(({ id }) =>
          DurableStep.run(
            "s",
            Schema.String,
            Effect.sync(() => `ran ${++runs}`),
            () => "interrupted"
          ).pipe(id === "preloaded" ? Effect.provideService(DurableStep.StoredSteps, { get: stored }) : (e) => e)
        ).pipe(
          Layer.provideMerge(DurableStore.engineLayer({ _tag: "Sqlite", file })),
          Layer.provideMerge(DurableStore.sqlLayer({ _tag: "Sqlite", file }))
        )
        const { first, preloaded, read } = yield* Effect.gen(function* () {
          const first = yield* StepWorkflow.execute({ id: "first" })
          const read = yield* DurableStore.storedSteps(
            "DurableStepTest",
            yield* StepWorkflow.executionId({ id: "first" })
          )
          const preloaded = yield* StepWorkflow.execute({ id: "preloaded" })
          return { first, preloaded, read }
        }).pipe(Effect.provide(layer))
        Fs.rmSync(dir, { recursive: true, force: true })
        expect(first).toBe("ran 1")
        expect([...read]).toEqual([["s", "ran 1"]])
        expect(preloaded).toBe("stored")
        expect(runs).toBe(1)
      })
  )
})

describe("DurableStep's handler", () => {
  const slot = () => Effect.all({ started: Deferred.make<void>(), value: Deferred.make<Option.Option<unknown>>() })

  it.live(
    "serves the caller waiting at the step when it runs: one that went away before is left alone, a later one is served",
    () =>
      Effect.gen(function* () {
        const gone = yield* slot()
        DurableStep.arrive("e1/model/4", gone)
        DurableStep.leave("e1/model/4", gone)
        const handler = yield* Effect.fork(DurableStep.serve("e1/model/4", Schema.String, () => false))
        yield* Effect.sleep("50 millis")
        expect(handler.unsafePoll()).toBeNull()
        const next = yield* slot()
        DurableStep.arrive("e1/model/4", next)
        yield* Deferred.await(next.started)
        yield* Deferred.succeed(next.value, Option.some("asked again"))
        expect(yield* Fiber.join(handler)).toBe("asked again")
        expect(yield* Deferred.isDone(gone.started)).toBe(false)
      })
  )

  it.live(
    "ends interrupted, storing nothing, when no caller is there and the execution is leaving, or one left it undone",
    () =>
      Effect.gen(function* () {
        const leaving = yield* Effect.exit(DurableStep.serve("e2/tool/x", Schema.String, () => true))
        expect(Exit.isInterrupted(leaving)).toBe(true)
        const undone = yield* slot()
        DurableStep.arrive("e3/tool/x", undone)
        const handler = yield* Effect.fork(Effect.exit(DurableStep.serve("e3/tool/x", Schema.String, () => false)))
        yield* Deferred.await(undone.started)
        yield* Deferred.succeed(undone.value, Option.none())
        expect(Exit.isInterrupted(yield* Fiber.join(handler))).toBe(true)
      })
  )
})
