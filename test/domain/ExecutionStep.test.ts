/**
 * The executor's state as a pure step, driven without any fiber: generated scripts of arrivals, exits, interrupts,
 * aborts, input ends and discards are folded through `ExecutionStep.step`, a small driver plays the running calls
 * (a call only exits after its start command; an interrupted call exits interrupted), and the invariants are checked
 * after every step.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, FiberId, FastCheck as fc, Schema } from "effect"
import type { Scheduling } from "../../src/domain/Admission.js"
import * as ExecutionStep from "../../src/domain/ExecutionStep.js"
import type { ExecutorEvent, ToolCall } from "../../src/domain/ExecutorEvent.js"
import { errorOutcome, type Outcome } from "../../src/domain/Outcome.js"
import * as Texts from "../../src/domain/Texts.js"
import * as Tool from "../../src/domain/Tool.js"

type Kind = "Read" | "Write" | "Bash" | "Cancel" | "Nope"

const Input = Schema.Struct({ n: Schema.Number, path: Schema.optional(Schema.String) })

interface Flags {
  readonly isConcurrencySafe?: () => boolean
  readonly isReadOnly?: () => boolean
  readonly cancelsSiblingsOnError?: boolean
  readonly interruptBehavior?: "cancel" | "block"
}

const makeTool = (name: Kind, flags: Flags): Tool.Any =>
  Effect.runSync(
    Tool.make({
      name,
      description: name,
      input: Input,
      output: Schema.String,
      summarize: (input) => `n=${input.n}`,
      resources: (input) =>
        input.path === undefined ? [] : [{ key: input.path, access: name === "Write" ? "write" : "read" }],
      ...flags,
      call: () => Effect.succeed("ok")
    })
  )

const tools: Record<Kind, Tool.Any | undefined> = {
  Read: makeTool("Read", { isConcurrencySafe: () => true, isReadOnly: () => true }),
  Write: makeTool("Write", {}),
  Bash: makeTool("Bash", { cancelsSiblingsOnError: true, interruptBehavior: "cancel" }),
  Cancel: makeTool("Cancel", { isConcurrencySafe: () => true, interruptBehavior: "cancel" }),
  Nope: undefined
}
const isSafe = (kind: Kind) => kind === "Read" || kind === "Cancel"

/** One scripted move; which call an exit concerns is chosen among the running ones by `pick`. */
type Move =
  | { readonly _tag: "Arrive"; readonly kind: Kind; readonly bad: boolean; readonly path: string | undefined }
  | { readonly _tag: "Exit"; readonly pick: number; readonly how: "ok" | "fail" | "die" }
  | { readonly _tag: "Interrupt"; readonly all: boolean }
  | { readonly _tag: "End" }
  | { readonly _tag: "Discard" }

const moveArb: fc.Arbitrary<Move> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      _tag: fc.constant("Arrive" as const),
      kind: fc.constantFrom<Kind>("Read", "Read", "Write", "Bash", "Cancel", "Nope"),
      bad: fc.boolean().map((b) => b && Math.random() < 0.2),
      path: fc.option(fc.constantFrom("/a", "/a/b", "/c"), { nil: undefined })
    })
  },
  {
    weight: 6,
    arbitrary: fc.record({
      _tag: fc.constant("Exit" as const),
      pick: fc.nat(20),
      how: fc.constantFrom<"ok" | "fail" | "die">("ok", "ok", "ok", "fail", "die")
    })
  },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("Interrupt" as const), all: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constant({ _tag: "End" as const }) },
  { weight: 1, arbitrary: fc.constant({ _tag: "Discard" as const }) }
)

const scriptArb = fc.record({
  moves: fc.array(moveArb, { minLength: 1, maxLength: 40 }),
  cap: fc.integer({ min: 1, max: 5 }),
  scheduling: fc.constantFrom<Scheduling>("partition", "resources"),
  cancellation: fc.constantFrom<ExecutionStep.CancellationPolicy>("declared", "any-error", "none")
})

const ok = (n: number): Outcome => ({
  content: `ok ${n}`,
  isError: false,
  continue: true,
  stopReason: undefined,
  modifier: undefined,
  executionFailed: false
})
const failed: Outcome = { ...errorOutcome("failed"), executionFailed: true }

