import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Workflow from "@effect/workflow/Workflow"
import { Effect, Layer, Option, Schema } from "effect"
import * as Tool from "../../../src/domain/Tool.js"
import * as DurableStore from "../../../src/layers/durable/DurableStore.js"
import * as ToolVersionPins from "../../../src/layers/durable/ToolVersionPins.js"
import * as ToolRegistryLive from "../../../src/layers/registry/ToolRegistryLive.js"
import { ToolRegistry } from "../../../src/services/ToolRegistry.js"

const deploy = (nameAtVersion: string) =>
  Tool.make({
    name: nameAtVersion,
    description: "Deploys",
    input: Schema.Struct({}),
    output: Schema.String,
    call: () => Effect.succeed(`ran ${nameAtVersion}`)
  }).pipe(Effect.orDie)

const PinWorkflow = Workflow.make({
  name: "ToolVersionPinsTest",
  payload: { id: Schema.String },
  success: Schema.Unknown,
  idempotencyKey: ({ id }) => id
})

/** The version `lookup("Deploy")` serves. */
const served = Effect.flatMap(ToolRegistry, (registry) =>
  Effect.map(registry.lookup("Deploy"), (tool) => Option.getOrUndefined(Option.map(tool, (t) => t.version)))
)

/** A process's registry: a fresh one with `versions` of Deploy registered. */
const registryWith = (...versions: ReadonlyArray<string>) =>
  versions
    .map((v) => ToolRegistryLive.register(deploy(`Deploy@${v}`)))
    .reduce((all, one) => Layer.merge(all, one), Layer.empty)
    .pipe(Layer.provideMerge(ToolRegistryLive.layer))

/**
 * One workflow execution standing for a session's life: the first process starts with Deploy 1.0.0 and 1.1.0; a
 * newer 2.0.0 is registered while it runs; a second process (a resume, with a fresh registry holding all three)
 * replays the step and goes on with 1.1.0, where a registry left alone serves 2.0.0.
 */
const body = Effect.gen(function* () {
  const first = yield* Effect.gen(function* () {
    const pinned = yield* ToolVersionPins.pin
    const registry = yield* ToolRegistry
    yield* registry.register(yield* deploy("Deploy@2.0.0"))
    return { pinned, served: yield* served }
  }).pipe(Effect.provide(registryWith("1.0.0", "1.1.0")))
  const unpinned = yield* served.pipe(Effect.provide(registryWith("1.0.0", "1.1.0", "2.0.0")))
  const resumed = yield* Effect.zipRight(ToolVersionPins.pin, served).pipe(
    Effect.provide(registryWith("1.0.0", "1.1.0", "2.0.0"))
  )
  return { first, unpinned, resumed }
})

describe("ToolVersionPins", () => {
  it.live("a durable session resumes with the tool versions it started with", () =>
    Effect.gen(function* () {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-version-pins-"))
      const location: DurableStore.Location = { _tag: "Sqlite", file: Path.join(dir, "s.db") }
      const layer = PinWorkflow.toLayer(() => Effect.orDie(body)).pipe(
        Layer.provideMerge(DurableStore.engineLayer(location)),
        Layer.provideMerge(DurableStore.sqlLayer(location))
      )
      const result = yield* PinWorkflow.execute({ id: "one" }).pipe(
        Effect.provide(layer),
        Effect.ensuring(Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true })))
      )
      expect(result).toEqual({
        // the step stored the active version at the start, and the newer one registered mid-run served no call
        first: { pinned: { Deploy: "1.1.0" }, served: "1.1.0" },
        unpinned: "2.0.0",
        resumed: "1.1.0"
      })
    })
  )
})
