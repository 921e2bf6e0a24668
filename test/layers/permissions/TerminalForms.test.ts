import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, Option, Ref } from "effect"
import * as TerminalForms from "../../../src/layers/permissions/TerminalForms.js"
import type { ElicitationRequest } from "../../../src/services/McpClients.js"

/** An Io that answers from `lines` (then reports the input closed) and records what was written. */
const scripted = (lines: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const queue = yield* Ref.make(lines)
    const out = yield* Ref.make("")
    const io: TerminalForms.Io = {
      write: (text) => Ref.update(out, (o) => o + text),
      read: Ref.modify(queue, (rest) =>
        rest.length === 0 ? [Option.none(), rest] : [Option.some(rest[0]), rest.slice(1)]
      )
    }
    return { io, out: Ref.get(out), left: Effect.map(Ref.get(queue), (q) => q.length) }
  })

const form: ElicitationRequest = {
  server: "fixture",
  message: "Tell us about you",
  requestedSchema: {
    type: "object",
    properties: {
      name: { type: "string", title: "Name", minLength: 1 },
      age: { type: "integer", title: "Age", minimum: 0, maximum: 150 },
      subscribe: { type: "boolean", title: "Subscribe", default: false },
      color: { type: "string", title: "Colour", enum: ["red", "green", "blue"] },
      email: { type: "string", format: "email" },
      tags: { type: "array", items: { type: "string", enum: ["a", "b", "c"] }, maxItems: 2 },
      hero: {
        type: "string",
        oneOf: [
          { const: "h1", title: "Superman" },
          { const: "h2", title: "Wonder Woman" }
        ]
      }
    },
    required: ["name", "age"]
  }
}

const field = (key: string) => {
  const found = TerminalForms.fieldsOf(form.requestedSchema).find((f) => f.key === key)
  if (found === undefined) throw new Error(key)
  return found
}

describe("TerminalForms fields", () => {
  it("reads each property's kind, label, options, default and whether it is required, in order", () => {
    const fields = TerminalForms.fieldsOf(form.requestedSchema)
    expect(fields.map((f) => [f.key, f.kind, f.label, f.required, f.default])).toEqual([
      ["name", "string", "Name", true, undefined],
      ["age", "integer", "Age", true, undefined],
      ["subscribe", "boolean", "Subscribe", false, false],
      ["color", "choice", "Colour", false, undefined],
      ["email", "string", "email", false, undefined],
      ["tags", "choices", "tags", false, undefined],
      ["hero", "choice", "hero", false, undefined]
    ])
    expect(field("hero").options).toEqual([
      { value: "h1", label: "Superman" },
      { value: "h2", label: "Wonder Woman" }
    ])
  })

  it("checks answers against the field's type and bounds", () => {
    const ok = (key: string, line: string) => TerminalForms.parseField(field(key), line)
    expect(ok("age", "42")).toEqual(Either.right(Option.some(42)))
    expect(ok("age", "4.5")).toEqual(Either.left("a whole number"))
    expect(ok("age", "151")).toEqual(Either.left("a number of at most 150"))
    expect(ok("age", "")).toEqual(Either.left("a value (this field is required)"))
    expect(ok("subscribe", "")).toEqual(Either.right(Option.some(false)))
    expect(ok("subscribe", "Yes")).toEqual(Either.right(Option.some(true)))
    expect(ok("subscribe", "maybe")).toEqual(Either.left("yes or no"))
    expect(ok("color", "2")).toEqual(Either.right(Option.some("green")))
    expect(ok("color", "blue")).toEqual(Either.right(Option.some("blue")))
    expect(Either.isLeft(ok("color", "purple"))).toBe(true)
    expect(ok("color", "")).toEqual(Either.right(Option.none()))
    expect(ok("email", "ada@example.com")).toEqual(Either.right(Option.some("ada@example.com")))
    expect(ok("email", "ada")).toEqual(Either.left("an email address"))
    expect(ok("tags", "1, c, 1")).toEqual(Either.right(Option.some(["a", "c"])))
    expect(ok("tags", "a,b,c")).toEqual(Either.left("at most 2 choices"))
    expect(ok("hero", "Wonder Woman")).toEqual(Either.right(Option.some("h2")))
  })

  it.prop(
    "a number field accepts exactly the integers within its bounds",
    [fc.integer({ min: -500, max: 500 })],
    ([n]) => {
      const parsed = TerminalForms.parseField(field("age"), String(n))
      expect(Either.isRight(parsed)).toBe(n >= 0 && n <= 150)
    }
  )

  it("shows control characters from a server as text, so they cannot drive the terminal", () => {
    expect(TerminalForms.printable("a\u001b[2Jb\nc\u0007")).toEqual("a\\u001b[2Jb\nc\\u0007")
  })
})

