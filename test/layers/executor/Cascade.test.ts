/**
 * Sibling cancellation fires only when a call *ran* and failed; a refusal (permission, hook, input, unknown
 * tool) is an error for that call alone, and reads as a `<tool_use_error>` like every other tool error.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { emptyOutcome } from "../../../src/domain/Hook.js"
import * as Texts from "../../../src/domain/Texts.js"
import * as Hooks from "../../../src/services/Hooks.js"
import * as PermissionPolicy from "../../../src/services/PermissionPolicy.js"
import * as ResultCache from "../../../src/services/ResultCache.js"
import { executorLayer, results, runAll, stateAt, use } from "./ExecutorHarness.js"

/** Denies every Bash call with an explanation naming a rule and its source; allows the rest. */
const denyBash = Layer.succeed(
  PermissionPolicy.PermissionPolicy,
  PermissionPolicy.PermissionPolicy.of({
    mode: "default",
    decide: (request) =>
      Effect.succeed(
        request.tool.name === "Bash"
          ? {
              behavior: "deny",
              message: "Permission to use Bash has been denied by rule Bash(rm:*) from userSettings",
              reason: "rule",
              rule: null,
              source: null,
              trace: []
            }
          : { behavior: "allow", message: "", reason: "allowed", rule: null, source: null, trace: [] }
      ),
    isToolDenied: () => false
  })
)

/** A PreToolUse hook that blocks Bash. */
const blockBash = Layer.succeed(
  Hooks.Hooks,
  Hooks.Hooks.of({
    run: (event, input) =>
      Effect.succeed(
        event === "PreToolUse" && input.tool_name === "Bash"
          ? { ...emptyOutcome, decision: "deny" as const, reason: "no shell today" }
          : emptyOutcome
      )
  })
)

const batch = [
  use("r1", "Read", { ms: 1000 }),
  use("r2", "Read", { ms: 1000 }),
  use("bash", "Bash", { ms: 10, output: "rm -rf x" }),
  use("w", "Write", { ms: 500 })
]

describe("cascade only on execution failure", () => {
  it.effect("a permission denial of a cascading tool cancels nothing; its text keeps the rule, wrapped", () =>
    Effect.gen(function* () {
      const events = yield* runAll(batch)
      const [r1, r2, bash, w] = results(events)
      expect(bash).toMatchObject({
        is_error: true,
        content:
          "<tool_use_error>Permission to use Bash has been denied by rule Bash(rm:*) from userSettings</tool_use_error>"
      })
      expect([r1.content, r2.content, w.content]).toEqual(["Read done", "Read done", "Write done"])
      expect(stateAt(events, "w", "executing")).toBe(1000)
    }).pipe(Effect.provide(executorLayer({}, ResultCache.disabled, Hooks.none, denyBash)))
  )

  it.effect("a PreToolUse block of a cascading tool cancels nothing; its text is wrapped", () =>
    Effect.gen(function* () {
      const events = yield* runAll(batch)
      const [r1, r2, bash, w] = results(events)
      expect(bash.content).toBe(`<tool_use_error>${Texts.preToolUseBlocked("Bash", "no shell today")}</tool_use_error>`)
      expect([r1.is_error, r2.is_error, w.is_error]).toEqual([false, false, false])
    }).pipe(Effect.provide(executorLayer({}, ResultCache.disabled, blockBash)))
  )

  it.effect("an unknown tool and a bad input never cascade, even under any-error", () =>
    Effect.gen(function* () {
      const events = yield* runAll(
        [
          use("r", "Read", { ms: 1000 }),
          use("u", "Nope"),
          { type: "tool_use", id: "bad", name: "Bash", input: { ms: "soon" } },
          use("w", "Write", { ms: 10 })
        ],
        { cancellation: "any-error" }
      )
      expect(results(events).map((r) => r.is_error)).toEqual([false, true, true, false])
    }).pipe(Effect.provide(executorLayer()))
  )

  it.effect("a cascading tool that ran and failed still cancels its queued siblings", () =>
    Effect.gen(function* () {
      const events = yield* runAll([use("bash", "Bash", { ms: 10, fail: true, output: "make" }), use("w", "Write")])
      expect(results(events)[1].content).toBe(Texts.siblingErrored("Bash", "make"))
      expect(stateAt(events, "w", "executing")).toBeUndefined()
    }).pipe(Effect.provide(executorLayer()))
  )

  it.effect("a timeout is an execution failure: under any-error it cancels the running siblings", () =>
    Effect.gen(function* () {
      const events = yield* runAll([use("t", "Timed", { ms: 5000 }), use("r", "Read", { ms: 9000 })], {
        cancellation: "any-error"
      })
      const [t, r] = results(events)
      expect(t.content).toBe("Tool Timed timed out after 2000 ms")
      expect(r.content).toBe(Texts.siblingErrored("Timed", "ms=5000"))
      expect(stateAt(events, "r", "completed")).toBe(2000)
    }).pipe(Effect.provide(executorLayer()))
  )
})