/** What the driver saw over a whole script. */
interface Run {
  readonly calls: Array<{ readonly id: string; readonly kind: Kind }>
  readonly events: Array<ExecutorEvent>
  readonly running: Map<number, { readonly interrupted: boolean }>
  state: ExecutionStep.State
  discarded: boolean
  finished: boolean
}

/**
 * Folds a script through `step`, checking the invariants that hold after every step: the cap, an unsafe call
 * alone (partition), no start or event after the end, and the state left unchanged by the step.
 */
const drive = (
  script: typeof scriptArb extends fc.Arbitrary<infer S> ? S : never,
  onStep?: (
    before: ExecutionStep.State,
    message: ExecutionStep.Message,
    after: ExecutionStep.State,
    commands: ExecutionStep.Commands
  ) => void,
  /** Consecutive exits are stepped as one `ExitedAll` message (as the owner of a collected batch does). */
  groupExits = false
): Run => {
  const run: Run = {
    calls: [],
    events: [],
    running: new Map(),
    state: ExecutionStep.make({
      cap: script.cap,
      scheduling: script.scheduling,
      cancellation: script.cancellation,
      detailed: true
    }),
    discarded: false,
    finished: false
  }
  let t = 0
  const apply = (message: ExecutionStep.Message) => {
    const before = run.state
    const seen = JSON.stringify(observe(before))
    const [state, commands] = ExecutionStep.step(before, message)
    // pure: the state passed in is as it was, and stepping it again gives the same commands
    expect(JSON.stringify(observe(before))).toBe(seen)
    const [, again] = ExecutionStep.step(before, message)
    expect(again.events).toEqual(commands.events)
    expect(again.start.map((s) => s.call.index)).toEqual(commands.start.map((s) => s.call.index))
    run.state = state
    onStep?.(before, message, state, commands)
    if (run.finished) {
      expect(commands.events).toEqual([])
      expect(commands.start).toEqual([])
    }
    run.events.push(...commands.events)
    for (const s of commands.start) run.running.set(s.call.index, { interrupted: false })
    for (const e of commands.ended) run.running.delete(e.call.index)
    for (const i of commands.interrupt) {
      if (run.running.has(i)) run.running.set(i, { interrupted: true })
    }
    if (commands.discarded) {
      expect(commands.interrupt.slice().sort()).toEqual([...run.running.keys()].sort())
      run.discarded = true
      run.running.clear()
    }
    if (commands.finished) run.finished = true
    // the cap, and an unsafe call alone under partition scheduling
    expect(run.running.size).toBeLessThanOrEqual(script.cap)
    const kinds = [...run.running.keys()].map((i) => run.calls[i].kind)
    if (script.scheduling === "partition" && kinds.some((k) => !isSafe(k))) expect(kinds.length).toBe(1)
  }
  let ended = false
  let exits: Array<{ readonly index: number; readonly exit: Exit.Exit<Outcome>; readonly ran: undefined }> = []
  const flush = () => {
    if (exits.length > 0 && !run.discarded) apply({ _tag: "ExitedAll", exits, t })
    exits = []
  }
  for (const move of script.moves) {
    t += 10
    if (groupExits && move._tag !== "Exit") flush()
    if (run.discarded) break
    switch (move._tag) {
      case "Arrive": {
        if (ended) break
        const id = `c${run.calls.length}`
        run.calls.push({ id, kind: move.kind })
        const input = move.bad ? { n: "x" } : { n: run.calls.length, ...(move.path ? { path: move.path } : {}) }
        const call: ToolCall = { type: "tool_use", id, name: move.kind, input }
        apply({ _tag: "Arrive", call, tool: tools[move.kind], discovered: new Set(), t })
        break
      }
      case "Exit": {
        const running = [...run.running.entries()].filter(([i]) => !exits.some((e) => e.index === i))
        if (running.length === 0) break
        const [index, { interrupted }] = running[move.pick % running.length]
        const exit: Exit.Exit<Outcome> = interrupted
          ? Exit.interrupt(FiberId.none)
          : move.how === "ok"
            ? Exit.succeed(ok(index))
            : move.how === "fail"
              ? Exit.succeed(failed)
              : Exit.failCause(Cause.die("boom"))
        if (groupExits) exits.push({ index, exit, ran: undefined })
        else apply({ _tag: "Exited", index, exit, ran: undefined, t })
        break
      }
      case "Interrupt":
        apply({ _tag: "Interrupt", all: move.all, t })
        break
      case "End":
        if (!ended) apply({ _tag: "InputEnded", t })
        ended = true
        break
      case "Discard":
        apply({ _tag: "Discard", t })
        break
    }
  }
  flush()
  // the rest of the run: the input ends and every running call exits, oldest first
  if (!run.discarded) {
    t += 10
    if (!ended) apply({ _tag: "InputEnded", t })
    while (run.running.size > 0) {
      t += 10
      const [index, { interrupted }] = [...run.running.entries()][0]
      apply({
        _tag: "Exited",
        index,
        exit: interrupted ? Exit.interrupt(FiberId.none) : Exit.succeed(ok(index)),
        ran: undefined,
        t
      })
    }
  }
  return run
}

