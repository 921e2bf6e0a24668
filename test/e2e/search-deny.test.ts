/**
 * End to end: with `Read(./secrets/**)` denied in the project's settings, `armature exec` of Grep over "." and of
 * Glob returns nothing from secrets/ and says what it skipped; Read of the file is denied by the policy.
 */
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"

const bin = Path.resolve(import.meta.dirname, "../../bin/armature.mjs")

describe("armature exec: searches respect Read deny rules", () => {
  it("Grep over '.' and Glob skip secrets/, with a note naming the rule; Read of it is denied", async () => {
    const root = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-search-deny-e2e-")))
    const write = (file: string, content: string) => {
      Fs.mkdirSync(Path.dirname(Path.join(root, file)), { recursive: true })
      Fs.writeFileSync(Path.join(root, file), content)
    }
    write(".claude/settings.json", JSON.stringify({ permissions: { deny: ["Read(./secrets/**)"], allow: ["Read"] } }))
    write("secrets/key.pem", "PRIVATE KEY\n")
    write("src/a.ts", "// PRIVATE here\n")
    const calls = [
      { type: "tool_use", id: "grep", name: "Grep", input: { pattern: "PRIVATE", path: ".", output_mode: "content" } },
      { type: "tool_use", id: "glob", name: "Glob", input: { pattern: "**/*" } },
      { type: "tool_use", id: "read", name: "Read", input: { file_path: Path.join(root, "secrets/key.pem") } }
    ]
    const batch = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-search-deny-calls-")), "calls.jsonl")
    Fs.writeFileSync(batch, calls.map((c) => JSON.stringify(c)).join("\n"))
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        [bin, "exec", batch, "--setting-sources", "project", "--output", "json"],
        { cwd: root, env: { ...process.env, HOME: root, ARMATURE_STATE_DIR: Path.join(root, ".state") } },
        (error, out, err) => (error && out === "" ? reject(new Error(`${error.message}\n${err}`)) : resolve(out))
      )
    )
    const { results } = JSON.parse(stdout) as {
      results: Array<{ tool_use_id: string; content: unknown; is_error: boolean }>
    }
    const byId = new Map(results.map((r) => [r.tool_use_id, r]))
    const sourceNote = /\(1 path skipped: denied by Read\(\.\/secrets\/\*\*\) in .*settings\.json\)$/
    expect(byId.get("grep")?.is_error).toBe(false)
    expect(String(byId.get("grep")?.content)).toMatch(/^src\/a\.ts:1:\/\/ PRIVATE here\n\n/)
    expect(String(byId.get("grep")?.content)).toMatch(sourceNote)
    expect(String(byId.get("glob")?.content).split("\n\n")[0]).toBe("src/a.ts")
    expect(String(byId.get("glob")?.content)).toMatch(sourceNote)
    expect(byId.get("read")?.is_error).toBe(true)
    Fs.rmSync(root, { recursive: true, force: true })
    Fs.rmSync(Path.dirname(batch), { recursive: true, force: true })
  }, 120_000)
})
