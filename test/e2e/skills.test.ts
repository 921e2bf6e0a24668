/**
 * `armature run` with skills, over the scripted Messages server: a skill in the project's `.claude/skills` is listed
 * to the model in the Skill tool's description; a Skill call loads its body with its base directory; a skill's
 * `allowed-tools` let those calls run without asking once it is loaded (headless: an ask would be refused); a skill
 * file with bad front matter is skipped with a warning naming its file and line; `Skill(name)` deny rules hold.
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as MessagesServer from "../fixtures/MessagesServer.js"

const bin = Path.resolve(__dirname, "../../bin/armature.mjs")

interface Outcome {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

const armature = (args: ReadonlyArray<string>, env: Record<string, string | undefined>) =>
  Effect.async<Outcome>((resume) => {
    const child = ChildProcess.spawn(process.execPath, [bin, ...args], {
      env: { ...process.env, ANTHROPIC_API_KEY: "dummy", ANTHROPIC_MODEL: undefined, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout!.on("data", (d: Buffer) => {
      stdout += d.toString("utf8")
    })
    child.stderr!.on("data", (d: Buffer) => {
      stderr += d.toString("utf8")
    })
    child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
    return Effect.sync(() => child.kill("SIGKILL"))
  })

const releaseSkill = `---
name: release-notes
description: Writes release notes from the changelog. Use when asked for release notes.
allowed-tools: Bash(git log:*), Write
---
Read CHANGELOG.md, then write NOTES.md with one line per entry.

See template.md in this skill's directory.
`

const broken = `---
name: broken
description: [unclosed
this line is not yaml
---
Body.
`

/** A project with two skills (one broken), a user skill under HOME, and a changelog. */
const project = () => {
  const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-skills-")))
  const home = Path.join(dir, "home")
  const skill = Path.join(dir, ".claude", "skills", "release-notes")
  Fs.mkdirSync(skill, { recursive: true })
  Fs.writeFileSync(Path.join(skill, "SKILL.md"), releaseSkill)
  Fs.writeFileSync(Path.join(skill, "template.md"), "- ENTRY\n")
  Fs.mkdirSync(Path.join(dir, ".claude", "skills", "broken"), { recursive: true })
  Fs.writeFileSync(Path.join(dir, ".claude", "skills", "broken", "SKILL.md"), broken)
  Fs.mkdirSync(Path.join(home, ".claude", "skills", "greet"), { recursive: true })
  Fs.writeFileSync(
    Path.join(home, ".claude", "skills", "greet", "SKILL.md"),
    "---\ndescription: Greets the user by $ARGUMENTS\n---\nSay hello to $ARGUMENTS.\n"
  )
  Fs.writeFileSync(Path.join(dir, "CHANGELOG.md"), "- fixed a bug\n")
  return { dir, env: { ARMATURE_STATE_DIR: Path.join(dir, ".armature"), HOME: home } }
}

const resultsOf = (request: MessagesServer.RecordedRequest) =>
  request.body.messages.flatMap((m) =>
    Array.isArray(m.content)
      ? (m.content as ReadonlyArray<Record<string, unknown>>).filter((b) => b.type === "tool_result")
      : []
  )

