import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Fiber, Layer, Option, Ref, Schema, Stream, TestClock } from "effect"
import { contentText } from "../../../src/domain/Blocks.js"
import type { ResultEvent } from "../../../src/domain/ExecutorEvent.js"
import type * as PermissionRule from "../../../src/domain/PermissionRule.js"
import * as Tool from "../../../src/domain/Tool.js"
import * as ToolVersion from "../../../src/domain/ToolVersion.js"
import * as StreamingExecutor from "../../../src/layers/executor/StreamingExecutor.js"
import * as ToolRegistryLive from "../../../src/layers/registry/ToolRegistryLive.js"
import * as MemoryResultStore from "../../../src/layers/results/MemoryResultStore.js"
import * as SessionLive from "../../../src/layers/session/SessionLive.js"
import * as Approver from "../../../src/services/Approver.js"
import * as Hooks from "../../../src/services/Hooks.js"
import * as PermissionPolicy from "../../../src/services/PermissionPolicy.js"
import * as ResultCache from "../../../src/services/ResultCache.js"
import { Settings } from "../../../src/services/Settings.js"
import { ToolExecutor } from "../../../src/services/ToolExecutor.js"
import { ToolRegistry } from "../../../src/services/ToolRegistry.js"
import * as ExecutorTest from "../../../src/testing/ExecutorTest.js"

/** A tool that takes `ms` of virtual time and answers with its version. */
const deploy = (nameAtVersion: string, ms = 0) =>
  Tool.make({
    name: nameAtVersion,
    description: "Deploys",
    input: Schema.Struct({}),
    output: Schema.String,
    isConcurrencySafe: () => true,
    call: () => Effect.as(Effect.sleep(ms), `ran ${nameAtVersion}`)
  }).pipe(Effect.orDie)

const pinned = (toolVersions: Record<string, string>) =>
  Layer.effect(
    Settings,
    Effect.map(Ref.make<ReadonlyArray<PermissionRule.Rule>>([]), (sessionRules) =>
      Settings.of({
        permissions: { allow: [], ask: [], deny: [], defaultMode: "default", additionalDirectories: [] },
        hooks: {},
        settings: { toolVersions },
        sources: [],
        home: "/home",
        projectDir: "/p",
        sessionRules
      })
    )
  )

const active = Effect.flatMap(ToolRegistry, (r) =>
  Effect.map(
    r.lookup("Deploy"),
    Option.map((t) => Option.getOrUndefined(Option.fromNullable(t.version)))
  )
)

