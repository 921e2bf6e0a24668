/**
 * What the model reads of a tool's failure: its `message` (with a ToolFailure's stderr and stdout), else its form
 * encoded by the tool's failure Schema; and which failures the tool policies treat as transient.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { ToolFailure } from "../../src/domain/Errors.js"
import * as Tool from "../../src/domain/Tool.js"

class OutOfStock extends Schema.TaggedError<OutOfStock>()("OutOfStock", { sku: Schema.String, left: Schema.Number }) {}
class Refused extends Schema.TaggedError<Refused>()("Refused", { message: Schema.String }) {}

const Failure = Schema.Union(OutOfStock, Refused)
const Input = Schema.Struct({ sku: Schema.String })

describe("Tool.failureText", () => {
  it.effect("a failure without a message is shown in its encoded form", () =>
    Effect.gen(function* () {
      const tool = yield* Tool.make({
        name: "Order",
        description: "orders",
        input: Input,
        output: Schema.String,
        failure: Failure,
        call: ({ sku }) =>
          sku === "x" ? Effect.fail(new Refused({ message: "no" })) : Effect.fail(new OutOfStock({ sku, left: 0 }))
      })
      const failure = yield* Effect.flip(tool.call({ sku: "a1" }, undefined as never))
      // a tagged error without a message field gets Effect's message: its fields
      expect(JSON.parse(Tool.failureText(tool, failure))).toEqual({ sku: "a1", left: 0 })
      const refused = yield* Effect.flip(tool.call({ sku: "x" }, undefined as never))
      expect(Tool.failureText(tool, refused)).toBe("no")
    })
  )

  it.effect("a failure that is not an Error is encoded by the tool's failure Schema", () =>
    Effect.gen(function* () {
      const tool = yield* Tool.make({
        name: "Limits",
        description: "limits",
        input: Input,
        output: Schema.String,
        failure: Schema.Struct({ retryAt: Schema.DateFromString }),
        call: () => Effect.fail({ retryAt: new Date(Date.UTC(2026, 0, 1)) })
      })
      const failure = yield* Effect.flip(tool.call({ sku: "a" }, undefined as never))
      expect(Tool.failureText(tool, failure)).toBe('{"retryAt":"2026-01-01T00:00:00.000Z"}')
    })
  )

  it.effect("an old-style tool fails with ToolFailure: message, then stderr, then stdout", () =>
    Effect.gen(function* () {
      const tool = yield* Tool.make({
        name: "Old",
        description: "old",
        input: Input,
        output: Schema.String,
        call: () => Effect.fail(new ToolFailure({ message: "exit 2", stderr: "boom", stdout: "" }))
      })
      const failure = yield* Effect.flip(tool.call({ sku: "a" }, undefined as never))
      expect(Tool.failureText(tool, failure)).toBe("exit 2\nboom")
      expect(Tool.isTransient(failure)).toBe(false)
      expect(Tool.isTransient(new ToolFailure({ message: "lost", transient: true }))).toBe(true)
      expect(Tool.isTransient(new OutOfStock({ sku: "a", left: 0 }))).toBe(false)
    })
  )
})