/** What can be read of a state from outside. */
const observe = (state: ExecutionStep.State) => ({
  finished: ExecutionStep.isFinished(state),
  progress: Array.from({ length: state.arrived }, (_, i) => {
    const p = ExecutionStep.progressOf(state, i)
    return p === undefined ? "yielded" : p._tag === "Completed" ? `completed ${String(p.outcome.content)}` : p._tag
  })
})

const results = (run: Run) => run.events.filter((e) => e.type === "tool_result")

const many = { fastCheck: { numRuns: 2_000 } }

describe("ExecutionStep.step", () => {
  it.prop(
    "results leave in request order, one per call, and every call gets one unless the execution was discarded",
    [scriptArb],
    ([script]) => {
      const run = drive(script)
      const ids = results(run).map((e) => e.tool_use_id)
      expect(ids).toEqual(run.calls.slice(0, ids.length).map((c) => c.id))
      if (!run.discarded) {
        expect(ids.length).toBe(run.calls.length)
        expect(run.finished).toBe(true)
      }
    },
    many
  )

  it.prop(
    "calls that ended together, stepped as one ExitedAll message: results in request order, one per call",
    [scriptArb],
    ([script]) => {
      const run = drive(script, undefined, true)
      const ids = results(run).map((e) => e.tool_use_id)
      expect(ids).toEqual(run.calls.slice(0, ids.length).map((c) => c.id))
      if (!run.discarded) {
        expect(ids.length).toBe(run.calls.length)
        expect(run.finished).toBe(true)
      }
    },
    many
  )

  it.prop(
    "each call moves queued → executing → completed → yielded, skipping only what it never reached",
    [scriptArb],
    ([script]) => {
      const run = drive(script)
      const order = ["queued", "executing", "completed", "yielded"]
      for (const { id } of run.calls) {
        const states = run.events.flatMap((e) => (e.type === "state" && e.tool_use_id === id ? [e.state] : []))
        const ranks = states.map((s) => order.indexOf(s))
        expect(ranks).toEqual([...ranks].sort())
        expect(new Set(states).size).toBe(states.length)
        expect(states[0]).toBe("queued")
      }
    },
    many
  )

  it.prop(
    "a cascading failure cancels every sibling not yet completed, and the calls that come after it",
    [scriptArb],
    ([script]) => {
      let checked = 0
      drive(script, (before, message, after, commands) => {
        if (before.siblingError !== undefined || after.siblingError === undefined) {
          // the sibling error is set once, only by a cascade, and every call arriving later gets it
          const refused = before.siblingError !== undefined && !before.interrupted
          if (refused && message._tag === "Arrive" && message.tool !== undefined) {
            expect(ExecutionStep.outcomeOf(after, after.arrived - 1)).toBe(before.siblingError)
          }
          expect(after.siblingError).toBe(before.siblingError ?? after.siblingError)
          return
        }
        checked++
        // a cascade comes from a call that ran and failed, of a tool the policy lets cascade
        expect(message._tag).toBe("Exited")
        if (message._tag !== "Exited") return
        const failedCall = ExecutionStep.arrivedAt(before, message.index)
        expect(script.cancellation === "any-error" || failedCall.tool?.cancelsSiblingsOnError === true).toBe(true)
        for (let i = before.yielded; i < before.arrived; i++) {
          if (i === message.index) continue
          const was = ExecutionStep.progressOf(before, i)
          if (was?._tag === "Queued") expect(ExecutionStep.outcomeOf(after, i)).toBe(after.siblingError)
          if (was?._tag === "Running" && was.cancel === undefined) expect(commands.interrupt).toContain(i)
        }
      })
      return checked <= 1
    },
    many
  )

  it("a cascading failure: queued siblings complete at once, running ones are interrupted", () => {
    let state = ExecutionStep.make({ cap: 5, scheduling: "partition", cancellation: "declared", detailed: false })
    const call = (id: string, name: Kind): ToolCall => ({ type: "tool_use", id, name, input: { n: 1 } })
    const arrive = (c: ToolCall) => {
      const [next, commands] = ExecutionStep.step(state, {
        _tag: "Arrive",
        call: c,
        tool: tools[c.name as Kind],
        discovered: new Set(),
        t: 0
      })
      state = next
      return commands
    }
    expect(arrive(call("b", "Bash")).start.map((s) => s.call.call.id)).toEqual(["b"])
    expect(arrive(call("r1", "Read")).start).toEqual([])
    const [afterFailure, commands] = ExecutionStep.step(state, {
      _tag: "Exited",
      index: 0,
      exit: Exit.succeed(failed),
      ran: undefined,
      t: 5
    })
    state = afterFailure
    // the queued Read completed with the sibling error; nothing starts
    expect(commands.start).toEqual([])
    expect(commands.events.map((e) => (e.type === "tool_result" ? [e.tool_use_id, e.content] : []))).toEqual([
      ["b", "failed"],
      ["r1", Texts.siblingErrored("Bash", "n=1")]
    ])
    // a call arriving later is refused with the same result
    const late = arrive(call("r2", "Read"))
    expect(late.start).toEqual([])
    expect(late.events).toEqual([
      expect.objectContaining({ tool_use_id: "r2", content: Texts.siblingErrored("Bash", "n=1") })
    ])
    // a running sibling is interrupted and completes with the sibling error when its fiber ends
    let s2 = ExecutionStep.make({ cap: 5, scheduling: "partition", cancellation: "any-error", detailed: false })
    for (const [i, id] of ["r1", "r2"].entries()) {
      s2 = ExecutionStep.step(s2, {
        _tag: "Arrive",
        call: call(id, "Read"),
        tool: tools.Read,
        discovered: new Set(),
        t: i
      })[0]
    }
    const [s3, cascade] = ExecutionStep.step(s2, {
      _tag: "Exited",
      index: 0,
      exit: Exit.succeed(failed),
      ran: undefined,
      t: 3
    })
    expect(cascade.interrupt).toEqual([1])
    const [, last] = ExecutionStep.step(s3, {
      _tag: "Exited",
      index: 1,
      exit: Exit.interrupt(FiberId.none),
      ran: undefined,
      t: 4
    })
    expect(last.events).toEqual([
      expect.objectContaining({ tool_use_id: "r2", content: Texts.siblingErrored("Read", "n=1") })
    ])
  })

  it.prop(
    "a discard ends everything: every running call is interrupted, and nothing is emitted or started after it",
    [scriptArb, fc.nat(40)],
    ([script, at]) => {
      const moves = [...script.moves]
      moves.splice(Math.min(at, moves.length), 0, { _tag: "Discard" })
      const run = drive({ ...script, moves })
      expect(run.discarded).toBe(true)
      expect(ExecutionStep.isFinished(run.state)).toBe(true)
      const [, after] = ExecutionStep.step(run.state, { _tag: "InputEnded", t: 1e9 })
      expect(after.events).toEqual([])
      expect(after.start).toEqual([])
    },
    many
  )

  it.prop(
    "partition scheduling starts calls in request order among the ready ones",
    [scriptArb.map((s) => ({ ...s, scheduling: "partition" as const }))],
    ([script]) => {
      const run = drive(script)
      const started = run.events.flatMap((e) => (e.type === "state" && e.state === "executing" ? [e.tool_use_id] : []))
      const indices = started.map((id) => Number(id.slice(1)))
      expect(indices).toEqual([...indices].sort((a, b) => a - b))
    },
    many
  )
})

