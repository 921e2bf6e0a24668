import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"

const bin = Path.resolve(import.meta.dirname, "../../bin/armature.mjs")

const sleep = (id: string) => `${JSON.stringify({ type: "tool_use", id, name: "Sleep", input: { duration_ms: 1 } })}\n`

describe("live settings (armature exec reading stdin)", () => {
  it("an edit of .claude/settings.json during the run decides the next line; a broken edit keeps the last good settings and warns once", async () => {
    const cwd = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-live-")))
    const settings = Path.join(cwd, ".claude", "settings.json")
    Fs.mkdirSync(Path.dirname(settings))
    Fs.mkdirSync(Path.join(cwd, "home"))
    Fs.writeFileSync(settings, JSON.stringify({ permissions: { deny: [] } }))
    const child = spawn(process.execPath, [bin, "exec", "-", "--output", "stream-json"], {
      cwd,
      env: { ...process.env, ARMATURE_STATE_DIR: Path.join(cwd, ".state"), HOME: Path.join(cwd, "home") },
      stdio: ["pipe", "pipe", "pipe"]
    })
    const results = new Map<string, { content: string; is_error: boolean }>()
    let stdout = ""
    let stderr = ""
    const waiters: Array<() => void> = []
    const wake = () => {
      for (const w of waiters.splice(0)) w()
    }
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString()
      const lines = stdout.split("\n")
      stdout = lines.pop() ?? ""
      for (const line of lines) {
        const parsed = JSON.parse(line) as Record<string, unknown>
        if (parsed.type === "tool_result") {
          results.set(String(parsed.tool_use_id), {
            content: String(parsed.content),
            is_error: parsed.is_error === true
          })
        }
      }
      wake()
    })
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString()
      wake()
    })
    const done = new Promise<number>((resolve) => child.on("close", (code) => resolve(code ?? -1)))
    const until = (predicate: () => boolean): Promise<void> =>
      new Promise((resolve) => {
        const check = () => (predicate() ? resolve() : waiters.push(check))
        check()
      })
    const count = (text: string) => stderr.split(text).length - 1
    const resultOf = async (id: string) => {
      await until(() => results.has(id))
      return results.get(id)!
    }
    try {
      child.stdin.write(sleep("a"))
      expect(await resultOf("a")).toEqual({ content: "Slept for 1 ms", is_error: false })

      Fs.writeFileSync(settings, JSON.stringify({ permissions: { deny: ["Sleep"] } }))
      await until(() => count("Settings reloaded after a change to") === 1)
      expect(stderr).toContain(`Settings reloaded after a change to ${settings}`)
      child.stdin.write(sleep("b"))
      expect(await resultOf("b")).toEqual({
        content: `<tool_use_error>Permission to use Sleep has been denied by rule Sleep in .claude/settings.json.</tool_use_error>`,
        is_error: true
      })

      // a half-written file: refused with a warning naming the file and line; the deny rule stays in force
      Fs.writeFileSync(settings, '{"permissions": {\n  "deny": [')
      await until(() => stderr.includes("Invalid settings file"))
      expect(stderr).toContain(`Invalid settings file ${settings}:2:12: the JSON ends too early`)
      child.stdin.write(sleep("c"))
      expect((await resultOf("c")).content).toContain("denied by rule Sleep")

      // hooks are live too: a PreToolUse hook added now blocks the next call
      Fs.writeFileSync(
        settings,
        JSON.stringify({
          hooks: {
            PreToolUse: [
              { matcher: "Sleep", hooks: [{ type: "command", command: "echo 'held by the new hook' >&2; exit 2" }] }
            ]
          }
        })
      )
      await until(() => count("Settings reloaded after a change to") === 2)
      child.stdin.end(sleep("d"))
      const d = await resultOf("d")
      expect(d.is_error).toBe(true)
      expect(d.content).toContain("held by the new hook")
      expect(await done).toBe(0)
      expect(count("Invalid settings file")).toBe(1)
    } finally {
      child.kill("SIGKILL")
      Fs.rmSync(cwd, { recursive: true, force: true })
    }
  }, 120_000)
})
