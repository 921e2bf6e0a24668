import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"

const bin = Path.resolve(import.meta.dirname, "../../bin/armature.mjs")

const sleep = (id: string) => `${JSON.stringify({ type: "tool_use", id, name: "Sleep", input: { duration_ms: 1 } })}\n`

/** A project directory with `.claude/` and an empty `home/`, removed by `remove`. */
const project = () => {
  const cwd = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-live-")))
  Fs.mkdirSync(Path.join(cwd, ".claude"))
  Fs.mkdirSync(Path.join(cwd, "home"))
  return {
    cwd,
    settings: Path.join(cwd, ".claude", "settings.json"),
    remove: () => Fs.rmSync(cwd, { recursive: true, force: true })
  }
}

/**
 * `armature exec - --output stream-json` in `cwd`, fed line by line: each tool result as it is printed, and
 * waits on what stdout and stderr say (no sleeps: every wait is for a line the process prints).
 */
const execSession = (cwd: string, args: ReadonlyArray<string> = []) => {
  const child = spawn(process.execPath, [bin, "exec", "-", "--output", "stream-json", ...args], {
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
        results.set(String(parsed.tool_use_id), { content: String(parsed.content), is_error: parsed.is_error === true })
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
  return {
    send: (line: string) => child.stdin.write(line),
    end: (line: string) => child.stdin.end(line),
    until,
    done,
    stderr: () => stderr,
    /** How many times stderr says `text`. */
    count: (text: string) => stderr.split(text).length - 1,
    resultOf: async (id: string) => {
      await until(() => results.has(id))
      return results.get(id)!
    },
    kill: () => child.kill("SIGKILL")
  }
}

describe("live settings (armature exec reading stdin)", () => {
  it("an edit of .claude/settings.json during the run decides the next line; a broken edit keeps the last good settings and warns once", async () => {
    const { cwd, settings, remove } = project()
    Fs.writeFileSync(settings, JSON.stringify({ permissions: { deny: [] } }))
    const exec = execSession(cwd)
    try {
      exec.send(sleep("a"))
      expect(await exec.resultOf("a")).toEqual({ content: "Slept for 1 ms", is_error: false })

      Fs.writeFileSync(settings, JSON.stringify({ permissions: { deny: ["Sleep"] } }))
      await exec.until(() => exec.count("Settings reloaded after a change to") === 1)
      expect(exec.stderr()).toContain(`Settings reloaded after a change to ${settings}`)
      exec.send(sleep("b"))
      expect(await exec.resultOf("b")).toEqual({
        content: `<tool_use_error>Permission to use Sleep has been denied by rule Sleep in .claude/settings.json.</tool_use_error>`,
        is_error: true
      })

      // a half-written file: refused with a warning naming the file and line; the deny rule stays in force
      Fs.writeFileSync(settings, '{"permissions": {\n  "deny": [')
      await exec.until(() => exec.stderr().includes("Invalid settings file"))
      expect(exec.stderr()).toContain(`Invalid settings file ${settings}:2:12: the JSON ends too early`)
      exec.send(sleep("c"))
      expect((await exec.resultOf("c")).content).toContain("denied by rule Sleep")

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
      await exec.until(() => exec.count("Settings reloaded after a change to") === 2)
      exec.end(sleep("d"))
      const d = await exec.resultOf("d")
      expect(d.is_error).toBe(true)
      expect(d.content).toContain("held by the new hook")
      expect(await exec.done).toBe(0)
      expect(exec.count("Invalid settings file")).toBe(1)
    } finally {
      exec.kill()
      remove()
    }
  }, 120_000)

  it("an unknown key is warned about once while it stays, through reloads that change other keys; fixed and brought back, once more", async () => {
    const { cwd, settings, remove } = project()
    const write = (deny: ReadonlyArray<string>, misspelt: boolean) =>
      Fs.writeFileSync(
        settings,
        JSON.stringify({ permissions: { deny }, ...(misspelt ? { modle: "claude-sonnet-4-5" } : {}) })
      )
    const warning = `settings file ${settings}: unknown key "modle" is ignored (did you mean "model"?)`
    write([], true)
    const exec = execSession(cwd)
    const reloads = (n: number) => exec.until(() => exec.count("Settings reloaded after a change to") === n)
    try {
      exec.send(sleep("a"))
      await exec.resultOf("a")
      expect(exec.count(warning)).toBe(1)
      // each edit changes the rules (so each reload is seen) and keeps the misspelt key
      write(["Sleep"], true)
      await reloads(1)
      write([], true)
      await reloads(2)
      write(["Sleep"], true)
      await reloads(3)
      exec.send(sleep("b"))
      expect((await exec.resultOf("b")).content).toContain("denied by rule Sleep")
      expect(exec.count(warning)).toBe(1)
      // fixed: nothing to say; brought back: a new occurrence, said once
      write([], false)
      await reloads(4)
      write(["Sleep"], true)
      await reloads(5)
      exec.end(sleep("c"))
      await exec.resultOf("c")
      expect(await exec.done).toBe(0)
      expect(exec.count(warning)).toBe(2)
    } finally {
      exec.kill()
      remove()
    }
  }, 120_000)

  it("sandbox settings apply from the next Bash call: turned on mid-run it confines the next line, a filesystem edit reconfigures it, turned off it runs unconfined", async () => {
    const { cwd, settings, remove } = project()
    // a folder of the project the sandbox's filesystem.denyWrite names; the permission rules allow touching it
    const locked = Path.join(cwd, "locked")
    Fs.mkdirSync(locked)
    const write = (enabled: boolean, deny: boolean) =>
      Fs.writeFileSync(
        settings,
        JSON.stringify({
          permissions: { allow: ["Bash(touch *)"] },
          sandbox: { enabled, ...(deny ? { filesystem: { denyWrite: [locked] } } : {}) }
        })
      )
    const touch = (id: string) =>
      `${JSON.stringify({ type: "tool_use", id, name: "Bash", input: { command: `touch ${Path.join(locked, id)}` } })}\n`
    write(false, true)
    const exec = execSession(cwd)
    const reloads = (n: number) => exec.until(() => exec.count("Settings reloaded after a change to") === n)
    try {
      exec.send(touch("a"))
      expect((await exec.resultOf("a")).is_error).toBe(false)
      expect(Fs.existsSync(Path.join(locked, "a"))).toBe(true)

      write(true, true)
      await reloads(1)
      // the refused line still ends well (`|| echo`): a failed Bash line would cancel the lines after it
      exec.send(
        `${JSON.stringify({ type: "tool_use", id: "b", name: "Bash", input: { command: `touch ${Path.join(locked, "b")} || echo not written` } })}\n`
      )
      const b = await exec.resultOf("b")
      expect(b.content).toContain("Read-only file system")
      expect(b.content).toContain("not written")
      expect(Fs.existsSync(Path.join(locked, "b"))).toBe(false)

      write(true, false)
      await reloads(2)
      exec.send(touch("c"))
      expect((await exec.resultOf("c")).is_error).toBe(false)
      expect(Fs.existsSync(Path.join(locked, "c"))).toBe(true)

      write(false, true)
      await reloads(3)
      exec.end(touch("d"))
      expect((await exec.resultOf("d")).is_error).toBe(false)
      expect(Fs.existsSync(Path.join(locked, "d"))).toBe(true)
      expect(await exec.done).toBe(0)
    } finally {
      exec.kill()
      remove()
    }
  }, 120_000)
})