describe("ExecutionStep.step, a whole batch", () => {
  const arrivalArb = fc.record({
    kind: fc.constantFrom<Kind>("Read", "Read", "Write", "Bash", "Cancel", "Nope"),
    bad: fc.boolean().map((b) => b && Math.random() < 0.2),
    path: fc.option(fc.constantFrom("/a", "/a/b", "/c"), { nil: undefined })
  })
  const batchArb = fc.record({
    arrivals: fc.array(arrivalArb, { minLength: 1, maxLength: 12 }),
    cap: fc.integer({ min: 1, max: 5 }),
    scheduling: fc.constantFrom<Scheduling>("partition", "resources"),
    cancellation: fc.constantFrom<ExecutionStep.CancellationPolicy>("declared", "any-error", "none"),
    detailed: fc.boolean()
  })

  /** Everything a step's commands say, state events aside. */
  const said = (commands: ReadonlyArray<ExecutionStep.Commands>) => ({
    start: commands.flatMap((c) => c.start.map((s) => [s.call.index, s.input])),
    ended: commands.flatMap((c) => c.ended.map((e) => [e.call.index, e.outcome.content])),
    results: commands.flatMap((c) => c.events.filter((e) => e.type !== "state")),
    finished: commands.some((c) => c.finished)
  })

  it.prop(
    "a Batch message starts, ends and yields what its calls arriving one by one and the input's end would",
    [batchArb],
    ([batch]) => {
      const settings = { cap: batch.cap, scheduling: batch.scheduling, cancellation: batch.cancellation }
      const calls = batch.arrivals.map(({ kind, bad, path }, i) => ({
        call: {
          type: "tool_use",
          id: `c${i}`,
          name: kind,
          input: bad ? { n: "x" } : { n: i, ...(path ? { path } : {}) }
        } satisfies ToolCall,
        tool: tools[kind]
      }))
      const discovered = new Set<string>()
      const [whole, wholeCommands] = ExecutionStep.step(ExecutionStep.make({ ...settings, detailed: batch.detailed }), {
        _tag: "Batch",
        calls,
        discovered,
        t: 10
      })
      let state = ExecutionStep.make({ ...settings, detailed: batch.detailed })
      const oneByOne: Array<ExecutionStep.Commands> = []
      for (const message of [
        ...calls.map(({ call, tool }): ExecutionStep.Message => ({ _tag: "Arrive", call, tool, discovered, t: 10 })),
        { _tag: "InputEnded", t: 10 } as const
      ]) {
        const [next, commands] = ExecutionStep.step(state, message)
        state = next
        oneByOne.push(commands)
      }
      expect(said([wholeCommands])).toEqual(said(oneByOne))
      expect(observe(whole)).toEqual(observe(state))
      // the same state events, grouped by kind rather than call by call
      const states = (commands: ReadonlyArray<ExecutionStep.Commands>) =>
        commands
          .flatMap((c) => c.events.flatMap((e) => (e.type === "state" ? [`${e.tool_use_id} ${e.state}`] : [])))
          .sort()
      expect(states([wholeCommands])).toEqual(states(oneByOne))
    },
    many
  )
})