describe("TerminalForms.askForm", () => {
  it.effect("asks field by field, asks again after an invalid value, and sends the content on y", () =>
    Effect.gen(function* () {
      const { io, out } = yield* scripted(["y", "Ada", "two hundred", "36", "", "3", "", "", "", "y"])
      expect(yield* TerminalForms.askForm(io, form)).toEqual({
        action: "accept",
        content: { name: "Ada", age: 36, subscribe: false, color: "blue" }
      })
      const text = yield* out
      expect(text).toContain(
        "MCP server fixture asks: Tell us about you\nFill in its form (7 fields)? [y] yes  [n] decline  [c] cancel "
      )
      expect(text).toContain("  Name (text; required): ")
      expect(text).toContain("  Age (integer; required):   Expected a whole number.\n  Age (integer; required): ")
      expect(text).toContain("  Subscribe (yes/no; Enter for no): ")
      expect(text).toContain("  Colour (one of 1) red  2) green  3) blue; Enter to skip): ")
      expect(text).toContain("  hero (one of 1) Superman [h1]  2) Wonder Woman [h2]; Enter to skip): ")
      expect(text).toContain(
        "  name: Ada\n  age: 36\n  subscribe: no\n  color: blue\nSend this to fixture? [y] send  [n] decline  [c] cancel "
      )
    })
  )

  it.effect("n declines and c cancels, at the start or at the end", () =>
    Effect.gen(function* () {
      const first = yield* scripted(["n"])
      expect(yield* TerminalForms.askForm(first.io, form)).toEqual({ action: "decline" })
      const second = yield* scripted(["c"])
      expect(yield* TerminalForms.askForm(second.io, form)).toEqual({ action: "cancel" })
      const last = yield* scripted(["y", "Ada", "36", "", "", "", "", "", "n"])
      expect(yield* TerminalForms.askForm(last.io, form)).toEqual({ action: "decline" })
    })
  )

  it.effect("a closed input or three invalid answers cancel", () =>
    Effect.gen(function* () {
      const closed = yield* scripted(["y", "Ada"])
      expect(yield* TerminalForms.askForm(closed.io, form)).toEqual({ action: "cancel" })
      const stubborn = yield* scripted(["y", "Ada", "x", "y", "z", "36"])
      expect(yield* TerminalForms.askForm(stubborn.io, form)).toEqual({ action: "cancel" })
      expect(yield* stubborn.left).toEqual(1)
      expect(yield* stubborn.out).toContain("No valid answer; the form is cancelled.")
    })
  )
})

describe("TerminalForms sampling and project server questions", () => {
  it.effect("sampling shows the conversation and allows only on y", () =>
    Effect.gen(function* () {
      const request = {
        server: "s",
        systemPrompt: "be brief",
        messages: [{ role: "user" as const, text: "hi\u001b]0;x" }],
        maxTokens: 5
      }
      const yes = yield* scripted(["y"])
      expect(yield* TerminalForms.askSampling(yes.io, request)).toBe(true)
      expect(yield* yes.out).toEqual(
        "MCP server s asks to use the language model (up to 5 tokens).\n  system: be brief\n  user: hi\\u001b]0;x\nAllow? [y] yes  [n] no "
      )
      const unclear = yield* scripted(["sure", "ok", "fine"])
      expect(yield* TerminalForms.askSampling(unclear.io, request)).toBe(false)
      const closed = yield* scripted([])
      expect(yield* TerminalForms.askSampling(closed.io, request)).toBe(false)
    })
  )

  it.effect("a project server is approved, approved with all others, or rejected; no answer rejects", () =>
    Effect.gen(function* () {
      const request = { file: "/p/.mcp.json", server: "db", summary: "node db.js" }
      for (const [line, answer] of [
        ["y", "approve"],
        ["a", "approve-all"],
        ["n", "reject"]
      ] as const) {
        const { io } = yield* scripted([line])
        expect(yield* TerminalForms.askProjectServer(io, request)).toEqual(answer)
      }
      const { io, out } = yield* scripted([])
      expect(yield* TerminalForms.askProjectServer(io, request)).toEqual("reject")
      expect(yield* out).toEqual(
        "New MCP server found in /p/.mcp.json: db (node db.js)\n[y] use this server  [a] use this and all future servers of this project's .mcp.json  [n] do not use it "
      )
    })
  )
})
