import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, FiberId, Layer, Queue, Schema, Stream } from "effect"
import * as Armature from "../../../src/Armature.js"
import { emptyOutcome, type HookEvent, type HookInput, type HookOutcome } from "../../../src/domain/Hook.js"
import * as Texts from "../../../src/domain/Texts.js"
import * as Tool from "../../../src/domain/Tool.js"
import * as AgentLoop from "../../../src/layers/agent/AgentLoop.js"
import * as AnthropicLanguageModel from "../../../src/layers/model/AnthropicLanguageModel.js"
import * as ToolSearch from "../../../src/layers/tools/ToolSearch.js"
import { Hooks } from "../../../src/services/Hooks.js"
import * as PermissionPolicy from "../../../src/services/PermissionPolicy.js"
import type { ToolRegistry } from "../../../src/services/ToolRegistry.js"
import * as MessagesServer from "../../fixtures/MessagesServer.js"

/** What the Probe tool saw: start times and run counts per key. */
interface ProbeLog {
  readonly starts: Array<{ key: string; at: number }>
  readonly finished: Array<string>
  started: Deferred.Deferred<void> | undefined
  /** Completed when the key's call has finished (made on first use, by a waiter or by the call). */
  readonly finishedGates: Map<string, Deferred.Deferred<void>>
}

const makeProbeLog = (): ProbeLog => ({ starts: [], finished: [], started: undefined, finishedGates: new Map() })

const finishedGate = (log: ProbeLog, key: string): Deferred.Deferred<void> => {
  let gate = log.finishedGates.get(key)
  if (gate === undefined) {
    gate = Deferred.unsafeMake<void>(FiberId.none)
    log.finishedGates.set(key, gate)
  }
  return gate
}

/**
 * A test tool: records when it starts, waits `ms` (real time), answers `probe {key}`. Orders that must not depend on
 * how busy the machine is come from the input instead of from times: `after` waits until the call of that key has
 * finished, and `holdFirst` keeps the key's first run going until it is interrupted (a later run finishes).
 */
const probeTool = (
  log: ProbeLog,
  name = "Probe",
  extra: { readonly interruptBehavior?: "cancel" | "block"; readonly isConcurrencySafe?: () => boolean } = {}
) =>
  Tool.make({
    name,
    description: "Test probe",
    input: Schema.Struct({
      key: Schema.String,
      ms: Schema.Number,
      after: Schema.optional(Schema.String),
      holdFirst: Schema.optional(Schema.Boolean)
    }),
    output: Schema.String,
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    interruptBehavior: "cancel",
    ...extra,
    call: (input) =>
      Effect.gen(function* () {
        const first = !log.starts.some((start) => start.key === input.key)
        log.starts.push({ key: input.key, at: Date.now() })
        if (log.started !== undefined) yield* Deferred.succeed(log.started, undefined)
        if (input.holdFirst === true && first) yield* Effect.never
        if (input.after !== undefined) yield* Deferred.await(finishedGate(log, input.after))
        yield* Effect.sleep(Duration.millis(input.ms))
        log.finished.push(input.key)
        yield* Deferred.succeed(finishedGate(log, input.key), undefined)
        return `probe ${input.key}`
      })
  })

const hooksWith = (f: (event: HookEvent, input: HookInput) => HookOutcome | undefined) =>
  Layer.succeed(Hooks, Hooks.of({ run: (event, input) => Effect.succeed(f(event, input) ?? emptyOutcome) }))

interface Setup {
  readonly url: string
  readonly log: ProbeLog
  readonly stateDir: string
  readonly sessionId?: string
  readonly hooks?: Layer.Layer<Hooks>
  readonly tools?: ReadonlyArray<Effect.Effect<Tool.Any, unknown, ToolRegistry>>
}

