import { expect, layer } from "@effect/vitest"
import { Chunk, Effect, Fiber, FastCheck as fc, Stream, TestClock } from "effect"
import type { ExecutorEvent, StateEvent, ToolCall } from "../../../src/domain/ExecutorEvent.js"
import { makeControl, ToolExecutor } from "../../../src/services/ToolExecutor.js"
import { executorLayer, results, use } from "./ExecutorHarness.js"

/** One random call: which test tool, how long, what goes wrong, and when it arrives (ms after the previous one). */
interface Spec {
  readonly tool: "Read" | "Write" | "Bash" | "Timed" | "Cancel" | "Nope"
  readonly ms: number
  readonly fault: "none" | "fail" | "die"
  readonly gap: number
}

const specArb: fc.Arbitrary<Spec> = fc.record({
  tool: fc.constantFrom("Read", "Read", "Write", "Bash", "Timed", "Cancel", "Nope"),
  ms: fc.integer({ min: 0, max: 40 }).map((n) => n * 100),
  fault: fc.constantFrom("none", "none", "none", "fail", "die"),
  gap: fc.integer({ min: 0, max: 10 }).map((n) => n * 100)
})

const batchArb = fc.record({
  specs: fc.array(specArb, { minLength: 1, maxLength: 12 }),
  maxConcurrency: fc.integer({ min: 1, max: 5 }),
  interruptAt: fc.option(
    fc.integer({ min: 0, max: 60 }).map((n) => n * 100 + 50),
    { nil: undefined }
  )
})

const isSafe = (tool: Spec["tool"]) => tool === "Read" || tool === "Timed" || tool === "Cancel" || tool === "Nope"
const runTime = (spec: Spec) => (spec.tool === "Timed" ? Math.min(spec.ms, 2000) : spec.ms)

/**
 * An ideal scheduler following the start rule of docs/executor.md ("Admission rules"), written independently of the
 * executor: event-driven over arrival and completion times. Arrivals are offset by 50 ms from every completion time so
 * that no tie needs ordering.
 */
const idealMakespan = (specs: ReadonlyArray<Spec>, arrivals: ReadonlyArray<number>, max: number): number => {
  const queued: Array<number> = []
  const running: Array<{ readonly i: number; readonly end: number }> = []
  let next = 0
  let t = 0
  let makespan = 0
  const done = new Set<number>()
  while (done.size < specs.length) {
    // advance to the next event
    const candidates = [...running.map((r) => r.end), ...(next < specs.length ? [arrivals[next]] : [])]
    t = Math.min(...candidates.filter((c) => c >= t))
    for (const r of running.filter((r) => r.end <= t)) {
      running.splice(running.indexOf(r), 1)
      done.add(r.i)
    }
    while (next < specs.length && arrivals[next] <= t) queued.push(next++)
    for (const i of [...queued]) {
      const safe = isSafe(specs[i].tool)
      const canStart =
        running.length < max && (running.length === 0 || (safe && running.every((r) => isSafe(specs[r.i].tool))))
      if (canStart) {
        queued.splice(queued.indexOf(i), 1)
        const end = t + runTime(specs[i])
        running.push({ i, end })
        makespan = Math.max(makespan, end)
        if (runTime(specs[i]) === 0) {
          // a zero-length call completes at once: let later calls see it gone in the same instant
          running.pop()
          done.add(i)
        }
      } else if (!safe) {
        break
      }
    }
  }
  return makespan
}

const toCalls = (specs: ReadonlyArray<Spec>): ReadonlyArray<ToolCall> =>
  specs.map((s, i) =>
    use(`c${i}`, s.tool, {
      ms: s.ms,
      ...(s.fault === "fail" ? { fail: true } : s.fault === "die" ? { die: true } : {})
    })
  )

const arrivalTimes = (specs: ReadonlyArray<Spec>): ReadonlyArray<number> => {
  let t = 50
  return specs.map((s, i) => {
    if (i > 0) t += s.gap
    return t
  })
}

