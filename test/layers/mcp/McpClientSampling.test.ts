import * as Os from "node:os"
import { PassThrough } from "node:stream"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer, Stream } from "effect"
import * as Armature from "../../../src/Armature.js"
import * as TerminalApprover from "../../../src/layers/permissions/TerminalApprover.js"
import * as TreeSitterShellAnalyzer from "../../../src/layers/shell/TreeSitterShellAnalyzer.js"
import * as Approver from "../../../src/services/Approver.js"
import { LanguageModel, type ModelRequest } from "../../../src/services/LanguageModel.js"
import type { SamplingRequest } from "../../../src/services/McpClients.js"
import * as Settings from "../../../src/services/Settings.js"
import { ToolRegistry } from "../../../src/services/ToolRegistry.js"
import * as ScriptedLanguageModel from "../../../src/testing/ScriptedLanguageModel.js"
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

/** A model turn that echoes the last user message it was sent. */
const echo = (request: ModelRequest): ScriptedLanguageModel.ScriptedTurn => {
  const last = request.messages[request.messages.length - 1]
  const said = typeof last.content === "string" ? last.content : last.content.map((b) => ("text" in b ? b.text : ""))
  return ScriptedLanguageModel.turn(ScriptedLanguageModel.text(`echo: ${[said].flat().join("")}`))
}

const requestOf = (text: string): ModelRequest => ({
  model: "m",
  maxTokens: 10,
  system: [],
  tools: [],
  messages: [{ role: "user", content: text }]
})

const asked: Array<SamplingRequest> = []

/** An approver that allows sampling when the prompt says "please", and refuses every tool call. */
const approver = Layer.succeed(
  Approver.Approver,
  Approver.Approver.of({
    approve: () => Effect.succeed({ _tag: "Rejected", message: "no" }),
    approveSampling: (request) =>
      Effect.sync(() => {
        asked.push(request)
        return request.messages.some((m) => m.text.includes("please"))
      })
  })
)

const askModel = (server: string, prompt: string) =>
  Effect.map(call(`mcp__${server}__ask_model`, { prompt }), (content) => JSON.parse(textOf(content)))

const withModel = (script: ReadonlyArray<ScriptedLanguageModel.ScriptStep>) =>
  clientLayer({
    allowed: { ...fixtureServer(), sampling: "allow" },
    asked: fixtureServer(),
    denied: { ...fixtureServer(), sampling: "deny" }
  }).pipe(Layer.provideMerge(Layer.merge(ScriptedLanguageModel.layer(script), approver)))

layer(withModel(Array.from({ length: 10 }, () => echo)), { excludeTestServices: true })(
  "McpClientsLive sampling with a language model (fixture servers sending sampling/createMessage in a tool call)",
  (it) => {
    it.effect("a server whose policy is allow gets the model's answer; the model sees its prompt", () =>
      Effect.gen(function* () {
        yield* ready
        const result = yield* askModel("allowed", "hello")
        expect(result).toEqual({
          model: "claude-sonnet-5-5",
          role: "assistant",
          content: { type: "text", text: "echo: hello" },
          stopReason: "endTurn"
        })
        const requests = yield* Effect.flatMap(ScriptedLanguageModel.ScriptedRequests, (r) => r.all)
        const last = requests[requests.length - 1]
        expect([last.system, last.maxTokens, last.tools, last.messages]).toEqual([
          [{ type: "text", text: "You are a test server." }],
          64,
          [],
          [{ role: "user", content: [{ type: "text", text: "hello" }] }]
        ])
      })
    )

    it.effect("ask (the default) puts the request to the Approver: approved runs, refused is a JSON-RPC error", () =>
      Effect.gen(function* () {
        yield* ready
        const before = (yield* Effect.flatMap(ScriptedLanguageModel.ScriptedRequests, (r) => r.all)).length
        expect(yield* askModel("asked", "no thanks")).toEqual({
          error: { code: -1, message: "MCP error -1: The user refused the sampling request of MCP server asked" }
        })
        expect((yield* askModel("asked", "please")).content).toEqual({ type: "text", text: "echo: please" })
        expect(asked.slice(-2)).toEqual([
          {
            server: "asked",
            systemPrompt: "You are a test server.",
            messages: [{ role: "user", text: "no thanks" }],
            maxTokens: 64
          },
          {
            server: "asked",
            systemPrompt: "You are a test server.",
            messages: [{ role: "user", text: "please" }],
            maxTokens: 64
          }
        ])
        // only the approved request reached the model
        expect((yield* Effect.flatMap(ScriptedLanguageModel.ScriptedRequests, (r) => r.all)).length).toEqual(before + 1)
      })
    )

    it.effect("deny refuses without asking anyone", () =>
      Effect.gen(function* () {
        yield* ready
        const count = asked.length
        expect(yield* askModel("denied", "please")).toEqual({
          error: {
            code: -1,
            message: 'MCP error -1: Sampling is denied for MCP server denied (its sampling policy is "deny")'
          }
        })
        expect(asked.length).toEqual(count)
      })
    )
  }
)

