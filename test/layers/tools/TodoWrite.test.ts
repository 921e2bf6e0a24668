import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as Tool from "../../../src/domain/Tool.js"
import * as TodoWrite from "../../../src/layers/tools/TodoWrite.js"
import { context, outputOf } from "../../fixtures/SearchFixtures.js"

const todo = (content: string, status: TodoWrite.Todo["status"], activeForm = `Doing ${content}`): TodoWrite.Todo => ({
  content,
  status,
  activeForm
})

describe("TodoWrite", () => {
  it.effect("stores the list in session state and shows it", () =>
    Effect.gen(function* () {
      const tool = yield* TodoWrite.make
      const state = yield* Tool.makeSessionState
      const ctx = yield* context(state)
      const todos = [
        todo("Write tests", "completed"),
        todo("Implement the parser", "in_progress", "Implementing the parser"),
        todo("Ship it", "pending")
      ]
      const output = outputOf(yield* tool.call({ todos }, ctx))
      expect(output).toEqual({ oldTodos: [], newTodos: todos })
      expect(yield* state.get(TodoWrite.todosKey)).toEqual(todos)
      expect(tool.toResult(output)).toBe(
        "Todo list updated (3 tasks: 1 completed, 1 in progress, 1 pending):\n" +
          "[x] Write tests\n[~] Implementing the parser\n[ ] Ship it\n\n" +
          "Keep the list current: mark a task in_progress before you start it and completed as soon as it is done."
      )
      const next = outputOf(yield* tool.call({ todos: [todo("Ship it", "in_progress", "Shipping it")] }, ctx))
      expect(next).toEqual({ oldTodos: todos, newTodos: [todo("Ship it", "in_progress", "Shipping it")] })
      expect(tool.toResult(next)).toBe(
        "Todo list updated (1 task: 0 completed, 1 in progress, 0 pending):\n[~] Shipping it\n\n" +
          "Keep the list current: mark a task in_progress before you start it and completed as soon as it is done."
      )
      expect(tool.toResult(outputOf(yield* tool.call({ todos: [] }, ctx)))).toBe(
        "Todo list cleared: there are no tasks."
      )
    })
  )

  it.effect("rejects two tasks in progress, empty content and empty activeForm", () =>
    Effect.gen(function* () {
      const tool = yield* TodoWrite.make
      const ctx = yield* context()
      const reject = (todos: ReadonlyArray<TodoWrite.Todo>) =>
        Effect.map(Effect.flip(tool.validate({ todos }, ctx)), (e) => e.message)
      expect(yield* reject([todo("A", "in_progress"), todo("B", "pending"), todo("C", "in_progress")])).toBe(
        'Only one todo may be in_progress at a time; 2 are: "A", "C"'
      )
      expect(yield* reject([todo("A", "pending"), todo("  ", "pending")])).toBe("Todo 2 has empty content")
      expect(yield* reject([todo("A", "pending", "")])).toBe("Todo 1 has an empty activeForm")
      yield* tool.validate({ todos: [todo("A", "in_progress"), todo("B", "completed")] }, ctx)
    })
  )

  it.effect("decodes only the three statuses", () =>
    Effect.gen(function* () {
      const tool = yield* TodoWrite.make
      const bad = yield* Effect.flip(
        Schema.decodeUnknown(tool.input)({ todos: [{ content: "A", status: "done", activeForm: "Doing A" }] })
      )
      expect(bad._tag).toBe("ParseError")
      expect(tool.inputJsonSchema.required).toEqual(["todos"])
    })
  )

  it.effect("is not read-only nor concurrency-safe, but needs no approval", () =>
    Effect.gen(function* () {
      const tool = yield* TodoWrite.make
      const input = { todos: [todo("A", "pending")] }
      expect(tool.isReadOnly(input)).toBe(false)
      expect(tool.isConcurrencySafe(input)).toBe(false)
      expect(yield* tool.checkPermissions(input, yield* context())).toEqual({
        behavior: "allow",
        reason: "TodoWrite only changes the session's task list"
      })
      expect(tool.resources(input)).toEqual([{ key: "session:todos", access: "write" }])
      expect(tool.summarize(input)).toBe("1 todo")
      expect(tool.description).toContain("never more than one (the same rule as\nClaude Code's todo list)")
    })
  )
})