const run = (
  specs: ReadonlyArray<Spec>,
  maxConcurrency: number,
  options: { readonly cancellation: "none" | "declared"; readonly interruptAt?: number | undefined }
) =>
  Effect.gen(function* () {
    const executor = yield* ToolExecutor
    const control = yield* makeControl
    const calls = toCalls(specs)
    const arrivals = arrivalTimes(specs)
    const input = Stream.fromIterable(
      calls.map((c, i) => [c, arrivals[i] - (i === 0 ? 0 : arrivals[i - 1])] as const)
    ).pipe(Stream.mapEffect(([call, wait]) => Effect.as(Effect.sleep(wait), call)))
    const fiber = yield* Effect.fork(
      Stream.runCollect(executor.execute(input, { maxConcurrency, cancellation: options.cancellation, control }))
    )
    if (options.interruptAt !== undefined) {
      yield* TestClock.adjust(options.interruptAt)
      yield* control.interrupt
    }
    yield* TestClock.adjust("1 hour")
    return { events: Chunk.toReadonlyArray(yield* Fiber.join(fiber)), calls, arrivals }
  })

const intervals = (events: ReadonlyArray<ExecutorEvent>) => {
  const states = events.filter((e): e is StateEvent => e.type === "state")
  const map = new Map<string, { start: number; end: number }>()
  for (const e of states) {
    if (e.state === "executing") map.set(e.tool_use_id, { start: e.t_ms, end: Number.POSITIVE_INFINITY })
    if (e.state === "completed" && map.has(e.tool_use_id)) map.get(e.tool_use_id)!.end = e.t_ms
  }
  return map
}

const checkInvariants = (
  events: ReadonlyArray<ExecutorEvent>,
  calls: ReadonlyArray<ToolCall>,
  specs: ReadonlyArray<Spec>,
  maxConcurrency: number
) => {
  // exactly one result per call, in request order
  expect(results(events).map((r) => r.tool_use_id)).toEqual(calls.map((c) => c.id))
  const spans = intervals(events)
  const list = [...spans.entries()]
  for (const [id, span] of list) {
    expect(span.end).toBeLessThan(Number.POSITIVE_INFINITY)
    const spec = specs[Number(id.slice(1))]
    if (!isSafe(spec.tool)) {
      // an unsafe call never overlaps another call
      for (const [other, o] of list) {
        if (other !== id) expect(o.start < span.end && span.start < o.end && span.end > span.start).toBe(false)
      }
    }
  }
  // never more than maxConcurrency executing
  for (const [, span] of list) {
    const at = span.start
    const count = list.filter(([, o]) => o.start <= at && at < o.end).length
    expect(count).toBeLessThanOrEqual(maxConcurrency)
  }
}

layer(executorLayer())("StreamingExecutor properties", (it) => {
  it.effect.prop(
    "exactly one ordered result, no unsafe overlap, the cap, and the ideal makespan",
    [batchArb],
    ([{ specs, maxConcurrency }]) =>
      Effect.gen(function* () {
        const known = specs.filter((s) => s.tool !== "Nope")
        const { events, calls, arrivals } = yield* run(known.length > 0 ? known : specs, maxConcurrency, {
          cancellation: "none"
        })
        const used = known.length > 0 ? known : specs
        checkInvariants(events, calls, used, maxConcurrency)
        if (known.length > 0) {
          const lastCompletion = Math.max(
            ...events.filter((e): e is StateEvent => e.type === "state" && e.state === "completed").map((e) => e.t_ms)
          )
          expect(lastCompletion).toBe(idealMakespan(used, arrivals, maxConcurrency))
        }
      }),
    { timeout: 180_000, fastCheck: { numRuns: 250 } }
  )

  it.effect.prop(
    "faults, cascades and interrupts never lose or duplicate a result",
    [batchArb],
    ([{ specs, maxConcurrency, interruptAt }]) =>
      Effect.gen(function* () {
        const { events, calls } = yield* run(specs, maxConcurrency, { cancellation: "declared", interruptAt })
        checkInvariants(events, calls, specs, maxConcurrency)
        for (const r of results(events)) {
          expect(typeof r.content === "string" ? r.content.length : r.content.length).toBeGreaterThan(0)
        }
      }),
    { timeout: 180_000, fastCheck: { numRuns: 250 } }
  )
})
