import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer, Ref, Schema } from "effect"
import type { PermissionDecision } from "../../../src/domain/Permission.js"
import * as Tool from "../../../src/domain/Tool.js"
import * as CallbackApprover from "../../../src/layers/permissions/CallbackApprover.js"
import * as TerminalApprover from "../../../src/layers/permissions/TerminalApprover.js"
import * as TreeSitterShellAnalyzer from "../../../src/layers/shell/TreeSitterShellAnalyzer.js"
import { Approver } from "../../../src/services/Approver.js"
import * as Settings from "../../../src/services/Settings.js"
import { typedAnswers } from "../../fixtures/TypedAnswers.js"

const tool = (name: string) =>
  Effect.runSync(
    Tool.make({
      name,
      description: name,
      input: Schema.Struct({ command: Schema.optional(Schema.String), file_path: Schema.optional(Schema.String) }),
      output: Schema.String,
      call: () => Effect.succeed("")
    })
  )
const Bash = tool("Bash")
const Edit = tool("Edit")

const request = (t: Tool.Any, input: unknown, id = "toolu_1") => ({
  tool: t,
  input,
  toolUseId: id,
  context: {
    toolUseId: id,
    cwd: "/proj",
    permissionMode: "default" as const,
    progress: () => Effect.void,
    interrupted: Effect.never,
    state: Effect.runSync(Tool.makeSessionState)
  }
})

const decision: PermissionDecision = {
  behavior: "ask",
  message: "Bash needs approval",
  reason: "Bash needs approval",
  rule: null,
  source: null,
  trace: []
}

const settings = Settings.layerStatic({ home: "/home/u", projectDir: "/proj" })

describe("TerminalApprover", () => {
  describe("parseAnswer", () => {
    const cases = [
      ["y", { _tag: "Once" }],
      [" YES ", { _tag: "Once" }],
      ["a", { _tag: "Always" }],
      ["always", { _tag: "Always" }],
      ["n", { _tag: "No", reason: undefined }],
      ["n   too risky ", { _tag: "No", reason: "too risky" }],
      ["no, use git mv", { _tag: "Unclear" }],
      ["maybe", { _tag: "Unclear" }]
    ] as const
    for (const [line, answer] of cases) {
      it(JSON.stringify(line), () => expect(TerminalApprover.parseAnswer(line)).toEqual(answer))
    }
  })

  layer(Layer.mergeAll(TreeSitterShellAnalyzer.layer, settings), { timeout: 30_000 })("on injected streams", (it) => {
    const withTerminal = <A, E>(
      lines: ReadonlyArray<string>,
      f: (out: () => string) => Effect.Effect<A, E, Approver | Settings.Settings>
    ) =>
      Effect.gen(function* () {
        const { input, output, written } = typedAnswers(lines, { close: lines.length === 0 })
        return yield* f(written).pipe(Effect.provide(TerminalApprover.layerWith({ input, output })))
      })

    it.scoped("y approves once, and the prompt shows the call and the reason", () =>
      withTerminal(["y"], (out) =>
        Effect.gen(function* () {
          const approver = yield* Approver
          const approval = yield* approver.approve(request(Bash, { command: "npm test" }), decision)
          expect(approval).toEqual({ _tag: "Approved" })
          expect(out()).toBe(
            'Armature wants to use Bash: npm test\nReason: Bash needs approval\nAllow? [y] yes once  [a] yes, and always allow Bash(npm test:*)  [n] no (you may add a reason: "n too risky") '
          )
        })
      )
    )

    it.scoped("n with a reason refuses with the reason for the model", () =>
      withTerminal(["n use the test script"], () =>
        Effect.gen(function* () {
          const approver = yield* Approver
          const approval = yield* approver.approve(request(Bash, { command: "rm -rf x" }), decision)
          expect(approval).toEqual({
            _tag: "Rejected",
            message: "The user refused permission to use Bash. Reason: use the test script"
          })
        })
      )
    )

    it.scoped("a adds session rules for each command prefix", () =>
      withTerminal(["a"], () =>
        Effect.gen(function* () {
          const approver = yield* Approver
          const approval = yield* approver.approve(request(Bash, { command: "git status && npm run build" }), decision)
          expect(approval).toEqual({ _tag: "Approved" })
          const s = yield* Settings.Settings
          const rules = yield* Ref.get(s.sessionRules)
          expect(rules.map((r) => [r.text, r.source, r.behavior])).toEqual([
            ["Bash(git status:*)", "session", "allow"],
            ["Bash(npm run:*)", "session", "allow"]
          ])
        })
      )
    )

    it.scoped("an approval is bound to the call id and its input hash", () =>
      withTerminal(["y", "n", "n"], () =>
        Effect.gen(function* () {
          const approver = yield* Approver
          const first = yield* approver.approve(request(Edit, { file_path: "/proj/a" }, "toolu_1"), decision)
          expect(first._tag).toBe("Approved")
          // The same call again: the recorded approval, no new prompt.
          const again = yield* approver.approve(request(Edit, { file_path: "/proj/a" }, "toolu_1"), decision)
          expect(again._tag).toBe("Approved")
          // Same id, different input: asked again (answer n).
          const changed = yield* approver.approve(request(Edit, { file_path: "/proj/b" }, "toolu_1"), decision)
          expect(changed._tag).toBe("Rejected")
          // Same input, another call: asked again (answer n).
          const other = yield* approver.approve(request(Edit, { file_path: "/proj/a" }, "toolu_2"), decision)
          expect(other._tag).toBe("Rejected")
        })
      )
    )

    it.scoped("a closed input refuses", () =>
      withTerminal([], () =>
        Effect.gen(function* () {
          const approver = yield* Approver
          expect(yield* approver.approve(request(Bash, { command: "ls" }), decision)).toEqual({
            _tag: "Rejected",
            message: "The user refused permission to use Bash. Reason: no answer (the input was closed)"
          })
        })
      )
    )

    it.scoped("unclear answers are asked again; a file approved always adds a directory rule", () =>
      withTerminal(["what?", "a"], (out) =>
        Effect.gen(function* () {
          const approver = yield* Approver
          const approval = yield* approver.approve(request(Edit, { file_path: "/proj/src/x.ts" }), decision)
          expect(approval._tag).toBe("Approved")
          expect(out()).toContain("Please answer y, a or n: ")
          const s = yield* Settings.Settings
          expect((yield* Ref.get(s.sessionRules)).map((r) => r.text).at(-1)).toBe("Edit(//proj/src/**)")
        })
      )
    )
  })
})

