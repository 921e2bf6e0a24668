import * as Os from "node:os"
import { defineConfig } from "vitest/config"

// `npm test` runs every file; `npm run test:unit` (`--mode unit`) leaves out the slow ones: the CLI as a process,
// real servers that restart and time out, the 1 GiB memory test, and the property files with thousands of cases
// (admission, executor against its ideal, Read deny over random trees).
const slow = [
  "test/e2e/**/*.test.ts",
  "test/layers/tools/BashMemory.test.ts",
  "test/layers/mcp/McpClient*.test.ts",
  "test/layers/files/FileAccess.test.ts",
  "test/layers/process/Descendants.test.ts",
  "test/domain/Admission.test.ts",
  "test/layers/executor/StreamingExecutorProperties.test.ts",
  "test/layers/tools/SearchReadDeny.test.ts",
  "test/programs/EverydayCorpus.test.ts",
  "test/layers/sandbox/SandboxBash.test.ts",
  "test/layers/sandbox/SandboxMcp.test.ts"
]

export default defineConfig(({ mode }) => ({
  test: {
    // One set of files, not two vitest projects: with a shared module graph (below) vitest runs one project's files
    // after the other's, so the workers idled at the end of the fast part and the whole run took ~20 s longer.
    include: ["test/**/*.test.ts"],
    exclude: mode === "unit" ? slow : [],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // better-sqlite3's native binding, compiled here on the first run after `npm ci` (which does not compile it)
    globalSetup: ["test/fixtures/SqliteBinding.ts"],
    setupFiles: ["test/fixtures/YieldBetweenTests.ts", "test/fixtures/RestoreEffectIt.ts"],
    pool: "forks",
    // A worker process runs file after file with one module graph: Effect, the engine and the tree-sitter grammar
    // load once per worker instead of once per file (test:unit: 288 s of CPU before, 82 s after; docs/testing.md).
    // What a file leaves in the process is then seen by the next one: RestoreEffectIt puts back the `it` methods
    // that @effect/vitest's `layer` overwrites, and tests read Effect's process-wide metrics as differences.
    poolOptions: { forks: { isolate: false } },
    // One worker more than there are cores: many files mostly wait (on processes they started, on servers, on
    // TestClock's timer turns), so with one worker per core the 2-core machine was a third idle (whole suite on a
    // quiet machine: 2 workers 166-176 s, 3 workers 150 s, 4 workers 139 s with more contention for the tests that
    // time real processes). The pool keeps all of them from start to end: vitest otherwise ends workers above its
    // minimum while files still run, and that ended the run with tinypool's "Terminating worker thread".
    maxWorkers: Os.availableParallelism() + 1,
    minWorkers: Os.availableParallelism() + 1
  }
}))