describe("McpClientsLive sampling refusals", () => {
  it.live("without a language model sampling is not declared, and a request sent anyway gets a clear error", () =>
    Effect.gen(function* () {
      yield* ready
      expect(yield* askModel("fixture", "hello")).toEqual({
        error: {
          code: -32601,
          message:
            "MCP error -32601: Armature has no language model configured, so it does not offer sampling (sampling/createMessage)"
        }
      })
    }).pipe(Effect.provide(clientLayer({ fixture: fixtureServer() })))
  )

  it.live("ask with no approver that can answer is refused, naming how to allow it", () =>
    Effect.gen(function* () {
      yield* ready
      expect(yield* askModel("fixture", "please")).toEqual({
        error: {
          code: -1,
          message:
            'MCP error -1: MCP server fixture asked to use the language model, but nobody can approve it here; set its sampling policy to "allow" to permit it'
        }
      })
    }).pipe(
      Effect.provide(clientLayer({ fixture: fixtureServer() }).pipe(Layer.provide(ScriptedLanguageModel.layer([echo]))))
    )
  )

  it.live("a failing model is an internal error carrying the model's message", () =>
    Effect.gen(function* () {
      yield* ready
      expect(yield* askModel("fixture", "hello")).toEqual({
        error: {
          code: -32603,
          message: "MCP error -32603: The language model failed: The script has 0 turn(s); request 1 has none"
        }
      })
    }).pipe(
      Effect.provide(
        clientLayer({ fixture: { ...fixtureServer(), sampling: "allow" } }).pipe(
          Layer.provide(ScriptedLanguageModel.layer([]))
        )
      )
    )
  )
})

describe("McpClientsLive sampling with @modelcontextprotocol/server-everything", () => {
  it.live("its trigger-sampling-request tool appears once sampling is declared, and gets the model's answer", () =>
    Effect.gen(function* () {
      const registry = yield* ToolRegistry
      yield* waitFor(registry.lookup("mcp__everything__trigger-sampling-request"))
      const text = textOf(
        yield* call("mcp__everything__trigger-sampling-request", { prompt: "a haiku", maxTokens: 30 })
      )
      expect(text).toContain("LLM sampling result:")
      expect(text).toContain('"text": "echo: Resource trigger-sampling-request context: a haiku"')
      const requests = yield* Effect.flatMap(ScriptedLanguageModel.ScriptedRequests, (r) => r.all)
      expect([requests[0].maxTokens, requests[0].system]).toEqual([
        30,
        [{ type: "text", text: "You are a helpful test server." }]
      ])
    }).pipe(
      Effect.provide(
        clientLayer({ everything: { ...everythingServer(), sampling: "allow" } }).pipe(
          Layer.provideMerge(ScriptedLanguageModel.layer([echo]))
        )
      )
    )
  )
})

describe("Armature.layer with a model and MCP servers", () => {
  it.live("gives the servers the engine's model for sampling: one instance, shared with the agent", () =>
    Effect.gen(function* () {
      yield* ready
      expect((yield* askModel("fixture", "via the preset")).content).toEqual({
        type: "text",
        text: "echo: via the preset"
      })
      // The script has one turn and sampling used it: the agent's model is the same instance, so it has none left.
      const model = yield* LanguageModel
      const next = yield* Effect.flip(Stream.runDrain(model.stream(requestOf("again"))))
      expect(next.message).toEqual("The script has 1 turn(s); request 2 has none")
    }).pipe(
      Effect.provide(
        Armature.layerNode({
          cwd: root,
          builtins: false,
          resultStore: "memory",
          settingSources: [],
          mcpConfig: { mcpServers: { fixture: { ...fixtureServer(), sampling: "allow" } } },
          model: ScriptedLanguageModel.layer([echo])
        })
      )
    )
  )
})

describe("McpClientsLive sampling asked on the terminal", () => {
  it.live("the terminal approver shows the request and y lets it run on the model", () => {
    const input = new PassThrough()
    const output = new PassThrough()
    let shown = ""
    output.on("data", (chunk) => {
      shown += String(chunk)
    })
    input.end("y\n")
    const terminal = TerminalApprover.layerWith({ input, output }).pipe(
      Layer.provide(TreeSitterShellAnalyzer.layer),
      Layer.provide(Settings.layerStatic({ home: Os.homedir(), projectDir: root }))
    )
    return Effect.gen(function* () {
      yield* ready
      expect((yield* askModel("fixture", "hello there")).content).toEqual({ type: "text", text: "echo: hello there" })
      expect(shown).toEqual(
        "MCP server fixture asks to use the language model (up to 64 tokens).\n  system: You are a test server.\n  user: hello there\nAllow? [y] yes  [n] no "
      )
    }).pipe(
      Effect.provide(
        clientLayer({ fixture: fixtureServer() }).pipe(
          Layer.provide(Layer.merge(ScriptedLanguageModel.layer([echo]), terminal))
        )
      )
    )
  })
})
