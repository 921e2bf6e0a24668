import { execFile } from "node:child_process"
import * as Path from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "@effect/vitest"
import * as PersistedOutput from "../../../src/domain/PersistedOutput.js"
import { tempDir } from "../../fixtures/ProcessTestKit.js"

const GiB = 1024 * 1024 * 1024
const MiB = 1024 * 1024
const script = Path.resolve(import.meta.dirname, "../../fixtures/bash-memory/run.ts")

describe("Bash memory", () => {
  // The Bash tool runs in a process of its own (test/fixtures/bash-memory/run.ts), so the RSS it reports is the
  // tool's and not the test runner's; it is awaited asynchronously so the test worker stays responsive. The
  // property is memory, not time: the timeouts (the tool's, in the fixture, and this test's) only guard against a
  // hang, and are long because moving 1 GiB through bash and the tool took over 180 s on a 2-core machine at load
  // average 20.
  it("1 GiB of output streams to the spill file with RSS growing by less than 100 MiB", async () => {
    const stateDir = tempDir("armature-bash-memory-")
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", script, stateDir, String(GiB)], {
      encoding: "utf8",
      maxBuffer: 16 * MiB,
      // above the default 64 MiB cap on saved output, so the whole GiB streams to the file
      env: { ...process.env, ARMATURE_MAX_SAVED_OUTPUT: String(2 * GiB) },
      cwd: Path.resolve(import.meta.dirname, "../../..")
    })
    const result = JSON.parse(stdout) as { growth: number; size: number; path: string; text: string }
    expect(result.size).toBe(GiB)
    expect(result.text).toBe(
      PersistedOutput.persistedOutput({
        bytes: GiB,
        path: result.path,
        preview: `${"a".repeat(63)}\n`.repeat(31).replace(/\n$/, "")
      })
    )
    expect(result.growth).toBeLessThan(100 * MiB)
  }, 900_000)
})
