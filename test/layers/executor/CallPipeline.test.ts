/**
 * The pipeline's steps, each on its own.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Either, Option, Schema, TestClock } from "effect"
import * as CallInput from "../../../src/domain/CallInput.js"
import { ToolFailure } from "../../../src/domain/Errors.js"
import { emptyOutcome } from "../../../src/domain/Hook.js"
import type { PermissionDecision } from "../../../src/domain/Permission.js"
import * as Texts from "../../../src/domain/Texts.js"
import * as Tool from "../../../src/domain/Tool.js"
import * as CallPipeline from "../../../src/layers/executor/CallPipeline.js"
import * as ResultCache from "../../../src/services/ResultCache.js"

const echo = Tool.make({
  name: "Echo",
  description: "echo",
  input: Schema.Struct({ text: Schema.String }),
  output: Schema.String,
  timeout: "1 second",
  call: (input) => Effect.succeed(input.text)
}).pipe(Effect.runSync)

const decision = (behavior: "allow" | "deny" | "ask"): PermissionDecision =>
  ({
    behavior,
    message: "Denied by rule Echo from projectSettings",
    reason: "rule",
    rule: null,
    source: null,
    trace: []
  }) as PermissionDecision

/** Services where only the policy, hooks and approver matter; the others are never reached by `permit`. */
const services = (
  behavior: "allow" | "deny" | "ask",
  approve: "approve" | "reject" | "rejectRejected"
): CallPipeline.Services =>
  ({
    policy: { mode: "default", decide: () => Effect.succeed(decision(behavior)), isToolDenied: () => false },
    hooks: { run: () => Effect.succeed(emptyOutcome) },
    approver: {
      approve: () =>
        Effect.succeed(
          approve === "approve"
            ? { _tag: "Approved", updatedInput: { text: "changed" } }
            : { _tag: "Rejected", message: approve === "reject" ? "The user said no" : Texts.rejected }
        )
    }
  }) as unknown as CallPipeline.Services

const request = { tool: echo, input: { text: "hi" }, toolUseId: "t1", context: {} as Tool.ToolContext }
const hookInput = () => ({}) as never

describe("CallPipeline steps", () => {
  it("decode: a valid input, and an invalid one with the undiscovered hint when asked", () => {
    expect(CallInput.decode(echo, { text: "a" })).toEqual(Either.right({ text: "a" }))
    const bad = CallInput.decode(echo, { text: 1 }, true)
    expect(Either.isLeft(bad) && String(bad.left.content)).toContain(Texts.undiscoveredHint("Echo"))
    expect(Either.isLeft(CallInput.decode(echo, { text: "a", extra: 1 }))).toBe(true)
  })

  it("replaceInput: no update keeps the input, a bad update stops the call", () => {
    expect(CallPipeline.replaceInput(echo, { text: "a" }, undefined)).toEqual({
      _tag: "Continue",
      input: { text: "a" }
    })
    expect(CallPipeline.replaceInput(echo, { text: "a" }, { text: "b" })).toEqual({
      _tag: "Continue",
      input: { text: "b" }
    })
    expect(CallPipeline.replaceInput(echo, { text: "a" }, { nope: 1 })._tag).toBe("Stop")
  })

  it.effect("permit: a denial is a wrapped refusal that keeps the rule and its source", () =>
    Effect.gen(function* () {
      const step = yield* CallPipeline.permit(services("deny", "approve"), request, hookInput)
      expect(step).toMatchObject({
        _tag: "Stop",
        outcome: {
          content: "<tool_use_error>Denied by rule Echo from projectSettings</tool_use_error>",
          isError: true,
          executionFailed: false
        }
      })
    })
  )

  it.effect("permit: an ask goes to the approver; its rejection is wrapped, its updated input decoded", () =>
    Effect.gen(function* () {
      const rejected = yield* CallPipeline.permit(services("ask", "reject"), request, hookInput)
      expect(rejected).toMatchObject({
        _tag: "Stop",
        outcome: { content: "<tool_use_error>The user said no</tool_use_error>" }
      })
      const stopped = yield* CallPipeline.permit(services("ask", "rejectRejected"), request, hookInput)
      expect(stopped).toMatchObject({ _tag: "Stop", outcome: { content: Texts.rejected } })
      const approved = yield* CallPipeline.permit(services("ask", "approve"), request, hookInput)
      expect(approved).toEqual({ _tag: "Continue", input: { text: "changed" } })
      const allowed = yield* CallPipeline.permit(services("allow", "reject"), request, hookInput)
      expect(allowed).toEqual({ _tag: "Continue", input: { text: "hi" } })
    })
  )

  it.effect("invoke: a returned value, a timeout, a failure", () =>
    Effect.gen(function* () {
      const ctx = {} as Tool.ToolContext
      expect(yield* CallPipeline.invoke(ResultCache.none, echo, { text: "x" }, ctx)).toEqual({
        _tag: "Returned",
        value: "x"
      })
      const slow = { ...echo, call: () => Effect.never }
      const timedOut = yield* Effect.fork(CallPipeline.invoke(ResultCache.none, slow, { text: "x" }, ctx))
      yield* Effect.yieldNow()
      yield* TestClock.adjust("2 seconds")
      const invocation = yield* Effect.fromFiber(timedOut)
      expect(invocation).toEqual({ _tag: "TimedOut" })
      expect(CallPipeline.failureOf(echo, { _tag: "TimedOut" })).toBe("Tool Echo timed out after 1000 ms")
      const failing = { ...echo, call: () => Effect.fail(new ToolFailure({ message: "no", stderr: "err" })) }
      const failed = yield* CallPipeline.invoke(ResultCache.none, failing, { text: "x" }, ctx)
      expect(failed._tag).toBe("Failed")
      if (failed._tag === "Failed") expect(CallPipeline.failureOf(echo, failed)).toBe("no\nerr")
      expect(CallPipeline.failureOf(echo, { _tag: "Failed", cause: Cause.die(new Error("boom")) })).toBe("Error: boom")
    })
  )

  it("afterPostToolUse: blocking feedback is appended to the result", () => {
    const content = CallPipeline.afterPostToolUse(echo, "out", {
      ...emptyOutcome,
      blocks: [{ command: "check.sh", reason: "lint failed" }]
    })
    expect(content).toEqual([
      { type: "text", text: "out" },
      { type: "text", text: Texts.postToolUseBlocked("Echo", "check.sh", "lint failed") }
    ])
    expect(Option.some(CallPipeline.afterPostToolUse(echo, "out", emptyOutcome))).toEqual(Option.some("out"))
  })
})
