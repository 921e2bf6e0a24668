import { execFile } from "node:child_process"
import * as Path from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "@effect/vitest"
import { tempDir } from "../../fixtures/ProcessTestKit.js"

const GiB = 1024 * 1024 * 1024
const MiB = 1024 * 1024
const script = Path.resolve(import.meta.dirname, "../../fixtures/bash-memory/run.ts")

describe("Bash memory", () => {
  // The Bash tool runs in a process of its own (test/fixtures/bash-memory/run.ts), so the RSS it reports is the
  // tool's and not the test runner's.
  // Asynchronous on purpose: a synchronous child would block the vitest worker for the whole run.
  it("1 GiB of output streams to the spill file with RSS growing by less than 100 MiB", async () => {
    const stateDir = tempDir("armature-bash-memory-")
    const { stdout: out } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", script, stateDir, String(GiB)],
      {
        encoding: "utf8",
        maxBuffer: 16 * MiB,
        cwd: Path.resolve(import.meta.dirname, "../../..")
      }
    )
    const result = JSON.parse(out) as { growth: number; size: number; path: string; head: string; text: string }
    expect(result.size).toBe(GiB)
    expect(result.head).toBe(`${"a".repeat(63)}\n`.repeat(312))
    expect(result.text).toContain(
      `characters omitted: the output was ${GiB} characters (1.0GB), more than the 30000-character limit. Full output saved to: ${result.path}`
    )
    expect(result.growth).toBeLessThan(100 * MiB)
  }, 180_000)
})
