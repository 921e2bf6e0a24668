import * as Os from "node:os"
import { defineConfig } from "vitest/config"

// Two projects: `unit` (pure and in-process tests, plus small real processes) and `slow` (the CLI as a process,
// real servers that restart and time out, the 1 GiB memory test, and the property files with thousands of cases:
// admission, executor against its ideal, Read deny over random trees).
// `npm test` runs both; `npm run test:unit` only the first.
const slow = [
  "test/e2e/**/*.test.ts",
  "test/layers/tools/BashMemory.test.ts",
  "test/layers/mcp/McpClient*.test.ts",
  "test/layers/files/FileAccess.test.ts",
  "test/layers/process/Descendants.test.ts",
  "test/domain/Admission.test.ts",
  "test/layers/executor/StreamingExecutorProperties.test.ts",
  "test/layers/tools/SearchReadDeny.test.ts",
  "test/layers/sandbox/SandboxBash.test.ts",
  "test/layers/sandbox/SandboxMcp.test.ts"
]

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    setupFiles: ["test/fixtures/YieldBetweenTests.ts", "test/fixtures/RestoreEffectIt.ts"],
    pool: "forks",
    // A worker process runs file after file with one module graph: Effect, the engine and the tree-sitter grammar
    // load once per worker instead of once per file (test:unit: 288 s of CPU before, 82 s after; docs/testing.md).
    // vitest reads the pool's isolation from these root options only; a project's own `isolate` only decides whether
    // the worker resets its modules between files. What a file leaves in the process is then seen by the next one:
    // RestoreEffectIt puts back the `it` methods that @effect/vitest's `layer` overwrites, and tests read Effect's
    // process-wide metrics as differences.
    poolOptions: { forks: { isolate: false } },
    // One worker per core: vitest's default leaves a core to its main process, which here mostly waits (on a
    // 2-core machine that was one worker for the whole suite).
    maxWorkers: Os.availableParallelism(),
    projects: [
      { extends: true, test: { name: "unit", include: ["test/**/*.test.ts"], exclude: slow } },
      { extends: true, test: { name: "slow", include: slow } }
    ]
  }
})
