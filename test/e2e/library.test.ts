import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { program } from "../../examples/library.js"

describe("the README's library example", () => {
  it.effect("runs a custom tool, a built-in, and refuses an ask through the callback approver", () =>
    Effect.gen(function* () {
      const results = yield* program
      expect(results.map((r) => r.tool_use_id)).toEqual(["w1", "g1", "b1"])
      expect(results[0]).toEqual({ type: "tool_result", tool_use_id: "w1", content: "Sunny in Lisbon" })
      expect(results[1].is_error).toBeUndefined()
      expect(String(results[1].content)).toContain("examples/library.ts")
      expect(results[2]).toEqual({
        type: "tool_result",
        tool_use_id: "b1",
        content: "<tool_use_error>Bash needs a human here</tool_use_error>",
        is_error: true
      })
    })
  )
})
