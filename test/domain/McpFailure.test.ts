import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Schema } from "effect"
import * as McpFailure from "../../src/domain/McpFailure.js"
import * as CallPolicies from "../../src/layers/executor/CallPolicies.js"

const failed = (failure: unknown): CallPolicies.Attempt => ({ _tag: "Failed", cause: Cause.fail(failure) })

describe("McpFailure", () => {
  it("the retry policies see the failures of the way to the server as transient, a tool's error result as not", () => {
    const server = "s"
    const tool = "t"
    const transient = [
      new McpFailure.McpNotConnected({ server, message: "m" }),
      new McpFailure.McpDisconnected({ server, tool, message: "m" }),
      new McpFailure.McpTimedOut({ server, tool, timeoutMs: 5, message: "m" }),
      new McpFailure.McpRequestFailed({ server, message: "m", transient: true })
    ]
    const answers = [
      new McpFailure.McpToolError({ server, tool, message: "m" }),
      new McpFailure.McpRequestFailed({ server, message: "m", transient: false }),
      new McpFailure.UnknownMcpServer({ server, message: "m" })
    ]
    expect(transient.map((f) => CallPolicies.isTransient(failed(f)))).toEqual([true, true, true, true])
    expect(answers.map((f) => CallPolicies.isTransient(failed(f)))).toEqual([false, false, false])
  })

  it.effect("a transient failure keeps its mark through its Schema (encoded and decoded again)", () =>
    Effect.gen(function* () {
      const timedOut = new McpFailure.McpTimedOut({ server: "s", tool: "t", timeoutMs: 5, message: "m" })
      const encoded = yield* Schema.encode(McpFailure.ToolCallFailure)(timedOut)
      expect(encoded).toMatchObject({ _tag: "McpTimedOut", transient: true })
      const decoded = yield* Schema.decodeUnknown(McpFailure.ToolCallFailure)(encoded)
      expect(decoded).toEqual(timedOut)
      expect(CallPolicies.isTransient(failed(decoded))).toBe(true)
    })
  )
})