describe("armature run: skills", () => {
  it.scopedLive(
    "a project skill is listed, loaded by the Skill tool with its base directory, and its allowed-tools run unasked",
    () =>
      Effect.gen(function* () {
        const { dir, env } = project()
        const server = yield* MessagesServer.make([
          MessagesServer.message([
            { type: "tool_use", id: "toolu_skill", name: "Skill", input: { skill: "release-notes" } }
          ]),
          MessagesServer.message([
            {
              type: "tool_use",
              id: "toolu_write",
              name: "Write",
              input: { file_path: Path.join(dir, "NOTES.md"), content: "- fixed a bug\n" }
            }
          ]),
          MessagesServer.message([{ type: "text", text: "Notes written." }])
        ])
        // the skill grants tools: loading it is allowed by a rule naming it (headless, it would be refused)
        const args = ["run", "release notes please", "--output", "stream-json", "--cwd", dir]
        const out = yield* armature([...args, "--allowed-tools", "Skill(release-notes)"], {
          ...env,
          ANTHROPIC_BASE_URL: server.url
        })
        expect(out.code, out.stderr).toBe(0)
        // the broken skill is skipped with its file and line; the others load
        expect(out.stderr).toContain(`skill skipped: ${Path.join(dir, ".claude", "skills", "broken", "SKILL.md")}:4:`)
        const tools = server.requests[0].body.tools ?? []
        const skillTool = tools.find((t) => t.name === "Skill")
        expect(skillTool, JSON.stringify(tools.map((t) => t.name))).toBeDefined()
        const description = String(skillTool?.description)
        expect(description).toContain(
          "<name>\nrelease-notes\n</name>\n<description>\nWrites release notes from the changelog. Use when asked for release notes.\n</description>\n<location>\nproject\n</location>"
        )
        expect(description).toContain("<name>\ngreet\n</name>")
        expect(description).not.toContain("broken")
        expect(skillTool?.input_schema).toMatchObject({
          properties: { skill: { type: "string" }, args: { type: "string" } },
          required: ["skill"]
        })
        const [loaded] = resultsOf(server.requests[1])
        expect(loaded).toMatchObject({ tool_use_id: "toolu_skill" })
        expect(loaded.is_error).toBeUndefined()
        expect(String(loaded.content)).toBe(
          `Launching skill: release-notes\n\nBase directory for this skill: ${Path.join(dir, ".claude", "skills", "release-notes")}\n\n` +
            "Read CHANGELOG.md, then write NOTES.md with one line per entry.\n\nSee template.md in this skill's directory."
        )
        // Write is in the skill's allowed-tools: headless, it would be refused without them
        const [written] = resultsOf(server.requests[2]).filter((r) => r.tool_use_id === "toolu_write")
        expect(written.is_error, JSON.stringify(written)).toBeUndefined()
        expect(Fs.readFileSync(Path.join(dir, "NOTES.md"), "utf8")).toBe("- fixed a bug\n")
      }),
    120_000
  )

  it.scopedLive(
    "without the skill, the same Write asks (refused headless); a skill granting tools asks; $ARGUMENTS are replaced",
    () =>
      Effect.gen(function* () {
        const { dir, env } = project()
        const server = yield* MessagesServer.make([
          MessagesServer.message([
            { type: "tool_use", id: "toolu_greet", name: "Skill", input: { skill: "/greet", args: "name" } },
            { type: "tool_use", id: "toolu_skill", name: "Skill", input: { skill: "release-notes" } },
            {
              type: "tool_use",
              id: "toolu_write",
              name: "Write",
              input: { file_path: Path.join(dir, "NOTES.md"), content: "x\n" }
            }
          ]),
          MessagesServer.message([{ type: "text", text: "done" }])
        ])
        const out = yield* armature(["run", "hi", "--output", "stream-json", "--cwd", dir], {
          ...env,
          ANTHROPIC_BASE_URL: server.url
        })
        expect(out.code, out.stderr).toBe(0)
        const results = resultsOf(server.requests[1])
        const greet = results.find((r) => r.tool_use_id === "toolu_greet")
        expect(String(greet?.content)).toContain("Say hello to name.")
        expect(String(greet?.content)).toContain(
          `Base directory for this skill: ${Path.join(env.HOME, ".claude", "skills", "greet")}`
        )
        // a skill that grants tools is not loaded without approval
        const refused = results.find((r) => r.tool_use_id === "toolu_skill")
        expect(refused?.is_error).toBe(true)
        expect(String(refused?.content)).not.toContain("Base directory")
        const write = results.find((r) => r.tool_use_id === "toolu_write")
        expect(write?.is_error).toBe(true)
        expect(Fs.existsSync(Path.join(dir, "NOTES.md"))).toBe(false)
      }),
    120_000
  )

  it.scopedLive(
    "a Skill(name) deny rule refuses that skill; `tools list` shows the skills",
    () =>
      Effect.gen(function* () {
        const { dir, env } = project()
        Fs.writeFileSync(
          Path.join(dir, ".claude", "settings.json"),
          JSON.stringify({ permissions: { deny: ["Skill(release-notes)"] } })
        )
        const server = yield* MessagesServer.make([
          MessagesServer.message([
            { type: "tool_use", id: "toolu_skill", name: "Skill", input: { skill: "release-notes" } },
            { type: "tool_use", id: "toolu_greet", name: "Skill", input: { skill: "greet" } }
          ]),
          MessagesServer.message([{ type: "text", text: "done" }])
        ])
        const out = yield* armature(["run", "hi", "--output", "stream-json", "--cwd", dir], {
          ...env,
          ANTHROPIC_BASE_URL: server.url
        })
        expect(out.code, out.stderr).toBe(0)
        const results = resultsOf(server.requests[1])
        const denied = results.find((r) => r.tool_use_id === "toolu_skill")
        expect(denied?.is_error).toBe(true)
        expect(String(denied?.content)).toContain("Skill(release-notes)")
        expect(results.find((r) => r.tool_use_id === "toolu_greet")?.is_error).toBeUndefined()

        const list = yield* armature(["tools", "list", "--cwd", dir], env)
        expect(list.code, list.stderr).toBe(0)
        expect(list.stdout).toMatch(/^Skill +workflow +Loads a skill/m)
        expect(list.stdout).toMatch(/^greet +user +Greets the user by \$ARGUMENTS$/m)
        expect(list.stdout).toMatch(
          /^release-notes +project +Writes release notes .*\[allowed-tools: Bash\(git log:\*\), Write\]$/m
        )
      }),
    120_000
  )
})