describe("ExecutionStep.Slots", () => {
  type Op =
    | { readonly _tag: "Copy"; readonly advance: number }
    | { readonly _tag: "Set"; readonly offset: number; readonly n: number }
    | { readonly _tag: "Delete"; readonly offset: number }
  const opArb: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ _tag: fc.constant("Copy" as const), advance: fc.nat(3) }),
    fc.record({ _tag: fc.constant("Set" as const), offset: fc.nat(12), n: fc.nat(1000) }),
    fc.record({ _tag: fc.constant("Delete" as const), offset: fc.nat(12) })
  )
  const progress = (n: number): ExecutionStep.Progress => ({
    _tag: "Completed",
    outcome: errorOutcome(`r${n}`),
    safe: true,
    input: n
  })

  it.prop(
    "a copy reads like a Map of the slots from its start on, and writing to it leaves the copies before it as they were",
    [fc.array(opArb, { maxLength: 60 })],
    ([ops]) => {
      let from = 0
      let slots = ExecutionStep.Slots.empty.copyFrom(0)
      let model = new Map<number, ExecutionStep.Progress>()
      const earlier: Array<{ from: number; slots: ExecutionStep.Slots; model: Map<number, ExecutionStep.Progress> }> =
        []
      for (const op of ops) {
        if (op._tag === "Copy") {
          earlier.push({ from, slots, model })
          from += op.advance
          slots = slots.copyFrom(from)
          model = new Map([...model].filter(([i]) => i >= from))
        } else if (op._tag === "Set") {
          slots.set(from + op.offset, progress(op.n))
          model.set(from + op.offset, progress(op.n))
        } else {
          slots.delete(from + op.offset)
          model.delete(from + op.offset)
        }
      }
      for (const s of [...earlier, { from, slots, model }]) {
        for (let i = s.from; i < s.from + 20; i++) expect(s.slots.get(i)).toEqual(s.model.get(i))
      }
    }
  )
})
