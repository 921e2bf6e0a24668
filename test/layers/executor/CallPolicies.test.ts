import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Either, Layer, Ref, Schema, TestClock } from "effect"
import { contentText } from "../../../src/domain/Blocks.js"
import { ToolFailure } from "../../../src/domain/Errors.js"
import type { ExecutorEvent, PolicyEvent, ResultEvent } from "../../../src/domain/ExecutorEvent.js"
import * as Settings from "../../../src/domain/Settings.js"
import * as Tool from "../../../src/domain/Tool.js"
import * as ToolPolicy from "../../../src/domain/ToolPolicy.js"
import * as StreamingExecutor from "../../../src/layers/executor/StreamingExecutor.js"
import * as ToolRegistryLive from "../../../src/layers/registry/ToolRegistryLive.js"
import * as MemoryResultStore from "../../../src/layers/results/MemoryResultStore.js"
import * as SessionLive from "../../../src/layers/session/SessionLive.js"
import * as Approver from "../../../src/services/Approver.js"
import * as Hooks from "../../../src/services/Hooks.js"
import * as PermissionPolicy from "../../../src/services/PermissionPolicy.js"
import * as ResultCache from "../../../src/services/ResultCache.js"
import * as ToolPolicies from "../../../src/services/ToolPolicies.js"
import * as ExecutorTest from "../../../src/testing/ExecutorTest.js"

const Input = Schema.Struct({
  key: Schema.String,
  /** How many attempts fail before one succeeds. */
  failures: Schema.optional(Schema.Number),
  /** The failures are the tool's own error results, not transient ones. */
  own: Schema.optional(Schema.Boolean),
  ms: Schema.optional(Schema.Number)
})

/** When each attempt started (virtual ms), by the input's `key` (unique per test). */
const log = Effect.runSync(Ref.make<ReadonlyArray<readonly [string, number]>>([]))

const flaky = (name: string, flags: Omit<Partial<Tool.Definition<typeof Input.Type, string>>, "input" | "output">) =>
  Tool.make({
    name,
    description: `${name}: fails as told, then answers`,
    input: Input,
    output: Schema.String,
    isConcurrencySafe: () => true,
    ...flags,
    call: (input) =>
      Effect.gen(function* () {
        const before = (yield* Ref.get(log)).filter(([k]) => k === input.key).length
        const now = yield* Clock.currentTimeMillis
        yield* Ref.update(log, (all) => [...all, [input.key, now] as const])
        if (input.ms !== undefined) yield* Effect.sleep(input.ms)
        if (before < (input.failures ?? 0)) {
          return yield* new ToolFailure({
            message: input.own === true ? "no such page" : `server said 503 (attempt ${before + 1})`,
            ...(input.own === true ? {} : { transient: true })
          })
        }
        return `ok ${input.key}`
      })
  }).pipe(Effect.orDie)

const startsOf = (key: string) => Effect.map(Ref.get(log), (all) => all.filter(([k]) => k === key).map(([, t]) => t))

const layerWith = (section: ToolPolicy.PoliciesSection) =>
  StreamingExecutor.layer().pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        ToolRegistryLive.register(flaky("Lookup", { isReadOnly: () => true })),
        ToolRegistryLive.register(flaky("Deploy", {})),
        ToolRegistryLive.register(flaky("Put", { isIdempotent: () => true })),
        ToolRegistryLive.register(
          flaky("Own", { isReadOnly: () => true, policy: { retry: { times: 1, baseMs: 50 }, timeoutMs: 100 } })
        ),
        ToolRegistryLive.register(flaky("mcp__gh__search", { isReadOnly: () => true })),
        ToolRegistryLive.register(flaky("mcp__gh__issue", { isReadOnly: () => true }))
      )
    ),
    Layer.provideMerge(ToolRegistryLive.layer),
    Layer.provideMerge(
      Layer.mergeAll(
        ToolPolicies.layerStatic(section),
        ResultCache.disabled,
        PermissionPolicy.allowAll,
        Approver.headless,
        Hooks.none,
        MemoryResultStore.layer,
        SessionLive.layer({ cwd: "/work" })
      )
    )
  )