layer(settings)("CallbackApprover", (it) => {
  it.effect("passes allow with updatedInput and session rules, deny with the message", () =>
    Effect.gen(function* () {
      const calls: Array<string> = []
      const approver = yield* Effect.provide(
        Approver,
        CallbackApprover.layer((name, input, options) => {
          calls.push(`${name}:${options.toolUseId}:${options.reason}`)
          const command = (input as { command: string }).command
          return command === "ls"
            ? Promise.resolve({
                behavior: "allow",
                updatedInput: { command: "ls -1" },
                updatedPermissions: ["Bash(ls:*)"]
              })
            : Effect.succeed({ behavior: "deny", message: "not that" })
        })
      )
      expect(yield* approver.approve(request(Bash, { command: "ls" }), decision)).toEqual({
        _tag: "Approved",
        updatedInput: { command: "ls -1" }
      })
      expect(yield* approver.approve(request(Bash, { command: "rm x" }, "toolu_2"), decision)).toEqual({
        _tag: "Rejected",
        message: "not that"
      })
      // Recorded for the same id and input: the callback is not called again.
      yield* approver.approve(request(Bash, { command: "ls" }), decision)
      expect(calls).toEqual(["Bash:toolu_1:Bash needs approval", "Bash:toolu_2:Bash needs approval"])
      const s = yield* Settings.Settings
      expect((yield* Ref.get(s.sessionRules)).map((r) => r.text)).toEqual(["Bash(ls:*)"])
    })
  )

  it.effect("a failing callback refuses", () =>
    Effect.gen(function* () {
      const approver = yield* Effect.provide(
        Approver,
        CallbackApprover.layer(() => Promise.reject(new Error("boom")))
      )
      expect(yield* approver.approve(request(Bash, { command: "ls" }), decision)).toEqual({
        _tag: "Rejected",
        message: "The permission callback failed: boom"
      })
    })
  )

  it("the input hash ignores key order", () => {
    expect(CallbackApprover.inputHash("Edit", { a: 1, b: [1, { c: 2, d: 3 }] })).toBe(
      CallbackApprover.inputHash("Edit", { b: [1, { d: 3, c: 2 }], a: 1 })
    )
    expect(CallbackApprover.inputHash("Edit", { a: 1 })).not.toBe(CallbackApprover.inputHash("Write", { a: 1 }))
  })
})
