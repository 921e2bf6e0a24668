import { describe, expect, it } from "@effect/vitest"
import type { HookInput } from "../../src/domain/Hook.js"
import * as HookMatcher from "../../src/domain/HookMatcher.js"

const input = (fields: Partial<HookInput>): HookInput => ({
  hook_event_name: "PreToolUse",
  session_id: "s",
  transcript_path: "/t.jsonl",
  cwd: "/p",
  permission_mode: "default",
  ...fields
})

describe("HookMatcher.matches", () => {
  const table: ReadonlyArray<readonly [string | undefined, string, boolean]> = [
    [undefined, "Bash", true],
    ["", "Bash", true],
    ["*", "mcp__github__create_issue", true],
    ["Bash", "Bash", true],
    ["Bash", "bash", false],
    ["Bash", "BashOutput", false],
    ["Edit|Write", "Edit", true],
    ["Edit|Write", "Write", true],
    ["Edit|Write", "MultiEdit", false],
    ["Edit|Write", "Read", false],
    ["mcp__.*", "mcp__github__create_issue", true],
    ["mcp__.*", "Bash", false],
    ["Notebook.*", "NotebookEdit", true],
    ["Edit.*", "MultiEdit", true],
    ["^Edit$", "MultiEdit", false],
    ["^Edit$", "Edit", true],
    ["mcp__memory__.*", "mcp__github__x", false],
    ["(unclosed", "(unclosed", false],
    ["(unclosed", "Bash", false],
    ["[", "[", false]
  ]
  for (const [matcher, name, expected] of table) {
    it(`${JSON.stringify(matcher)} ${expected ? "matches" : "does not match"} ${name}`, () => {
      expect(HookMatcher.matches(matcher, name)).toBe(expected)
    })
  }
})

describe("HookMatcher.appliesTo", () => {
  it("matches tool events on the tool name", () => {
    expect(HookMatcher.appliesTo("Bash", "PreToolUse", input({ tool_name: "Bash" }))).toBe(true)
    expect(HookMatcher.appliesTo("Bash", "PostToolUse", input({ tool_name: "Read" }))).toBe(false)
    expect(HookMatcher.appliesTo("Read", "PermissionRequest", input({ tool_name: "Read" }))).toBe(true)
    expect(HookMatcher.appliesTo("Read", "PostToolUseFailure", input({ tool_name: "Edit" }))).toBe(false)
  })

  it("matches SessionStart on its source and ignores matchers of UserPromptSubmit and Stop", () => {
    expect(HookMatcher.appliesTo("startup", "SessionStart", input({ source: "startup" }))).toBe(true)
    expect(HookMatcher.appliesTo("resume", "SessionStart", input({ source: "startup" }))).toBe(false)
    expect(HookMatcher.appliesTo("Bash", "UserPromptSubmit", input({ prompt: "hi" }))).toBe(true)
    expect(HookMatcher.appliesTo("Bash", "Stop", input({}))).toBe(true)
  })
})
