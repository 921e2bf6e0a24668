import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Stream } from "effect"
import type * as Skill from "../../../src/domain/Skill.js"
import * as Tool from "../../../src/domain/Tool.js"
import * as ToolRegistryLive from "../../../src/layers/registry/ToolRegistryLive.js"
import * as SettingsLoader from "../../../src/layers/settings/SettingsLoader.js"
import * as SettingsWatch from "../../../src/layers/settings/SettingsWatch.js"
import * as SkillTool from "../../../src/layers/tools/Skill.js"
import { ToolRegistry } from "../../../src/services/ToolRegistry.js"

const writeSkill = (dir: string, name: string, description: string) => {
  const skill = Path.join(dir, ".claude", "skills", name)
  Fs.mkdirSync(skill, { recursive: true })
  Fs.writeFileSync(Path.join(skill, "SKILL.md"), `---\ndescription: ${description}\n---\nDo it.\n`)
}

/** The Skill tool's description now, or none when no Skill tool is registered. */
const listing = (registry: ToolRegistry["Type"]) =>
  Effect.map(
    registry.lookup("Skill"),
    Option.map((tool) => tool.description)
  )

describe("Skill's failures", () => {
  it.effect("a call naming no offered skill fails with an UnknownSkill, the text the model sees", () =>
    Effect.gen(function* () {
      const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-skills-typed-")))
      const skill: Skill.Skill = {
        name: "release",
        description: "Cuts a release",
        allowedTools: [],
        body: "Do it.",
        dir,
        file: Path.join(dir, "SKILL.md"),
        source: "project"
      }
      const tool = yield* SkillTool.make([skill])
      const ctx: Tool.ToolContext = {
        toolUseId: "toolu_skill_1",
        cwd: dir,
        permissionMode: "default",
        progress: () => Effect.void,
        interrupted: Effect.never,
        state: yield* Tool.makeSessionState
      }
      const failure = yield* Effect.flip(tool.call({ skill: "/deploy" }, ctx))
      expect(failure).toEqual(new SkillTool.UnknownSkill({ skill: "deploy", message: "Unknown skill: deploy" }))
      expect(Tool.failureText(tool, failure)).toBe("Unknown skill: deploy")
      expect(yield* tool.call({ skill: "release" }, ctx)).toContain("Launching skill: release")
    })
  )
})

describe("skills followed while the engine runs", () => {
  it.live("a skill added to .claude/skills is offered from the next turn, and one removed is not", () =>
    Effect.gen(function* () {
      const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-skills-live-")))
      writeSkill(dir, "release", "Cuts a release")
      const options = { projectDir: dir, home: Path.join(dir, "home") }
      const context = yield* Layer.build(
        SkillTool.layer.pipe(
          Layer.provideMerge(ToolRegistryLive.layer),
          Layer.provideMerge(SettingsWatch.layer(options, Stream.never)),
          Layer.provideMerge(SettingsLoader.layer(options)),
          Layer.provideMerge(NodeFileSystem.layer)
        )
      )
      const registry = Context.get(context, ToolRegistry)
      const first = yield* listing(registry)
      expect(Option.map(first, (d) => [d.includes("Cuts a release"), d.includes("Greets")])).toEqual(
        Option.some([true, false])
      )
      // written until seen: the watch is armed by a fiber of its own
      let now = first
      for (let i = 0; i < 60 && !Option.exists(now, (d) => d.includes("Greets")); i++) {
        writeSkill(dir, "greet", `Greets the user (${i})`)
        yield* Effect.sleep("300 millis")
        now = yield* listing(registry)
      }
      expect(Option.map(now, (d) => [d.includes("Cuts a release"), d.includes("Greets the user")])).toEqual(
        Option.some([true, true])
      )
      Fs.rmSync(Path.join(dir, ".claude", "skills", "release"), { recursive: true })
      Fs.rmSync(Path.join(dir, ".claude", "skills", "greet"), { recursive: true })
      for (let i = 0; i < 60 && Option.isSome(now); i++) {
        yield* Effect.sleep("300 millis")
        now = yield* listing(registry)
      }
      // no skill left: no Skill tool
      expect(now).toEqual(Option.none())
      Fs.rmSync(dir, { recursive: true, force: true })
    }).pipe(Effect.scoped)
  )
})
