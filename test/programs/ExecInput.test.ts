import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import { parseLines } from "../../src/programs/ExecInput.js"

const parse = (text: string) =>
  parseLines(Stream.fromIterable(text.split("\n"))).pipe(Stream.runCollect, Effect.map(Chunk.toReadonlyArray))

const use = (id: string, name = "Read") => ({ type: "tool_use", id, name, input: { file_path: "/x" } })

describe("ExecInput.parseLines", () => {
  it.effect("reads JSON Lines one tool_use per line", () =>
    Effect.gen(function* () {
      const uses = yield* parse([JSON.stringify(use("a")), "", JSON.stringify(use("b"))].join("\n"))
      expect(uses.map((u) => u.id)).toEqual(["a", "b"])
    })
  )

  it.effect("reads a JSON array spread over several lines", () =>
    Effect.gen(function* () {
      const uses = yield* parse(JSON.stringify([use("a"), use("b")], null, 2))
      expect(uses.map((u) => u.id)).toEqual(["a", "b"])
    })
  )

  it.effect("reads an assistant message, keeping only its tool_use blocks", () =>
    Effect.gen(function* () {
      const message = { role: "assistant", content: [{ type: "text", text: "hi" }, use("a"), use("b", "Glob")] }
      const uses = yield* parse(JSON.stringify(message, null, 2))
      expect(uses.map((u) => `${u.id}:${u.name}`)).toEqual(["a:Read", "b:Glob"])
    })
  )

  it.effect("emits JSON Lines as they arrive, before later lines exist", () =>
    Effect.gen(function* () {
      const first = yield* parseLines(Stream.concat(Stream.make(JSON.stringify(use("a"))), Stream.never)).pipe(
        Stream.runHead
      )
      expect(first._tag === "Some" && first.value.id).toBe("a")
    })
  )

  const errorOf = (text: string) => Effect.flip(parse(text)).pipe(Effect.map((e) => e.message))

  it.effect("names the line of invalid JSON", () =>
    Effect.gen(function* () {
      const message = yield* errorOf([JSON.stringify(use("a")), "{not json"].join("\n"))
      expect(message).toBe("line 2, column 2: invalid JSON: Expected property name or '}'")
    })
  )

  it.effect("names line and column inside a document spread over several lines", () =>
    Effect.gen(function* () {
      const text = ["", "[", `  ${JSON.stringify(use("a"))},`, '  {"type": "tool_use" "id": "b"}', "]"].join("\n")
      expect(yield* errorOf(text)).toBe("line 4, column 23: invalid JSON: Expected ',' or '}' after property value")
      expect(yield* errorOf("[1,\n2,\n}")).toBe("line 3, column 1: invalid JSON: Unexpected token '}'")
    })
  )

  it.effect("names the line and field of a tool_use without id or name", () =>
    Effect.gen(function* () {
      expect(yield* errorOf('{"type":"tool_use","name":"Read","input":{}}')).toBe(
        'line 1: tool_use has no "id" (a non-empty string)'
      )
      expect(yield* errorOf([JSON.stringify(use("a")), '{"type":"tool_use","id":"b","input":{}}'].join("\n"))).toBe(
        'line 2: tool_use b has no "name" (a non-empty string)'
      )
      expect(yield* errorOf('{"type":"tool_use","id":"b","name":"Read","input":3}')).toBe(
        'line 1: field "input" of tool_use b must be an object, got number'
      )
    })
  )

  it.effect("refuses duplicate ids, naming both places", () =>
    Effect.gen(function* () {
      expect(yield* errorOf([JSON.stringify(use("a")), JSON.stringify(use("a"))].join("\n"))).toBe(
        "line 2: duplicate tool_use id a (first used at line 1)"
      )
      expect(yield* errorOf(JSON.stringify([use("a"), use("a")]))).toBe(
        "line 1, item 2: duplicate tool_use id a (first used at line 1, item 1)"
      )
    })
  )

  it.effect("names the item of a bad array element", () =>
    Effect.gen(function* () {
      expect(yield* errorOf(JSON.stringify([use("a"), 5]))).toBe(
        "line 1, item 2: expected a tool_use object, got number"
      )
    })
  )
})