const layerFor = (setup: Setup) =>
  Armature.layerNode({
    cwd: setup.stateDir,
    stateDir: setup.stateDir,
    sessionId: setup.sessionId,
    settingSources: [],
    builtins: false,
    tools: [probeTool(setup.log), ...(setup.tools ?? [])],
    resultStore: "memory",
    transcript: true,
    model: AnthropicLanguageModel.layer({
      apiKey: "test-key",
      baseURL: setup.url,
      retry: { baseDelay: "5 millis", maxDelay: "20 millis", maxAttempts: 4 }
    }),
    overrides: { policy: PermissionPolicy.allowAll, hooks: setup.hooks ?? hooksWith(() => undefined) }
  })

const tempDir = () => Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-agent-"))

const run = (setup: Setup, options: AgentLoop.RunOptions) =>
  AgentLoop.run({ retry: { baseDelay: "5 millis", maxDelay: "20 millis", maxAttempts: 4 }, ...options }).pipe(
    Effect.provide(layerFor(setup))
  )

const userBlocks = (request: MessagesServer.RecordedRequest, index: number) =>
  request.body.messages[index].content as ReadonlyArray<Record<string, unknown>>

const lastUserBlocks = (request: MessagesServer.RecordedRequest) =>
  userBlocks(request, request.body.messages.length - 1)

const probe = (
  id: string,
  key: string,
  ms: number,
  order: { readonly after?: string; readonly holdFirst?: boolean } = {}
): MessagesServer.ScriptBlock => ({
  type: "tool_use",
  id,
  name: "Probe",
  input: { key, ms, ...order }
})

const readTranscript = (path: string) =>
  Fs.readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>)

