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
    setupFiles: ["test/fixtures/YieldBetweenTests.ts"],
    pool: "forks",
    // One worker per core: vitest's default leaves a core to its main process, which here mostly waits (on a
    // 2-core machine that was one worker for the whole suite).
    maxWorkers: Os.availableParallelism(),
    // Every file runs in a fresh process. (vitest takes a pool's isolation from these root options only, so a
    // project's `isolate: false` never shared a module graph between files; sharing one, tried on worker threads,
    // breaks files that read process-wide state: Effect's global metric registry, the executor's TestClock.)
    projects: [
      { extends: true, test: { name: "unit", include: ["test/**/*.test.ts"], exclude: slow } },
      { extends: true, test: { name: "slow", include: slow } }
    ]
  }
})