const use = (id: string, name: string, input: typeof Input.Type) => ExecutorTest.toolUse(id, name, input)
const policyEvents = (events: ReadonlyArray<ExecutorEvent>) =>
  events.filter((e): e is PolicyEvent => e.type === "policy")
const resultOf = (events: ReadonlyArray<ExecutorEvent>, id: string) =>
  events.find((e): e is ResultEvent => e.type === "tool_result" && e.tool_use_id === id)!

describe("tool policies", () => {
  const retry = { retry: { times: 3, backoff: "exponential" as const, baseMs: 200 } }

  it.effect("retries a read-only call's transient failures with exponential backoff, and tells the model", () =>
    Effect.gen(function* () {
      const events = yield* ExecutorTest.run([use("a", "Lookup", { key: "backoff", failures: 2 })])
      expect(yield* startsOf("backoff")).toEqual([0, 200, 600])
      expect(policyEvents(events).map((e) => [e.action, e.t_ms, "delay_ms" in e ? e.delay_ms : undefined])).toEqual([
        ["retry", 0, 200],
        ["retry", 200, 400]
      ])
      const result = resultOf(events, "a")
      expect(result.is_error).toBe(false)
      expect(contentText(result.content)).toBe(
        "ok backoff\n[tool policy Lookup: succeeded after 2 retries of transient failures (last: server said 503 (attempt 2))]"
      )
    }).pipe(Effect.provide(layerWith({ Lookup: retry })))
  )

  it.effect("gives up after `times` retries with the last failure and the count", () =>
    Effect.gen(function* () {
      const events = yield* ExecutorTest.run([use("a", "Lookup", { key: "giveup", failures: 9 })])
      expect(yield* startsOf("giveup")).toEqual([0, 200, 600, 1400])
      const result = resultOf(events, "a")
      expect(result.is_error).toBe(true)
      expect(contentText(result.content)).toBe(
        "server said 503 (attempt 4)\n[tool policy Lookup: failed after 3 retries of transient failures (last: server said 503 (attempt 3))]"
      )
    }).pipe(Effect.provide(layerWith({ Lookup: retry })))
  )

  it.effect("never retries a writing call, and says why", () =>
    Effect.gen(function* () {
      const events = yield* ExecutorTest.run([use("w", "Deploy", { key: "write", failures: 1 })])
      expect(yield* startsOf("write")).toEqual([0])
      expect(policyEvents(events)).toEqual([])
      expect(contentText(resultOf(events, "w").content)).toBe(
        "server said 503 (attempt 1)\n[tool policy Deploy: not retried, as Deploy may have side effects (it is neither read-only nor idempotent)]"
      )
    }).pipe(Effect.provide(layerWith({ Deploy: retry })))
  )

  it.effect("retries a writing call declared idempotent", () =>
    Effect.gen(function* () {
      const events = yield* ExecutorTest.run([use("p", "Put", { key: "idem", failures: 1 })])
      expect(yield* startsOf("idem")).toEqual([0, 200])
      expect(resultOf(events, "p").is_error).toBe(false)
    }).pipe(Effect.provide(layerWith({ Put: retry })))
  )

  it.effect("never retries the tool's own error result", () =>
    Effect.gen(function* () {
      const events = yield* ExecutorTest.run([use("a", "Lookup", { key: "own", failures: 1, own: true })])
      expect(yield* startsOf("own")).toEqual([0])
      expect(contentText(resultOf(events, "a").content)).toBe("no such page")
    }).pipe(Effect.provide(layerWith({ Lookup: retry })))
  )

  it.effect("30 calls under a limit of 10 per second take 2 s; the waits are events and a line for the model", () =>
    Effect.gen(function* () {
      const calls = Array.from({ length: 30 }, (_, i) => use(`c${i}`, "mcp__gh__search", { key: `rate${i}` }))
      const events = yield* ExecutorTest.run(calls, { maxConcurrency: 30 })
      const times = calls.map((c) => resultOf(events, c.id).t_ms)
      expect(Math.max(...times)).toBe(2000)
      expect(times.filter((t) => t === 0)).toHaveLength(10)
      const waits = policyEvents(events).filter((e) => e.action === "rate_limit")
      expect(waits).toHaveLength(20)
      expect(waits.every((e) => e.key === "mcp__gh__*")).toBe(true)
      expect(contentText(resultOf(events, "c29").content)).toBe(
        "ok rate29\n[tool policy mcp__gh__*: waited 2.0 s for the rate limit]"
      )
    }).pipe(Effect.provide(layerWith({ "mcp__gh__*": { rateLimit: { limit: 10, intervalMs: 1000 } } })))
  )

  it.effect("a server key's limiter is shared by the server's tools", () =>
    Effect.gen(function* () {
      const calls = Array.from({ length: 4 }, (_, i) =>
        use(`c${i}`, i % 2 === 0 ? "mcp__gh__search" : "mcp__gh__issue", { key: `shared${i}` })
      )
      const events = yield* ExecutorTest.run(calls, { maxConcurrency: 4 })
      expect(calls.map((c) => resultOf(events, c.id).t_ms)).toEqual([0, 500, 1000, 1500])
    }).pipe(Effect.provide(layerWith({ mcp__gh: { rateLimit: { limit: 1, intervalMs: 500 } } })))
  )

  it.effect("a circuit opens after N failures, refuses at once, half-opens after its reset time and closes", () =>
    Effect.gen(function* () {
      const first = yield* ExecutorTest.run([use("a", "Lookup", { key: "cb1", failures: 5 })], {}, "1 second")
      const second = yield* ExecutorTest.run([use("b", "Lookup", { key: "cb2", failures: 5 })], {}, "1 second")
      expect(resultOf(first, "a").is_error && resultOf(second, "b").is_error).toBe(true)
      // open: refused without calling the tool, saying when it will be tried again
      const refused = yield* ExecutorTest.run([use("c", "Lookup", { key: "cb3" })], {}, "1 second")
      expect(yield* startsOf("cb3")).toEqual([])
      const text = contentText(resultOf(refused, "c").content)
      expect(text).toContain(
        "Tool Lookup was not called: its circuit breaker (Lookup) opened after 2 failures in a row"
      )
      expect(text).toContain("it will be tried again at 1970-01-01T00:00:31.000Z (in 29.0 s)")
      expect(policyEvents(refused)).toMatchObject([{ action: "circuit_open", key: "Lookup", retry_at: 31_000 }])
      // after the reset time one trial goes through; it succeeds and the circuit closes
      yield* TestClock.adjust("28 seconds")
      const trial = yield* ExecutorTest.run([use("d", "Lookup", { key: "cb4" })], {}, "1 second")
      expect(yield* startsOf("cb4")).toEqual([31_000])
      expect(resultOf(trial, "d").is_error).toBe(false)
      const after = yield* ExecutorTest.run([use("e", "Lookup", { key: "cb5" })], {}, "1 second")
      expect(resultOf(after, "e").is_error).toBe(false)
    }).pipe(Effect.provide(layerWith({ Lookup: { circuitBreaker: { failures: 2, resetMs: 30_000 } } })))
  )

  it.effect("a failed trial opens the circuit again", () =>
    Effect.gen(function* () {
      yield* ExecutorTest.run([use("a", "Lookup", { key: "re1", failures: 5 })], {}, "2 seconds")
      const trial = yield* ExecutorTest.run([use("b", "Lookup", { key: "re2", failures: 5 })], {}, "1 second")
      expect(yield* startsOf("re2")).toEqual([2000])
      expect(contentText(resultOf(trial, "b").content)).toBe("server said 503 (attempt 1)")
      const refused = yield* ExecutorTest.run([use("c", "Lookup", { key: "re3" })], {}, "1 second")
      expect(contentText(resultOf(refused, "c").content)).toContain("in 1.0 s")
    }).pipe(Effect.provide(layerWith({ Lookup: { circuitBreaker: { failures: 1, resetMs: 2000 } } })))
  )

  it.effect(
    "a timeout is transient: a read-only call that times out is retried; the text names the policy's timeout",
    () =>
      Effect.gen(function* () {
        const events = yield* ExecutorTest.run([use("a", "Own", { key: "slow", ms: 500 })])
        expect(yield* startsOf("slow")).toEqual([0, 150])
        expect(contentText(resultOf(events, "a").content)).toBe(
          "Tool Own timed out after 100 ms\n[tool policy Own: failed after 1 retry of transient failures (last: timed out after 100 ms)]"
        )
      }).pipe(Effect.provide(layerWith({})))
  )

  it.effect("settings override a tool's own policy field by field", () =>
    Effect.gen(function* () {
      const events = yield* ExecutorTest.run([use("a", "Own", { key: "override", ms: 500 })])
      expect(yield* startsOf("override")).toEqual([0])
      expect(resultOf(events, "a").is_error).toBe(false)
    }).pipe(Effect.provide(layerWith({ Own: { timeoutMs: 1000 } })))
  )
})