describe("tool versions", () => {
  it("name@version, ordering and pins", () => {
    expect(ToolVersion.parse("Deploy@1.2.0")).toEqual({ name: "Deploy", version: "1.2.0" })
    expect(ToolVersion.parse("Deploy")).toEqual({ name: "Deploy", version: undefined })
    expect(["1.10.0", "1.9.0", "2.0.0", "1.9.1"].sort(ToolVersion.compare)).toEqual([
      "1.9.0",
      "1.9.1",
      "1.10.0",
      "2.0.0"
    ])
    expect(ToolVersion.matches("1.x", "1.4.2")).toBe(true)
    expect(ToolVersion.matches("1", "1.4.2")).toBe(true)
    expect(ToolVersion.matches("1.x", "10.0.0")).toBe(false)
    expect(ToolVersion.matches("1.4.2", "1.4.2")).toBe(true)
  })

  it.effect("the registry serves the newest version; name@version finds any; versions lists them all", () =>
    Effect.gen(function* () {
      const registry = yield* ToolRegistry
      for (const v of ["1.9.0", "2.0.0", "1.10.0"]) yield* registry.register(yield* deploy(`Deploy@${v}`))
      expect(yield* active).toEqual(Option.some("2.0.0"))
      expect(Option.map(yield* registry.lookup("Deploy@1.9.0"), (t) => t.version)).toEqual(Option.some("1.9.0"))
      expect((yield* registry.pool()).map((t) => `${t.name}@${t.version}`)).toEqual(["Deploy@2.0.0"])
      expect((yield* registry.versions("Deploy")).map((t) => t.version)).toEqual(["1.9.0", "1.10.0", "2.0.0"])
      const dup = yield* Effect.flip(registry.register(yield* deploy("Deploy@2.0.0")))
      expect(dup._tag).toBe("DuplicateToolError")
      expect(yield* registry.unregister("Deploy@2.0.0")).toBe(true)
      expect(yield* active).toEqual(Option.some("1.10.0"))
    }).pipe(Effect.provide(ToolRegistryLive.layer))
  )

  it.effect("settings pin a version: the newest matching one is served", () =>
    Effect.gen(function* () {
      const registry = yield* ToolRegistry
      for (const v of ["1.9.0", "2.0.0", "1.10.0"]) yield* registry.register(yield* deploy(`Deploy@${v}`))
      expect(yield* active).toEqual(Option.some("1.10.0"))
    }).pipe(Effect.provide(ToolRegistryLive.layer.pipe(Layer.provide(pinned({ Deploy: "1.x" })))))
  )

  it.effect("a pin no registered version matches serves none", () =>
    Effect.gen(function* () {
      const registry = yield* ToolRegistry
      yield* registry.register(yield* deploy("Deploy@2.0.0"))
      expect(yield* active).toEqual(Option.none())
    }).pipe(Effect.provide(ToolRegistryLive.layer.pipe(Layer.provide(pinned({ Deploy: "3" })))))
  )

  it.effect(
    "a version registered while a call runs serves the calls that start after; the running one keeps its own",
    () =>
      Effect.gen(function* () {
        const registry = yield* ToolRegistry
        const executor = yield* ToolExecutor
        yield* registry.register(yield* deploy("Deploy@1.0.0", 1000))
        const first = yield* Effect.fork(
          Stream.runCollect(executor.runBatch([ExecutorTest.toolUse("a", "Deploy", {})]))
        )
        yield* TestClock.adjust(500)
        yield* registry.register(yield* deploy("Deploy@2.0.0", 1000))
        const second = yield* Effect.fork(
          Stream.runCollect(executor.runBatch([ExecutorTest.toolUse("b", "Deploy", {})]))
        )
        yield* TestClock.adjust(2000)
        const text = (events: Chunk.Chunk<unknown>) =>
          contentText(
            (Chunk.toReadonlyArray(events) as ReadonlyArray<ResultEvent>).find((e) => e.type === "tool_result")!.content
          )
        expect(text(yield* Fiber.join(first))).toBe("ran Deploy@1.0.0")
        expect(text(yield* Fiber.join(second))).toBe("ran Deploy@2.0.0")
      }).pipe(
        Effect.provide(
          StreamingExecutor.layer().pipe(
            Layer.provideMerge(ToolRegistryLive.layer),
            Layer.provideMerge(
              Layer.mergeAll(
                ResultCache.disabled,
                PermissionPolicy.allowAll,
                Approver.headless,
                Hooks.none,
                MemoryResultStore.layer,
                SessionLive.layer({ cwd: "/work" })
              )
            )
          )
        )
      )
  )
})

describe("tool versions in the events", () => {
  it.effect("the executing state of a versioned tool's call names the version it runs", () =>
    Effect.gen(function* () {
      const registry = yield* ToolRegistry
      yield* registry.register(yield* deploy("Deploy@1.2.0"))
      const events = yield* ExecutorTest.run([ExecutorTest.toolUse("a", "Deploy", {})])
      expect(events.filter((e) => e.type === "state").map((e) => [e.state, e.version])).toEqual([
        ["queued", undefined],
        ["executing", "1.2.0"],
        ["completed", undefined],
        ["yielded", undefined]
      ])
    }).pipe(
      Effect.provide(
        StreamingExecutor.layer().pipe(
          Layer.provideMerge(ToolRegistryLive.layer),
          Layer.provideMerge(
            Layer.mergeAll(
              ResultCache.disabled,
              PermissionPolicy.allowAll,
              Approver.headless,
              Hooks.none,
              MemoryResultStore.layer,
              SessionLive.layer({ cwd: "/work" })
            )
          )
        )
      )
    )
  )
})