describe("AgentLoop", () => {
  it.scopedLive("starts a tool while the model is still streaming, and sends its result in the next request", () =>
    Effect.gen(function* () {
      const log = makeProbeLog()
      const server = yield* MessagesServer.make([
        MessagesServer.message(
          [probe("toolu_1", "a", 20), { type: "text", text: "Now I keep talking for a while after the call." }],
          { pacingMs: 25, chunk: 4 }
        ),
        MessagesServer.message([{ type: "text", text: "All done." }])
      ])
      const stateDir = tempDir()
      const result = yield* run({ url: server.url, log, stateDir }, { prompt: "probe a" })
      expect(result.subtype).toBe("success")
      expect(result.result).toBe("All done.")
      expect(result.num_turns).toBe(2)
      expect(log.starts).toHaveLength(1)
      // The tool started well before the first message_stop was sent.
      expect(server.messageStops[0] - log.starts[0].at).toBeGreaterThan(200)
      expect(lastUserBlocks(server.requests[1])).toEqual([
        { type: "tool_result", tool_use_id: "toolu_1", content: "probe a" }
      ])
      expect(server.requests[1].body.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"])
    })
  )

  it.scopedLive("assistantEvents: block reports each block as it completes and each result as it is yielded", () =>
    Effect.gen(function* () {
      const later = "And now a long text that streams well after the probe has answered."
      const script = () => [
        MessagesServer.message(
          [{ type: "text", text: "First." }, probe("toolu_1", "a", 20), { type: "text", text: later }],
          {
            pacingMs: 40,
            chunk: 4
          }
        ),
        MessagesServer.message([{ type: "text", text: "All done." }])
      ]
      const seen = (mode: "block" | "message") =>
        Effect.gen(function* () {
          const server = yield* MessagesServer.make(script())
          const events: Array<AgentLoop.AgentEvent> = []
          const stateDir = tempDir()
          const result = yield* run(
            { url: server.url, log: makeProbeLog(), stateDir },
            { prompt: "probe a", assistantEvents: mode, onEvent: (e) => Effect.sync(() => void events.push(e)) }
          )
          expect(result.subtype).toBe("success")
          const transcript = readTranscript(Path.join(stateDir, "transcripts", `${result.session_id}.jsonl`))
          const recorded = transcript.filter((l) => l.type === "assistant").map((l) => l.message)
          return { events, recorded }
        })
      const shape = (events: ReadonlyArray<AgentLoop.AgentEvent>) =>
        events.flatMap((e) =>
          e.type === "assistant" || e.type === "user"
            ? [`${e.type}:${(e.message.content as ReadonlyArray<{ type: string }>).map((b) => b.type).join("+")}`]
            : []
        )
      const block = yield* seen("block")
      expect(shape(block.events)).toEqual([
        "assistant:text",
        "assistant:tool_use",
        "user:tool_result",
        "assistant:text",
        "assistant:text"
      ])
      const ids = block.events.flatMap((e) => (e.type === "assistant" ? [e.message.id] : []))
      expect(ids[0]).toMatch(/^msg_/)
      expect(new Set(ids.slice(0, 3)).size).toBe(1)
      expect(ids[3]).not.toBe(ids[0])
      const message = yield* seen("message")
      expect(shape(message.events)).toEqual(["assistant:text+tool_use+text", "user:tool_result", "assistant:text"])
      // the transcript holds whole messages either way
      expect(block.recorded).toEqual(message.recorded)
    })
  )

  it.scopedLive("sends results back in request order, whatever order they complete in", () =>
    Effect.gen(function* () {
      const log = makeProbeLog()
      const server = yield* MessagesServer.make([
        // each call finishes only after the one it names: the completion order is fast, mid, slow however busy
        // the machine (and if the calls did not run concurrently, slow would wait for mid forever)
        MessagesServer.message([
          probe("toolu_a", "slow", 0, { after: "mid" }),
          probe("toolu_b", "fast", 5),
          probe("toolu_c", "mid", 0, { after: "fast" })
        ]),
        MessagesServer.message([{ type: "text", text: "ok" }])
      ])
      const result = yield* run({ url: server.url, log, stateDir: tempDir() }, { prompt: "three" })
      expect(result.subtype).toBe("success")
      expect(log.finished).toEqual(["fast", "mid", "slow"])
      expect(lastUserBlocks(server.requests[1])).toEqual([
        { type: "tool_result", tool_use_id: "toolu_a", content: "probe slow" },
        { type: "tool_result", tool_use_id: "toolu_b", content: "probe fast" },
        { type: "tool_result", tool_use_id: "toolu_c", content: "probe mid" }
      ])
    })
  )

  it.scopedLive("retries a stream cut mid-way with a fresh executor and never runs a completed call twice", () =>
    Effect.gen(function* () {
      const log = makeProbeLog()
      const blocks = [
        probe("toolu_1", "a", 0),
        { type: "text" as const, text: "some text that will be cut off before it ends" },
        probe("toolu_2", "b", 0)
      ]
      const server = yield* MessagesServer.make([
        // Cut inside the text block, after toolu_1 completed and its result was yielded.
        MessagesServer.message(blocks, { pacingMs: 30, chunk: 6, cutAfter: 12 }),
        MessagesServer.message(blocks),
        MessagesServer.message([{ type: "text", text: "done" }])
      ])
      const events: Array<AgentLoop.AgentEvent> = []
      const result = yield* run(
        { url: server.url, log, stateDir: tempDir() },
        { prompt: "cut", onEvent: (e) => Effect.sync(() => events.push(e)) }
      )
      expect(result.subtype).toBe("success")
      expect(server.requests).toHaveLength(3)
      expect(log.starts.map((s) => s.key)).toEqual(["a", "b"])
      expect(events.filter((e) => e.type === "system" && e.subtype === "retry")).toHaveLength(1)
      expect(lastUserBlocks(server.requests[2])).toEqual([
        { type: "tool_result", tool_use_id: "toolu_1", content: "probe a" },
        { type: "tool_result", tool_use_id: "toolu_2", content: "probe b" }
      ])
    })
  )

  it.scopedLive("a call running when the stream is cut is interrupted and runs again on the retry", () =>
    Effect.gen(function* () {
      const log = makeProbeLog()
      // the first run is still going when the stream is cut, whatever the pacing of a busy machine
      const blocks = [
        probe("toolu_1", "long", 0, { holdFirst: true }),
        { type: "text" as const, text: "abcdefghijklmnopqrstuvwxyz" }
      ]
      const server = yield* MessagesServer.make([
        // events 1-14: message_start, ping, the tool_use block's start, its input in 10 pieces of 4 characters, its
        // stop; the cut comes after the text block's start and two of its pieces
        MessagesServer.message(blocks, { pacingMs: 25, chunk: 4, cutAfter: 17 }),
        MessagesServer.message(blocks),
        MessagesServer.message([{ type: "text", text: "done" }])
      ])
      const result = yield* run({ url: server.url, log, stateDir: tempDir() }, { prompt: "cut" })
      expect(result.subtype).toBe("success")
      expect(log.starts.map((s) => s.key)).toEqual(["long", "long"])
      expect(log.finished).toEqual(["long"])
      expect(lastUserBlocks(server.requests[2])).toEqual([
        { type: "tool_result", tool_use_id: "toolu_1", content: "probe long" }
      ])
    })
  )

  it.scopedLive("retries a 429 then succeeds", () =>
    Effect.gen(function* () {
      const log = makeProbeLog()
      const server = yield* MessagesServer.make([
        MessagesServer.status(429, "rate_limit_error", { "retry-after-ms": "10" }),
        MessagesServer.message([{ type: "text", text: "hello" }])
      ])
      const result = yield* run({ url: server.url, log, stateDir: tempDir() }, { prompt: "hi" })
      expect(result).toMatchObject({ subtype: "success", result: "hello", is_error: false, num_turns: 1 })
      expect(server.requests).toHaveLength(2)
    })
  )

  it.scopedLive("stops at maxTurns with every tool_use answered", () =>
    Effect.gen(function* () {
      const log = makeProbeLog()
      const server = yield* MessagesServer.make([
        MessagesServer.message([probe("toolu_1", "a", 0)]),
        MessagesServer.message([probe("toolu_2", "b", 0)]),
        MessagesServer.message([probe("toolu_3", "c", 0)])
      ])
      const stateDir = tempDir()
      const result = yield* run({ url: server.url, log, stateDir, sessionId: "s-max" }, { prompt: "loop", maxTurns: 2 })
      expect(result).toMatchObject({
        subtype: "error_max_turns",
        is_error: true,
        num_turns: 2,
        result: "Reached the maximum number of turns (2)"
      })
      expect(server.requests).toHaveLength(2)
      const lines = readTranscript(Path.join(stateDir, "transcripts", "s-max.jsonl"))
      const results = lines
        .filter((l) => l.type === "user")
        .flatMap((l) => (l.message as { content: ReadonlyArray<Record<string, unknown>> }).content)
        .filter((b) => b.type === "tool_result")
        .map((b) => b.tool_use_id)
      expect(results).toEqual(["toolu_1", "toolu_2"])
      expect(lines.at(-1)).toMatchObject({ type: "result", subtype: "error_max_turns", session_id: "s-max" })
    })
  )

  it.scopedLive("an abort (second interrupt) cancels every call and still answers every tool_use", () =>
    Effect.gen(function* () {
      const log = makeProbeLog()
      log.started = yield* Deferred.make<void>()
      const blockLog = makeProbeLog()
      blockLog.started = yield* Deferred.make<void>()
      const interrupts = yield* Queue.unbounded<void>()
      const blockTool = probeTool(blockLog, "Blocker", {
        interruptBehavior: "block",
        isConcurrencySafe: () => true
      })
      // both calls run until something stops them: without the abort the run would never end (the test's timeout)
      const server = yield* MessagesServer.make([
        MessagesServer.message(
          [
            probe("toolu_1", "long", 0, { holdFirst: true }),
            { type: "tool_use", id: "toolu_2", name: "Blocker", input: { key: "b", ms: 0, holdFirst: true } }
          ],
          { pacingMs: 5 }
        )
      ])
      const stateDir = tempDir()
      const started = [log.started, blockLog.started]
      yield* Effect.forkScoped(
        Effect.gen(function* () {
          // the interrupts come once both calls run (not after a time: a busy machine streams the second one later)
          yield* Effect.forEach(started, Deferred.await)
          yield* Effect.sleep("100 millis")
          yield* Queue.offer(interrupts, undefined)
          yield* Effect.sleep("20 millis")
          yield* Queue.offer(interrupts, undefined)
        })
      )
      const result = yield* run(
        { url: server.url, log, stateDir, sessionId: "s-abort", tools: [blockTool] },
        { prompt: "abort", interrupts: Stream.fromQueue(interrupts) }
      )
      expect({ probe: log.finished, blocker: blockLog.finished }).toEqual({ probe: [], blocker: [] })
      expect(result).toMatchObject({ subtype: "interrupted", is_error: true })
      expect(server.requests).toHaveLength(1)
      const lines = readTranscript(Path.join(stateDir, "transcripts", "s-abort.jsonl"))
      const user = lines.filter((l) => l.type === "user").at(-1) as { message: { content: unknown } }
      expect(user.message.content).toEqual([
        { type: "tool_result", tool_use_id: "toolu_1", content: Texts.rejected, is_error: true },
        { type: "tool_result", tool_use_id: "toolu_2", content: Texts.rejected, is_error: true }
      ])
    })
  )

  it.scopedLive("a first interrupt cancels 'cancel' calls, lets 'block' calls finish, and stops the run", () =>
    Effect.gen(function* () {
      const log = makeProbeLog()
      log.started = yield* Deferred.make<void>()
      const blockLog = makeProbeLog()
      blockLog.started = yield* Deferred.make<void>()
      const interrupts = yield* Queue.unbounded<void>()
      const blockTool = probeTool(blockLog, "Blocker", { interruptBehavior: "block" })
      // the Probe call runs until it is cancelled; the Blocker finishes by itself
      const server = yield* MessagesServer.make([
        MessagesServer.message([
          probe("toolu_1", "long", 0, { holdFirst: true }),
          { type: "tool_use", id: "toolu_2", name: "Blocker", input: { key: "b", ms: 200 } }
        ])
      ])
      const started = [log.started, blockLog.started]
      // the interrupt comes once both calls run (not after a time: a busy machine streams the second one later)
      yield* Effect.forkScoped(
        Effect.zipRight(
          Effect.forEach(started, Deferred.await),
          Effect.zipRight(Effect.sleep("50 millis"), Queue.offer(interrupts, undefined))
        )
      )
      const stateDir = tempDir()
      const result = yield* run(
        { url: server.url, log, stateDir, sessionId: "s-int", tools: [blockTool] },
        { prompt: "interrupt", interrupts: Stream.fromQueue(interrupts) }
      )
      expect(result.subtype).toBe("interrupted")
      const lines = readTranscript(Path.join(stateDir, "transcripts", "s-int.jsonl"))
      const user = lines.filter((l) => l.type === "user").at(-1) as { message: { content: unknown } }
      expect(user.message.content).toEqual([
        { type: "tool_result", tool_use_id: "toolu_1", content: Texts.rejected, is_error: true },
        { type: "tool_result", tool_use_id: "toolu_2", content: "probe b" }
      ])
    })
  )

  it.scopedLive("resumes a session from its transcript", () =>
    Effect.gen(function* () {
      const log = makeProbeLog()
      const stateDir = tempDir()
      const server = yield* MessagesServer.make([
        MessagesServer.message([probe("toolu_1", "a", 0)]),
        MessagesServer.message([{ type: "text", text: "first answer" }]),
        MessagesServer.message([{ type: "text", text: "second answer" }])
      ])
      const setup = { url: server.url, log, stateDir, sessionId: "s-resume" }
      const first = yield* run(setup, { prompt: "first" })
      expect(first.result).toBe("first answer")
      const second = yield* run(setup, { prompt: "second" })
      expect(second.result).toBe("second answer")
      const messages = server.requests[2].body.messages
      expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user"])
      expect(messages[0].content).toEqual([{ type: "text", text: "first" }])
      expect(messages[4].content).toEqual([{ type: "text", text: "second" }])
    })
  )

  it.scopedLive("UserPromptSubmit can block the prompt (no request is made) or add context", () =>
    Effect.gen(function* () {
      const log = makeProbeLog()
      const server = yield* MessagesServer.make([MessagesServer.message([{ type: "text", text: "ok" }])])
      const blocking = hooksWith((event) =>
        event === "UserPromptSubmit" ? { ...emptyOutcome, decision: "deny", reason: "no secrets" } : undefined
      )
      const blocked = yield* run({ url: server.url, log, stateDir: tempDir(), hooks: blocking }, { prompt: "x" })
      expect(blocked).toMatchObject({
        subtype: "error_prompt_blocked",
        result: "UserPromptSubmit hook blocked the prompt: no secrets"
      })
      expect(server.requests).toHaveLength(0)
      const seen: Array<HookEvent> = []
      const adding = hooksWith((event) => {
        seen.push(event)
        return event === "UserPromptSubmit"
          ? { ...emptyOutcome, additionalContext: ["Today is Sunday."] }
          : event === "SessionStart"
            ? { ...emptyOutcome, additionalContext: ["Project uses Effect."] }
            : undefined
      })
      const ok = yield* run({ url: server.url, log, stateDir: tempDir(), hooks: adding }, { prompt: "y" })
      expect(ok.subtype).toBe("success")
      expect(seen).toEqual(["SessionStart", "UserPromptSubmit", "Stop"])
      expect(server.requests[0].body.messages[0].content).toEqual([
        { type: "text", text: "y" },
        { type: "text", text: "Today is Sunday." }
      ])
      expect(JSON.stringify(server.requests[0].body.system)).toContain("Project uses Effect.")
    })
  )

  it.scopedLive(
    "a Stop hook that blocks sends its reason back once; continue:false on a result stops after the batch",
    () =>
      Effect.gen(function* () {
        const log = makeProbeLog()
        const server = yield* MessagesServer.make([
          MessagesServer.message([{ type: "text", text: "first" }]),
          MessagesServer.message([{ type: "text", text: "second" }]),
          MessagesServer.message([probe("toolu_1", "a", 0), probe("toolu_2", "b", 0)]),
          MessagesServer.message([{ type: "text", text: "never" }])
        ])
        const stopping = hooksWith((event) =>
          event === "Stop" ? { ...emptyOutcome, decision: "deny", reason: "run the tests first" } : undefined
        )
        const stopped = yield* run({ url: server.url, log, stateDir: tempDir(), hooks: stopping }, { prompt: "go" })
        expect(stopped).toMatchObject({ subtype: "success", result: "second", num_turns: 2 })
        expect(lastUserBlocks(server.requests[1])).toEqual([
          { type: "text", text: "Stop hook feedback:\nrun the tests first" }
        ])
        const halting = hooksWith((event) =>
          event === "PostToolUse" ? { ...emptyOutcome, continue: false, stopReason: "halt requested" } : undefined
        )
        const halted = yield* run({ url: server.url, log, stateDir: tempDir(), hooks: halting }, { prompt: "go" })
        expect(halted).toMatchObject({ subtype: "stopped_by_hook", result: "halt requested", num_turns: 1 })
        expect(server.requests).toHaveLength(3)
      })
  )

  it.scopedLive(
    "sends deferred tools by name only, with cache breakpoints on the last tool and the system prompt",
    () =>
      Effect.gen(function* () {
        const log = makeProbeLog()
        const deferred = Tool.make({
          name: "Zeta",
          description: "A deferred tool",
          input: Schema.Struct({}),
          output: Schema.String,
          shouldDefer: true,
          call: () => Effect.succeed("z")
        })
        const server = yield* MessagesServer.make([MessagesServer.message([{ type: "text", text: "ok" }])])
        yield* run(
          { url: server.url, log, stateDir: tempDir(), tools: [deferred] },
          { prompt: "x", model: "claude-haiku-4-5" }
        )
        const body = server.requests[0].body
        expect(body.model).toBe("claude-haiku-4-5")
        expect(body.tools?.map((t) => t.name)).toEqual(["Probe"])
        expect(body.tools?.at(-1)?.cache_control).toEqual({ type: "ephemeral" })
        const system = body.system as ReadonlyArray<{ text: string; cache_control: unknown }>
        expect(system.at(-1)?.cache_control).toEqual({ type: "ephemeral" })
        expect(system[0].text).toContain("<available-deferred-tools>\nZeta\n</available-deferred-tools>")
      })
  )

  it.scopedLive("accounts usage and cost", () =>
    Effect.gen(function* () {
      const server = yield* MessagesServer.make([
        MessagesServer.message([probe("toolu_1", "a", 0)], { inputTokens: 1000, outputTokens: 100 }),
        MessagesServer.message([{ type: "text", text: "ok" }], { inputTokens: 2000, outputTokens: 200 })
      ])
      const result = yield* run(
        { url: server.url, log: makeProbeLog(), stateDir: tempDir() },
        { prompt: "x", model: "claude-opus-4-1" }
      )
      expect(result.usage).toEqual({
        input_tokens: 3000,
        output_tokens: 300,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0
      })
      expect(result.total_cost_usd).toBeCloseTo((3000 * 15 + 300 * 75) / 1_000_000, 10)
    })
  )

  it.scopedLive("continues after pause_turn; stops with a clear message at max_tokens", () =>
    Effect.gen(function* () {
      const server = yield* MessagesServer.make([
        MessagesServer.message([{ type: "text", text: "Working" }], { stopReason: "pause_turn" }),
        MessagesServer.message([{ type: "text", text: "Finished." }]),
        MessagesServer.message([{ type: "text", text: "This answer is cut" }], { stopReason: "max_tokens" })
      ])
      const paused = yield* run({ url: server.url, log: makeProbeLog(), stateDir: tempDir() }, { prompt: "long" })
      expect(paused).toMatchObject({ subtype: "success", result: "Finished.", num_turns: 2 })
      expect(server.requests[1].body.messages.map((m) => m.role)).toEqual(["user", "assistant"])
      const cut = yield* run(
        { url: server.url, log: makeProbeLog(), stateDir: tempDir() },
        { prompt: "longer", maxTokens: 10 }
      )
      expect(cut).toMatchObject({
        subtype: "error_max_tokens",
        is_error: true,
        result:
          "The model's response was cut off at max_tokens (10) before it finished; raise --max-tokens or resume the session to continue."
      })
      expect(server.requests[2].body.max_tokens).toBe(10)
    })
  )

  it.scopedLive("a deferred tool found with ToolSearch is sent in full from the next turn on, and after a resume", () =>
    Effect.gen(function* () {
      const zeta = Tool.make({
        name: "Zeta",
        description: "A deferred tool",
        input: Schema.Struct({}),
        output: Schema.String,
        shouldDefer: true,
        call: () => Effect.succeed("z")
      })
      const server = yield* MessagesServer.make([
        MessagesServer.message([
          { type: "tool_use", id: "toolu_s", name: "ToolSearch", input: { query: "select:Zeta" } }
        ]),
        MessagesServer.message([{ type: "text", text: "found it" }]),
        MessagesServer.message([{ type: "text", text: "still there" }])
      ])
      const setup = {
        url: server.url,
        log: makeProbeLog(),
        stateDir: tempDir(),
        sessionId: "s-deferred",
        tools: [zeta, ToolSearch.make()]
      }
      yield* run(setup, { prompt: "find zeta" })
      yield* run(setup, { prompt: "again" })
      const names = server.requests.map((r) => (r.body.tools ?? []).map((t) => t.name))
      expect(names).toEqual([
        ["Probe", "ToolSearch"],
        ["Probe", "ToolSearch", "Zeta"],
        ["Probe", "ToolSearch", "Zeta"]
      ])
      expect(JSON.stringify(server.requests[0].body.system)).toContain("<available-deferred-tools>")
      expect(JSON.stringify(server.requests[1].body.system)).not.toContain("<available-deferred-tools>")
    })
  )
})
