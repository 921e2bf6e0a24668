import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { afterAll, describe, expect, layer } from "@effect/vitest"
import { Effect, Either, Logger } from "effect"
import * as SettingsDomain from "../../../src/domain/Settings.js"
import * as SettingsLoader from "../../../src/layers/settings/SettingsLoader.js"
import { Settings } from "../../../src/services/Settings.js"

const root = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-settings-")))
afterAll(() => Fs.rmSync(root, { recursive: true, force: true }))
let n = 0
const tree = (files: Record<string, string>) => {
  const dir = Path.join(root, `t${n++}`)
  for (const [rel, text] of Object.entries(files)) {
    Fs.mkdirSync(Path.dirname(Path.join(dir, rel)), { recursive: true })
    Fs.writeFileSync(Path.join(dir, rel), text)
  }
  return { home: Path.join(dir, "home"), project: Path.join(dir, "proj"), dir }
}
const json = (permissions: unknown, extra: Record<string, unknown> = {}) => JSON.stringify({ permissions, ...extra })

layer(NodeFileSystem.layer)("SettingsLoader", (it) => {
  it.effect("merges user < project < local < --settings < flags, each rule keeping its source", () =>
    Effect.gen(function* () {
      const t = tree({
        "home/.claude/settings.json": json({ allow: ["Read"], defaultMode: "plan" }, { model: "x", theme: "dark" }),
        "proj/.claude/settings.json": json(
          { deny: ["Bash(rm:*)"], additionalDirectories: ["../shared"] },
          {
            hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "a" }] }] }
          }
        ),
        "proj/.claude/settings.local.json": json(
          { ask: ["Bash(git push:*)"], defaultMode: "acceptEdits" },
          { hooks: { PreToolUse: [{ hooks: [{ type: "command", command: "b" }] }] }, theme: "light" }
        ),
        "extra.json": json({ allow: ["Edit(/src/**)"] })
      })
      const { merged } = yield* SettingsLoader.load({
        home: t.home,
        projectDir: t.project,
        settingsFiles: [Path.join(t.dir, "extra.json")],
        allowedTools: ["WebFetch(domain:example.com), Glob"],
        disallowedTools: ["Bash(curl:*) Bash(wget:*)"],
        permissionMode: "dontAsk"
      })
      const p = merged.permissions
      expect(p.allow.map((r) => [r.text, r.source])).toEqual([
        ["Read", `${t.home}/.claude/settings.json`],
        ["Edit(/src/**)", `${t.dir}/extra.json`],
        ["WebFetch(domain:example.com)", "--allowed-tools"],
        ["Glob", "--allowed-tools"]
      ])
      expect(p.deny.map((r) => [r.text, r.source])).toEqual([
        ["Bash(rm:*)", `${t.project}/.claude/settings.json`],
        ["Bash(curl:*)", "--disallowed-tools"],
        ["Bash(wget:*)", "--disallowed-tools"]
      ])
      expect(p.ask.map((r) => r.source)).toEqual([`${t.project}/.claude/settings.local.json`])
      expect(p.defaultMode).toBe("dontAsk")
      expect(p.additionalDirectories).toEqual([Path.join(t.dir, "shared")])
      expect(p.allow[0].root).toBe(t.home)
      expect(p.allow[1].root).toBe(t.project)
      expect(merged.hooks.PreToolUse.map((m) => m.hooks[0].command)).toEqual(["a", "b"])
      expect(merged.settings.model).toBe("x")
      expect(merged.settings.theme).toBe("light")
      expect(merged.sources).toEqual([
        `${t.home}/.claude/settings.json`,
        `${t.project}/.claude/settings.json`,
        `${t.project}/.claude/settings.local.json`,
        `${t.dir}/extra.json`,
        "--allowed-tools",
        "--disallowed-tools",
        "--permission-mode"
      ])
    })
  )

  it.effect("--setting-sources selects which standard files are read; missing files are fine", () =>
    Effect.gen(function* () {
      const t = tree({
        "home/.claude/settings.json": json({ allow: ["Read"] }),
        "proj/.claude/settings.local.json": json({ allow: ["Edit"] })
      })
      const sources = Either.getOrThrow(SettingsLoader.parseSettingSources("project,local"))
      const { merged } = yield* SettingsLoader.load({ home: t.home, projectDir: t.project, settingSources: sources })
      expect(merged.permissions.allow.map((r) => r.text)).toEqual(["Edit"])
      expect(merged.permissions.defaultMode).toBe("default")
      const none = yield* SettingsLoader.load({
        home: Path.join(t.dir, "nohome"),
        projectDir: Path.join(t.dir, "noproj")
      })
      expect(none.merged.sources).toEqual([])
      expect(Either.isLeft(SettingsLoader.parseSettingSources("user,global"))).toBe(true)
    })
  )

  it.effect("the Settings layer exposes the merged settings", () =>
    Effect.gen(function* () {
      const t = tree({ "proj/.claude/settings.json": json({ deny: ["Bash"] }) })
      const settings = yield* Effect.provide(Settings, SettingsLoader.layer({ home: t.home, projectDir: t.project }))
      expect(settings.permissions.deny.map((r) => r.text)).toEqual(["Bash"])
      expect(settings.projectDir).toBe(t.project)
      expect(settings.home).toBe(t.home)
    })
  )

  it.effect("the model key: a later source overrides an earlier one; a non-string names the file and `model`", () =>
    Effect.gen(function* () {
      const t = tree({
        "home/.claude/settings.json": json({}, { model: "claude-user-1" }),
        "proj/.claude/settings.json": json({}, { model: "claude-project-1" }),
        "bad/settings.json": json({}, { model: 5 })
      })
      const settings = yield* Effect.provide(Settings, SettingsLoader.layer({ home: t.home, projectDir: t.project }))
      expect(settings.settings.model).toBe("claude-project-1")
      const error = yield* Effect.flip(
        SettingsLoader.load({
          home: t.home,
          projectDir: t.project,
          settingsFiles: [Path.join(t.dir, "bad/settings.json")]
        })
      )
      expect(error).toMatchObject({ _tag: "SettingsShapeError", path: "model" })
    })
  )

  it.effect(
    "a misspelt key is named in one warning with the key it was meant as; Claude Code's keys are not (load returns the warnings, make logs them)",
    () =>
      Effect.gen(function* () {
        const t = tree({
          "proj/.claude/settings.json": JSON.stringify({
            permisions: { allow: ["Read"] },
            permissions: { defaultMod: "plan", allow: [] },
            env: { A: "1" },
            includeCoAuthoredBy: false,
            colour: "red"
          })
        })
        const warnings: Array<string> = []
        const logger = Logger.make(({ logLevel, message }) => {
          if (logLevel._tag === "Warning") warnings.push(String(Array.isArray(message) ? message[0] : message))
        })
        const quiet = yield* SettingsLoader.load({ home: t.home, projectDir: t.project }).pipe(
          Effect.provide(Logger.replace(Logger.defaultLogger, logger))
        )
        expect(warnings).toEqual([])
        const settings = yield* SettingsLoader.make({ home: t.home, projectDir: t.project }).pipe(
          Effect.provide(Logger.replace(Logger.defaultLogger, logger))
        )
        const file = `${t.project}/.claude/settings.json`
        const expected = [
          `settings file ${file}: unknown key "permisions" is ignored (did you mean "permissions"?)`,
          `settings file ${file}: unknown key "colour" is ignored`,
          `settings file ${file}: unknown key "permissions.defaultMod" is ignored (did you mean "permissions.defaultMode"?)`
        ]
        expect(warnings).toEqual(expected)
        expect(quiet.warnings).toEqual(expected)
        expect(settings.warnings).toEqual(expected)
      })
  )

  it.effect(
    "a rule naming no built-in or MCP tool is warned about once, unless the application registers tools of its own",
    () =>
      Effect.gen(function* () {
        const t = tree({ "proj/.claude/settings.json": json({ allow: ["Deploy(prod)", "Read", "mcp__gh"] }) })
        const file = `${t.project}/.claude/settings.json`
        const warned = yield* SettingsLoader.load({ home: t.home, projectDir: t.project, allowedTools: ["Weather"] })
        expect(warned.warnings).toEqual([
          `settings file ${file}: rule "Deploy(prod)" names no built-in tool (Deploy); it matches only a tool registered under that exact name`,
          `--allowed-tools: rule "Weather" names no built-in tool (Weather); it matches only a tool registered under that exact name`
        ])
        const own = yield* SettingsLoader.load({
          home: t.home,
          projectDir: t.project,
          allowedTools: ["Weather"],
          warnUnknownTools: false
        })
        expect(own.warnings).toEqual([])
        // the rules themselves are kept either way
        expect(own.merged.permissions.allow.map((rule) => rule.tool)).toContain("Weather")
      })
  )

  describe("malformed files are typed errors naming the file", () => {
    const failure = (files: Record<string, string>, extra: Partial<SettingsLoader.LoadOptions> = {}) => {
      const t = tree(files)
      return Effect.map(
        Effect.flip(SettingsLoader.load({ home: t.home, projectDir: t.project, ...extra })),
        (error) => ({ error, t })
      )
    }

    it.effect("bad JSON names file, line and column", () =>
      Effect.gen(function* () {
        const { error, t } = yield* failure({
          "proj/.claude/settings.json": '{\n  "permissions": {\n    "allow": ["Read",]\n  }\n}'
        })
        expect(error._tag).toBe("SettingsJsonError")
        // the whole reason, on one line: what was found and the line it is on
        expect(error.message).toBe(
          `Invalid settings file ${t.project}/.claude/settings.json:3:22: unexpected "]" in: "allow": ["Read",]`
        )
      })
    )

    it.effect("wrong shape names the JSON path", () =>
      Effect.gen(function* () {
        const { error, t } = yield* failure({
          "proj/.claude/settings.local.json": json({ allow: ["Read", "Edit", 42] })
        })
        expect(error).toMatchObject({
          _tag: "SettingsShapeError",
          file: `${t.project}/.claude/settings.local.json`,
          path: "permissions.allow[2]"
        })
        expect(error.message).toBe(
          `Invalid settings file ${t.project}/.claude/settings.local.json: at permissions.allow[2]: Expected string, actual 42`
        )
      })
    )

    it.effect("a bad mode names permissions.defaultMode", () =>
      Effect.gen(function* () {
        const { error } = yield* failure({ "home/.claude/settings.json": json({ defaultMode: "yolo" }) })
        expect(error).toMatchObject({ _tag: "SettingsShapeError", path: "permissions.defaultMode" })
        expect(error.message).toContain(
          'at permissions.defaultMode: Expected one of "default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", actual "yolo"'
        )
      })
    )

    it.effect("a bad hook names hooks.PreToolUse[0].hooks[0].type", () =>
      Effect.gen(function* () {
        const { error } = yield* failure({
          "proj/.claude/settings.json": JSON.stringify({ hooks: { PreToolUse: [{ hooks: [{ type: "prompt" }] }] } })
        })
        expect(error).toMatchObject({ _tag: "SettingsShapeError", path: "hooks.PreToolUse[0].hooks[0].type" })
      })
    )

    it.effect("a non-object file is a shape error at the top level", () =>
      Effect.gen(function* () {
        const { error } = yield* failure({ "proj/.claude/settings.json": "[]" })
        expect(error).toMatchObject({ _tag: "SettingsShapeError", path: "" })
        expect(error.message).toMatch(/at the top level: /)
      })
    )

    it.effect("a malformed rule names the rule and its file", () =>
      Effect.gen(function* () {
        const { error, t } = yield* failure({ "proj/.claude/settings.json": json({ deny: ["Bash(rm -rf"] }) })
        expect(error.message).toBe(
          `Invalid permission rule "Bash(rm -rf" in ${t.project}/.claude/settings.json: expected \`Tool(content)\` with a closing parenthesis at the end`
        )
      })
    )

    it.effect("a malformed flag rule names the flag", () =>
      Effect.gen(function* () {
        const { error } = yield* failure({}, { disallowedTools: ["WebFetch(evil.io)"] })
        expect(error).toMatchObject({ _tag: "PermissionRuleError", source: "--disallowed-tools" })
      })
    )

    it.effect("a missing --settings file is an error", () =>
      Effect.gen(function* () {
        const { error } = yield* failure({}, { settingsFiles: ["/nonexistent/armature.json"] })
        expect(error).toMatchObject({ _tag: "SettingsReadError", file: "/nonexistent/armature.json" })
      })
    )
  })
})

describe("Settings domain", () => {
  const cases: ReadonlyArray<readonly [ReadonlyArray<PropertyKey>, string]> = [
    [["permissions", "allow", 2], "permissions.allow[2]"],
    [["hooks", "Pre Tool", 0], 'hooks["Pre Tool"][0]'],
    [[], ""]
  ]
  for (const [path, text] of cases) {
    layer(NodeFileSystem.layer)(`formatPath ${text || "(empty)"}`, (it) => {
      it("formats", () => expect(SettingsDomain.formatPath(path)).toBe(text))
    })
  }
  layer(NodeFileSystem.layer)("decode", (it) => {
    it("keeps unknown keys", () => {
      const decoded = Either.getOrThrow(SettingsDomain.decode("f", '{"x":1,"permissions":{"y":2}}'))
      expect(decoded).toEqual({ x: 1, permissions: { y: 2 } })
    })
    it("reports the end of the text for truncated JSON", () => {
      const error = Either.getLeft(SettingsDomain.decode("f", '{\n"a":'))
      expect(
        error._tag === "Some" && error.value._tag === "SettingsJsonError" ? [error.value.line, error.value.column] : []
      ).toEqual([2, 5])
    })
  })
})
