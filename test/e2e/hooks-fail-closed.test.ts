import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"

const bin = Path.resolve(import.meta.dirname, "../../bin/armature.mjs")

/**
 * Runs `armature exec` on one Bash call, with permissions bypassed so that only the PreToolUse hook `guard` can stop
 * it; returns the call's result.
 */
const execWithGuard = async (dir: string, guard: string) => {
  const settings = Path.join(dir, "settings.json")
  Fs.writeFileSync(
    settings,
    JSON.stringify({
      hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: guard }] }] }
    })
  )
  const batch = Path.join(dir, "batch.jsonl")
  const call = { type: "tool_use", id: "toolu_guarded", name: "Bash", input: { command: "echo ran > marker" } }
  Fs.writeFileSync(batch, `${JSON.stringify(call)}\n`)
  const stdout = await new Promise<string>((resolve) =>
    execFile(
      process.execPath,
      [
        bin,
        "exec",
        batch,
        "--settings",
        settings,
        "--setting-sources",
        "user",
        "--permission-mode",
        "bypassPermissions",
        "--output",
        "json"
      ],
      { cwd: dir, env: { ...process.env, HOME: dir, ARMATURE_STATE_DIR: Path.join(dir, ".state") } },
      (_error, out) => resolve(out)
    )
  )
  const { results } = JSON.parse(stdout) as { results: Array<{ content: unknown; is_error: boolean }> }
  return results[0]
}

describe("armature exec with a guard hook that cannot run", () => {
  it("a missing PreToolUse hook command denies the call, naming the hook and why", async () => {
    const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-guard-")))
    const result = await execWithGuard(dir, "armature-missing-guard")
    expect(result.is_error).toBe(true)
    expect(String(result.content)).toContain("[armature-missing-guard]: exit 127: command not found")
    expect(Fs.existsSync(Path.join(dir, "marker"))).toBe(false)
  }, 120_000)

  it("a working guard that allows lets the same call run", async () => {
    const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-guard-")))
    const result = await execWithGuard(dir, "true")
    expect(result).toMatchObject({ is_error: false })
    expect(Fs.readFileSync(Path.join(dir, "marker"), "utf8")).toBe("ran\n")
  }, 120_000)
})