describe("ToolPolicy", () => {
  const tool = (name: string, policy?: ToolPolicy.Policy) => ({ name, aliases: [], policy })

  it("resolves keys like permission rules: the tool's own name beats its server's keys", () => {
    const table: ToolPolicy.Table = [
      ["mcp__gh__*", { timeoutMs: 1, retry: { times: 1 } }],
      ["mcp__gh__search", { timeoutMs: 2 }],
      ["mcp__other", { timeoutMs: 3 }]
    ]
    expect(ToolPolicy.resolve(tool("mcp__gh__search"), table)).toEqual({
      retry: { key: "mcp__gh__*", value: { times: 1 } },
      timeoutMs: { key: "mcp__gh__search", value: 2 },
      rateLimit: undefined,
      circuitBreaker: undefined
    })
    expect(ToolPolicy.resolve(tool("mcp__ghx__search"), table)).toBe(ToolPolicy.none)
    expect(ToolPolicy.resolve(tool("Read"), [["Read", { timeoutMs: 5 }]]).timeoutMs).toEqual({ key: "Read", value: 5 })
    expect(ToolPolicy.resolve(tool("Read", { timeoutMs: 9 }), []).timeoutMs).toEqual({ key: "Read", value: 9 })
  })

  it("the circuit breaker as a step function", () => {
    const policy = { failures: 2, resetMs: 100 }
    let state = ToolPolicy.settle(ToolPolicy.closed, policy, true, 0)
    expect(state).toEqual({ _tag: "Closed", failures: 1 })
    state = ToolPolicy.settle(state, policy, true, 10)
    expect(state).toEqual({ _tag: "Open", until: 110, failures: 2 })
    expect(ToolPolicy.admit(state, 109)).toEqual({ _tag: "Rejected", next: state, retryAt: 110 })
    const trial = ToolPolicy.admit(state, 110)
    expect(trial).toEqual({ _tag: "Admitted", next: { _tag: "HalfOpen", failures: 2 } })
    expect(ToolPolicy.admit(trial.next, 111)._tag).toBe("Rejected")
    expect(ToolPolicy.settle(trial.next, policy, false, 120)).toEqual(ToolPolicy.closed)
  })

  it("settings errors name the file, the key and the field", () => {
    const error = (json: unknown) => {
      const decoded = Settings.decode("/p/.claude/settings.json", JSON.stringify(json))
      return Either.isLeft(decoded) ? decoded.left.message : "no error"
    }
    expect(error({ toolPolicies: { "mcp__github__*": { retry: { times: -1 } } } })).toBe(
      'Invalid settings file /p/.claude/settings.json: at toolPolicies["mcp__github__*"].retry.times: Expected a non-negative number, actual -1'
    )
    expect(error({ toolPolicies: { Read: { retires: 3 } } })).toBe(
      'Invalid settings file /p/.claude/settings.json: at toolPolicies.Read: unknown field "retires" (expected "retry", "timeoutMs", "rateLimit", "circuitBreaker")'
    )
    expect(error({ toolPolicies: { "Bash(ls)": { timeoutMs: 5 } } })).toContain(
      'invalid tool policy key "Bash(ls)": expected a tool name, mcp__server or mcp__server__*'
    )
    expect(error({ toolPolicies: { Read: { retry: { times: 2, backoff: "random" } } } })).toContain(
      "toolPolicies.Read.retry.backoff"
    )
    expect(
      Either.isRight(
        Settings.decode(
          "s.json",
          JSON.stringify({
            toolPolicies: {
              "mcp__github__*": {
                retry: { times: 3, backoff: "exponential", baseMs: 200 },
                timeoutMs: 30000,
                rateLimit: { limit: 10, intervalMs: 1000 },
                circuitBreaker: { failures: 5, resetMs: 30000 }
              }
            }
          })
        )
      )
    ).toBe(true)
  })
})
