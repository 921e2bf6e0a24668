import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import * as fc from "fast-check"
import { emptyOutcome } from "../../src/domain/Hook.js"
import * as HookOutput from "../../src/domain/HookOutput.js"

describe("HookOutput.decode", () => {
  it("accepts a full PreToolUse output", () => {
    const json = {
      continue: true,
      systemMessage: "hi",
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "ask",
        permissionDecisionReason: "check this",
        updatedInput: { command: "ls" },
        additionalContext: "ctx"
      }
    }
    expect(HookOutput.decode("PreToolUse", json)).toStrictEqual(Either.right(json))
  })

  it("names every field that fails the schema", () => {
    expect(HookOutput.decode("PreToolUse", { continue: "no", decision: "maybe" })).toStrictEqual(
      Either.left('continue: Expected boolean, actual "no"; decision: Expected "approve" | "block", actual "maybe"')
    )
    expect(
      HookOutput.decode("PreToolUse", {
        hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "yes" }
      })
    ).toStrictEqual(
      Either.left('hookSpecificOutput.permissionDecision: Expected "allow" | "deny" | "ask", actual "yes"')
    )
  })

  it("requires hookEventName to equal the event", () => {
    expect(HookOutput.decode("PreToolUse", { hookSpecificOutput: { hookEventName: "PostToolUse" } })).toStrictEqual(
      Either.left('hookSpecificOutput.hookEventName is "PostToolUse", expected "PreToolUse"')
    )
    expect(HookOutput.decode("PostToolUse", { hookSpecificOutput: {} })).toStrictEqual(
      Either.left('hookSpecificOutput.hookEventName is missing, expected "PostToolUse"')
    )
  })
})

describe("HookOutput.fromStdout", () => {
  it("reads decisions, and `decision` approve/block for PreToolUse", () => {
    expect(HookOutput.fromStdout("PreToolUse", "h", '{"decision":"block"}')).toMatchObject({
      decision: "deny",
      reason: "Blocked by hook",
      block: "Blocked by hook"
    })
    expect(HookOutput.fromStdout("PreToolUse", "h", '{"decision":"approve","reason":"fine"}')).toMatchObject({
      decision: "allow",
      reason: "fine"
    })
    expect(
      HookOutput.fromStdout(
        "PreToolUse",
        "h",
        '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}'
      )
    ).toMatchObject({ decision: "deny", reason: "no", block: "no" })
  })

  it("reads a PermissionRequest decision", () => {
    const allow = HookOutput.fromStdout(
      "PermissionRequest",
      "h",
      '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"a":1}}}}'
    )
    expect(allow).toMatchObject({ decision: "allow", updatedInput: { a: 1 } })
    const deny = HookOutput.fromStdout(
      "PermissionRequest",
      "h",
      '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"nope","interrupt":true}}}'
    )
    expect(deny).toMatchObject({ decision: "deny", reason: "nope", continue: false })
  })

  it("ignores plain stdout, except as context for UserPromptSubmit and SessionStart", () => {
    expect(HookOutput.fromStdout("PreToolUse", "h", "hello\n")).toStrictEqual({ command: "h" })
    expect(HookOutput.fromStdout("PreToolUse", "h", "[info] checked\n")).toStrictEqual({ command: "h" })
    expect(HookOutput.fromStdout("PreToolUse", "h", "{not json")).toMatchObject({
      decision: "deny",
      reason: expect.stringContaining("[h]: hook output starts like a JSON decision but does not parse:")
    })
    expect(HookOutput.fromStdout("SessionStart", "h", "hello\n")).toStrictEqual({
      command: "h",
      additionalContext: "hello"
    })
  })

  it("makes JSON that fails the schema a non-blocking error", () => {
    expect(HookOutput.fromStdout("PostToolUse", "h", '{"suppressOutput":1}')).toStrictEqual({
      command: "h",
      error: "[h]: hook output does not match the schema: suppressOutput: Expected boolean, actual 1"
    })
  })

  it("reads PostToolUse context and MCP output replacement", () => {
    expect(
      HookOutput.fromStdout(
        "PostToolUse",
        "h",
        '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"c","updatedMCPToolOutput":[1]}}'
      )
    ).toMatchObject({ additionalContext: "c", updatedMCPToolOutput: [1] })
  })
})

describe("HookOutput.blockedByExit", () => {
  it("quotes the command and the trimmed stderr", () => {
    expect(HookOutput.blockedByExit("./check.sh", "no rm\n")).toStrictEqual({
      command: "./check.sh",
      decision: "deny",
      reason: "[./check.sh]: no rm",
      block: "[./check.sh]: no rm"
    })
    expect(HookOutput.blockedByExit("x", "").reason).toBe("[x]: No stderr output")
  })
})

describe("HookOutput.aggregate", () => {
  it("is the empty outcome for no verdicts", () => {
    expect(HookOutput.aggregate([])).toStrictEqual(emptyOutcome)
  })

  it("takes deny over ask over allow, with the reason of the first hook that made the decision", () => {
    const outcome = HookOutput.aggregate([
      { command: "a", decision: "allow", reason: "ok", updatedInput: { x: 1 } },
      { command: "b", decision: "ask", reason: "check" },
      { command: "c", decision: "ask", reason: "check too" }
    ])
    expect(outcome.decision).toBe("ask")
    expect(outcome.reason).toBe("check")
    expect(outcome.updatedInput).toStrictEqual({ x: 1 })
  })

  it("drops updatedInput when the outcome is deny, keeps every block and error in order", () => {
    const outcome = HookOutput.aggregate([
      { command: "a", decision: "allow", updatedInput: { x: 1 } },
      HookOutput.blockedByExit("b", "stop"),
      HookOutput.nonBlocking("c", "oops"),
      { command: "d", continue: false, stopReason: "halt", systemMessage: "m" }
    ])
    expect(outcome).toMatchObject({
      decision: "deny",
      reason: "[b]: stop",
      blocks: [{ command: "b", reason: "[b]: stop" }],
      updatedInput: undefined,
      continue: false,
      stopReason: "halt",
      systemMessages: ["m"],
      errors: ["[c]: oops"]
    })
  })

  it.prop(
    "a deny anywhere wins, whatever the other hooks say",
    [fc.array(fc.constantFrom<"allow" | "ask" | undefined>("allow", "ask", undefined), { maxLength: 6 }), fc.nat(6)],
    ([others, at]) => {
      const verdicts: Array<HookOutput.HookVerdict> = others.map((decision, i) => ({ command: `h${i}`, decision }))
      verdicts.splice(Math.min(at, verdicts.length), 0, { command: "denier", decision: "deny", reason: "no" })
      const outcome = HookOutput.aggregate(verdicts)
      expect(outcome.decision).toBe("deny")
      expect(outcome.reason).toBe("no")
    }
  )
})
