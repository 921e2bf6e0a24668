import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"

const root = Path.resolve(import.meta.dirname, "../..")

describe("the README's example batch", () => {
  it("partitions, orders and permits real tools end to end", async () => {
    const home = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-example-"))
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        [
          "bin/armature.mjs",
          "exec",
          "examples/batch.jsonl",
          "--settings",
          "examples/settings.json",
          "--setting-sources",
          "user",
          "--output",
          "json"
        ],
        { cwd: root, env: { ...process.env, HOME: home, ARMATURE_STATE_DIR: Path.join(home, "state") } },
        (error, out, err) => (error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out))
      )
    )
    const { results, summary } = JSON.parse(stdout) as {
      results: Array<{ tool_use_id: string; content: unknown; is_error: boolean; t_ms: number }>
      summary: { calls: number; errors: number; wall_ms: number; busy_ms: number }
    }
    const byId = new Map(results.map((r) => [r.tool_use_id, r]))
    expect(results.map((r) => r.tool_use_id)).toEqual([
      "toolu_01",
      "toolu_02",
      "toolu_03",
      "toolu_03b",
      "toolu_04",
      "toolu_05",
      "toolu_06",
      "toolu_07"
    ])
    // Glob names files relative to the working directory.
    expect(String(byId.get("toolu_01")?.content).split("\n")).toContain("src/layers/executor/StreamingExecutor.ts")
    expect(byId.get("toolu_03")?.content).toBe("Slept for 1500 ms")
    expect(byId.get("toolu_04")).toMatchObject({ content: "built", is_error: false })
    expect(byId.get("toolu_07")?.is_error).toBe(true)
    expect(String(byId.get("toolu_07")?.content)).toContain(
      "Permission to use Bash has been denied by rule Bash(rm -rf:*)"
    )
    expect(summary).toMatchObject({ calls: 8, errors: 1 })
    // the two Sleeps ran together: the busy time exceeds the wall time
    expect(summary.busy_ms).toBeGreaterThan(summary.wall_ms)
  }, 120_000)
})
