import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"

const bin = Path.resolve(import.meta.dirname, "../../bin/armature.mjs")

interface Result {
  readonly tool_use_id: string
  readonly content: unknown
  readonly is_error: boolean
}

/** Runs `armature exec` on a batch in a fresh directory with the given settings; returns the results. */
const exec = async (
  callsIn: (dir: string) => ReadonlyArray<unknown>,
  settings: unknown
): Promise<ReadonlyArray<Result>> => {
  const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-cascade-")))
  const calls = callsIn(dir)
  Fs.writeFileSync(Path.join(dir, "a.txt"), "alpha\n")
  Fs.writeFileSync(Path.join(dir, "b.txt"), "beta\n")
  Fs.writeFileSync(Path.join(dir, "batch.json"), JSON.stringify(calls))
  Fs.writeFileSync(Path.join(dir, "settings.json"), JSON.stringify(settings))
  const stdout = await new Promise<string>((resolve, reject) =>
    execFile(
      process.execPath,
      [bin, "exec", "batch.json", "--settings", "settings.json", "--setting-sources", "user", "--output", "json"],
      { cwd: dir, env: { ...process.env, HOME: dir, ARMATURE_STATE_DIR: Path.join(dir, ".state") } },
      // exit code 1 means "some results are errors": the JSON is still complete
      (error, out, err) => (error !== null && out === "" ? reject(new Error(`${error.message}\n${err}`)) : resolve(out))
    )
  )
  return (JSON.parse(stdout) as { results: ReadonlyArray<Result> }).results
}

const use = (id: string, name: string, input: Record<string, unknown>) => ({ type: "tool_use", id, name, input })

describe("armature exec: sibling cancellation only for a command that ran and failed", () => {
  it("a Bash call refused by a deny rule leaves two Reads and an allowed ls alone", async () => {
    const results = await exec(
      (dir) => [
        use("r1", "Read", { file_path: Path.join(dir, "a.txt") }),
        use("r2", "Read", { file_path: Path.join(dir, "b.txt") }),
        use("rm", "Bash", { command: "rm -rf ./build" }),
        use("ls", "Bash", { command: "ls" })
      ],
      { permissions: { deny: ["Bash(rm -rf:*)"] } }
    )
    const byId = new Map(results.map((r) => [r.tool_use_id, r]))
    expect(results.map((r) => r.tool_use_id)).toEqual(["r1", "r2", "rm", "ls"])
    expect(byId.get("rm")?.is_error).toBe(true)
    expect(String(byId.get("rm")?.content)).toMatch(/^<tool_use_error>.*Bash\(rm -rf:\*\).*<\/tool_use_error>$/s)
    for (const id of ["r1", "r2", "ls"]) expect(byId.get(id), id).toMatchObject({ is_error: false })
    expect(String(byId.get("r1")?.content)).toContain("alpha")
    expect(String(byId.get("ls")?.content)).toContain("b.txt")
  }, 120_000)

  it("a Bash command that ran and failed cancels the calls queued behind it", async () => {
    const results = await exec(
      (dir) => [
        use("fail", "Bash", { command: "ls ./missing-directory" }),
        use("w", "Write", { file_path: Path.join(dir, "c.txt"), content: "x" })
      ],
      { permissions: { allow: ["Write"] } }
    )
    expect(results[0].is_error).toBe(true)
    expect(results[1]).toMatchObject({
      is_error: true,
      content: "<tool_use_error>Cancelled: parallel tool call Bash(ls ./missing-directory) errored</tool_use_error>"
    })
  }, 120_000)
})
