import { describe, expect, it } from "@effect/vitest"
import * as SettingsKeys from "../../src/domain/SettingsKeys.js"

describe("SettingsKeys", () => {
  it("names each unknown key of the top level, permissions and sandbox, with a likely meant key", () => {
    expect(
      SettingsKeys.unknownKeys({
        permisions: {},
        hoks: {},
        model: "m",
        statusLine: {},
        permissions: { allow: [], alow: [], protectSecret: true },
        sandbox: { enabeld: true, network: {} },
        completelyDifferent: 1
      })
    ).toEqual([
      { path: "permisions", suggestion: "permissions" },
      { path: "hoks", suggestion: "hooks" },
      { path: "completelyDifferent", suggestion: undefined },
      { path: "permissions.alow", suggestion: "allow" },
      { path: "permissions.protectSecret", suggestion: "protectSecrets" },
      { path: "sandbox.enabeld", suggestion: "enabled" }
    ])
  })

  it("a file of known keys only (Armature's and Claude Code's) has none", () => {
    expect(
      SettingsKeys.unknownKeys({
        $schema: "https://json.schemastore.org/claude-code-settings.json",
        permissions: { allow: [], deny: [], ask: [], defaultMode: "plan", additionalDirectories: [] },
        env: { X: "1" },
        hooks: {},
        autoCompactThreshold: 1000,
        maxSavedOutputBytes: 10,
        enableAllProjectMcpServers: true
      })
    ).toEqual([])
    expect(SettingsKeys.unknownKeys([1, 2])).toEqual([])
  })

  it("a warning is one line naming file and key, and the whole meant path", () => {
    expect(SettingsKeys.warning("/p/s.json", { path: "permissions.defaultMod", suggestion: "defaultMode" })).toBe(
      'settings file /p/s.json: unknown key "permissions.defaultMod" is ignored (did you mean "permissions.defaultMode"?)'
    )
    expect(SettingsKeys.warning("/p/s.json", { path: "zzz", suggestion: undefined })).toBe(
      'settings file /p/s.json: unknown key "zzz" is ignored'
    )
  })
})
