import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { plan, type Scheduling } from "../../src/domain/Admission.js"
import { type Claim, conflicts } from "../../src/domain/Resources.js"
import type { Resource } from "../../src/domain/Tool.js"

type Ready = { readonly ready: true; readonly id: number } & Claim
type Queued = { readonly ready: false; readonly id: number } | Ready

const resourceArb: fc.Arbitrary<Resource> = fc.record({
  key: fc.constantFrom("/a", "/a/b", "/a/c", "/b", "/ab"),
  access: fc.constantFrom<"read" | "write">("read", "write")
})
const claimArb: fc.Arbitrary<Claim> = fc.record({
  safe: fc.boolean(),
  resources: fc.array(resourceArb, { maxLength: 3 })
})
const queuedArb: fc.Arbitrary<ReadonlyArray<Queued>> = fc
  .array(fc.option(claimArb, { nil: undefined, freq: 5 }), { maxLength: 14 })
  .map((items) =>
    items.map((claim, id) => (claim === undefined ? { ready: false, id } : { ready: true, id, ...claim }))
  )
const situationArb = fc.record({
  queued: queuedArb,
  running: fc.array(claimArb, { maxLength: 5 }),
  cap: fc.integer({ min: 1, max: 6 }),
  scheduling: fc.constantFrom<Scheduling>("partition", "resources")
})

const many = { fastCheck: { numRuns: 10_000 } }

describe("Admission.plan", () => {
  it("the examples: safe calls share, an unsafe call runs alone and nothing overtakes it", () => {
    const r = (id: number, safe: boolean): Ready => ({ ready: true, id, safe, resources: [] })
    const ids = (started: ReadonlyArray<Queued>) => started.map((c) => c.id)
    const base = { running: [], cap: 10, scheduling: "partition" as const }
    expect(ids(plan({ ...base, queued: [r(0, true), r(1, true), r(2, false), r(3, true)] }))).toEqual([0, 1])
    expect(ids(plan({ ...base, queued: [r(0, false), r(1, true)] }))).toEqual([0])
    expect(ids(plan({ ...base, queued: [{ ready: false, id: 0 }, r(1, true)] }))).toEqual([1])
    expect(ids(plan({ ...base, running: [{ safe: false, resources: [] }], queued: [r(0, true)] }))).toEqual([])
    expect(ids(plan({ ...base, cap: 2, queued: [r(0, true), r(1, true), r(2, true)] }))).toEqual([0, 1])
    const w = (id: number, key: string): Ready => ({
      ready: true,
      id,
      safe: false,
      resources: [{ key, access: "write" }]
    })
    const resources = { running: [], cap: 10, scheduling: "resources" as const }
    expect(ids(plan({ ...resources, queued: [w(0, "/p/a"), w(1, "/p/b"), w(2, "/p/a"), r(3, false)] }))).toEqual([0, 1])
  })

  it.prop(
    "it neither mutates nor invents: the started calls are ready queued calls, in request order, each once",
    [situationArb],
    ([s]) => {
      const before = JSON.stringify(s)
      const started = plan(s)
      expect(JSON.stringify(s)).toBe(before)
      const positions = started.map((c) => s.queued.indexOf(c))
      expect(positions.every((p) => p >= 0 && s.queued[p].ready)).toBe(true)
      expect([...positions].sort((a, b) => a - b)).toEqual(positions)
      expect(new Set(positions).size).toBe(positions.length)
    },
    many
  )

  it.prop(
    "the cap is never exceeded by what it starts",
    [situationArb],
    ([s]) => {
      const started = plan(s)
      expect(started.length).toBeLessThanOrEqual(Math.max(0, s.cap - s.running.length))
    },
    many
  )

  it.prop(
    "partition: an unsafe call starts only alone, safe calls only beside safe calls, and the start is a maximal prefix",
    [situationArb],
    ([s0]) => {
      const s = { ...s0, scheduling: "partition" as const }
      const started = plan(s)
      const all = [...s.running, ...started]
      if (started.length > 0 && all.some((c) => !c.safe)) expect(all.length).toBe(1)
      // the started calls are a prefix of the ready calls
      const ready = s.queued.filter((c): c is Ready => c.ready)
      expect(started).toEqual(ready.slice(0, started.length))
      // and the next ready call could not have joined them
      const next = ready[started.length]
      if (next !== undefined) {
        const full = all.length >= s.cap
        const exclusive = all.some((c) => !c.safe)
        expect(full || exclusive || (!next.safe && all.length > 0)).toBe(true)
      }
    },
    many
  )

  it.prop(
    "resources: no two conflicting calls run together, none overtakes an earlier conflicting one, none is left idle",
    [situationArb],
    ([s0]) => {
      const s = { ...s0, scheduling: "resources" as const }
      const started = plan(s)
      const startedSet = new Set<Queued>(started)
      for (const [i, a] of started.entries()) {
        for (const b of [...s.running, ...started.slice(0, i)]) expect(conflicts(a, b)).toBe(false)
      }
      const ready = s.queued.filter((c): c is Ready => c.ready)
      for (const [i, c] of ready.entries()) {
        const earlierWaiting = ready.slice(0, i).filter((e) => !startedSet.has(e))
        if (startedSet.has(c)) {
          expect(earlierWaiting.some((e) => conflicts(c, e))).toBe(false)
        } else {
          const countBefore = s.running.length + ready.slice(0, i).filter((e) => startedSet.has(e)).length
          const clash = [...s.running, ...ready.slice(0, i)].some((e) => conflicts(c, e))
          expect(countBefore >= s.cap || clash).toBe(true)
        }
      }
    },
    many
  )

  it.prop(
    "driven to the end, every ready call starts exactly once and the invariants hold at every step",
    [situationArb, fc.array(fc.nat(4), { minLength: 14, maxLength: 14 })],
    ([s, durations]) => {
      // a discrete simulation: each started call runs for `durations[id]` steps (0 = completes at once)
      let queued = s.queued.filter((c): c is Ready => c.ready)
      let running: Array<{ readonly call: Ready; left: number }> = []
      const startedIds: Array<number> = []
      for (let step = 0; step < 1000 && (queued.length > 0 || running.length > 0); step++) {
        const started = plan({ ...s, queued, running: running.map((r) => r.call) })
        if (running.length === 0 && queued.length > 0) expect(started.length).toBeGreaterThan(0)
        startedIds.push(...started.map((c) => c.id))
        queued = queued.filter((c) => !started.includes(c))
        running = [...running, ...started.map((call) => ({ call, left: durations[call.id] }))]
        expect(running.length).toBeLessThanOrEqual(s.cap)
        if (s.scheduling === "partition" && running.some((r) => !r.call.safe)) expect(running.length).toBe(1)
        if (s.scheduling === "resources") {
          for (const [i, a] of running.entries()) {
            for (const b of running.slice(i + 1)) expect(conflicts(a.call, b.call)).toBe(false)
          }
        }
        for (const r of running) r.left--
        running = running.filter((r) => r.left >= 0)
      }
      expect([...startedIds].sort((a, b) => a - b)).toEqual(s.queued.filter((c) => c.ready).map((c) => c.id))
    },
    { fastCheck: { numRuns: 3_000 } }
  )
})

describe("Resources.conflicts", () => {
  it.prop(
    "is symmetric, and two safe calls never conflict",
    [claimArb, claimArb],
    ([a, b]) => {
      expect(conflicts(a, b)).toBe(conflicts(b, a))
      if (a.safe && b.safe) expect(conflicts(a, b)).toBe(false)
    },
    many
  )
})
