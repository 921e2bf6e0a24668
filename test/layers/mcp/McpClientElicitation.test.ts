import * as Os from "node:os"
import { PassThrough } from "node:stream"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Armature from "../../../src/Armature.js"
import * as TerminalApprover from "../../../src/layers/permissions/TerminalApprover.js"
import * as TreeSitterShellAnalyzer from "../../../src/layers/shell/TreeSitterShellAnalyzer.js"
import * as Approver from "../../../src/services/Approver.js"
import type { ElicitationRequest } from "../../../src/services/McpClients.js"
import * as Settings from "../../../src/services/Settings.js"
import { ToolRegistry } from "../../../src/services/ToolRegistry.js"
import {
  call,
  clientLayer,
  everythingServer,
  fixtureServer,
  ready,
  root,
  textOf,
  waitFor
} from "../../fixtures/mcp/client.js"

const settings = Settings.layerStatic({ home: Os.homedir(), projectDir: root })

/** The terminal approver reading `answers` from a pipe, as if typed; `output()` is what it printed. */
const terminal = (answers: ReadonlyArray<string>) => {
  const input = new PassThrough()
  const output = new PassThrough()
  let written = ""
  output.on("data", (chunk) => {
    written += String(chunk)
  })
  for (const line of answers) input.write(`${line}\n`)
  // No more answers: the input closes, so a question too many cancels instead of waiting forever.
  input.end()
  const layer = TerminalApprover.layerWith({ input, output }).pipe(
    Layer.provide(Layer.merge(TreeSitterShellAnalyzer.layer, settings))
  )
  return { layer, output: () => written }
}

const askUser = Effect.map(call("mcp__fixture__ask_user", {}), (content) => JSON.parse(textOf(content)))

describe("McpClientsLive elicitation routed to the Approver (the fixture server's ask_user form)", () => {
  it.live("the terminal approver asks field by field and sends the validated answers", () => {
    const term = terminal(["y", "Ada", "-3", "36", "yes", "2", "y"])
    return Effect.gen(function* () {
      yield* ready
      expect(yield* askUser).toEqual({
        action: "accept",
        content: { name: "Ada", age: 36, subscribe: true, color: "green" }
      })
      const shown = term.output()
      expect(shown).toContain("MCP server fixture asks: Tell the fixture about you")
      expect(shown).toContain("  Age (integer; required):   Expected a number of at least 0.\n")
    }).pipe(Effect.provide(clientLayer({ fixture: fixtureServer() }).pipe(Layer.provide(term.layer))))
  })

  it.live("a callback approver (Armature.approveWith) gets the form as data and answers it", () => {
    const seen: Array<ElicitationRequest> = []
    const approver = Armature.approveWith(() => Effect.succeed({ behavior: "deny", message: "no" }), {
      onElicitation: async (request) => {
        seen.push(request)
        return { action: "decline" }
      }
    })
    return Effect.gen(function* () {
      yield* ready
      expect(yield* askUser).toEqual({ action: "decline" })
      expect(seen.map((r) => [r.server, r.message, Object.keys(r.requestedSchema.properties as object)])).toEqual([
        ["fixture", "Tell the fixture about you", ["name", "age", "subscribe", "color"]]
      ])
      expect(seen[0].requestedSchema.required).toEqual(["name", "age"])
    }).pipe(
      Effect.provide(clientLayer({ fixture: fixtureServer() }).pipe(Layer.provide(Layer.provide(approver, settings))))
    )
  })

  it.live("headless declines", () =>
    Effect.gen(function* () {
      yield* ready
      expect(yield* askUser).toEqual({ action: "decline" })
    }).pipe(Effect.provide(clientLayer({ fixture: fixtureServer() }).pipe(Layer.provide(Approver.headless))))
  )
})

describe("McpClientsLive elicitation with @modelcontextprotocol/server-everything", () => {
  it.live("its trigger-elicitation-request form, filled in on the terminal (defaults taken with Enter)", () => {
    // name, then Enter for the twelve other fields (defaults, or left out), but fish picked by title; then send
    const term = terminal(["y", "Ada Lovelace", ...Array.from({ length: 10 }, () => ""), "Trout, 1", "", "y"])
    return Effect.gen(function* () {
      const registry = yield* ToolRegistry
      yield* waitFor(registry.lookup("mcp__everything__trigger-elicitation-request"))
      const text = textOf(yield* call("mcp__everything__trigger-elicitation-request", {}))
      expect(text).toContain("User provided the requested information")
      expect(text).toContain("- Name: Ada Lovelace")
      expect(text).toContain("- Favorite Integer: 42")
      expect(text).toContain('"untitledMultipleSelectEnum": [\n      "Guitar"\n    ]')
      expect(text).toContain('"titledMultipleSelectEnum": [\n      "fish-3",\n      "fish-1"\n    ]')
      expect(term.output()).toContain("(one or more, comma separated, of 1) Tuna [fish-1]  2) Salmon [fish-2]")
    }).pipe(Effect.provide(clientLayer({ everything: everythingServer() }).pipe(Layer.provide(term.layer))))
  })
})
