import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as CallbackApprover from "../../../src/layers/permissions/CallbackApprover.js"

const form = { server: "s", message: "m", requestedSchema: { type: "object", properties: {} } }
const sampling = {
  server: "s",
  systemPrompt: undefined,
  messages: [{ role: "user" as const, text: "hi" }],
  maxTokens: 9
}

describe("CallbackApprover MCP callbacks", () => {
  it.effect("pass forms and sampling requests to the callbacks, as Effects or Promises", () =>
    Effect.gen(function* () {
      const members = CallbackApprover.mcpMembers({
        onElicitation: (request) => Promise.resolve({ action: "accept", content: { server: request.server } }),
        onSampling: (request) => Effect.succeed(request.maxTokens < 10)
      })
      expect(yield* members.elicit!(form)).toEqual({ action: "accept", content: { server: "s" } })
      expect(yield* members.approveSampling!(sampling)).toBe(true)
    })
  )

  it.effect("a callback that throws or rejects declines the form and refuses sampling", () =>
    Effect.gen(function* () {
      const members = CallbackApprover.mcpMembers({
        onElicitation: () => {
          throw new Error("boom")
        },
        onSampling: () => Promise.reject(new Error("no"))
      })
      expect(yield* members.elicit!(form)).toEqual({ action: "decline" })
      expect(yield* members.approveSampling!(sampling)).toBe(false)
    })
  )

  it("without callbacks there is nothing to answer with (forms declined, sampling refused by the client side)", () => {
    expect(CallbackApprover.mcpMembers({})).toEqual({})
  })
})
