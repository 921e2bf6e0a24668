import { defineConfig } from "vitest/config"

// Two projects: `unit` (pure and in-process tests, plus small real processes) and `slow` (the CLI as a process,
// real servers that restart and time out, the 1 GiB memory test, the per-command read-only properties, and the
// property files with thousands of cases: admission, executor against its ideal, read-only compositions, Read
// deny over random trees).
// `npm test` runs both; `npm run test:unit` only the first.
const slow = [
  "test/e2e/**/*.test.ts",
  "test/layers/tools/BashMemory.test.ts",
  "test/layers/mcp/McpClient*.test.ts",
  "test/layers/files/FileAccess.test.ts",
  "test/layers/process/Descendants.test.ts",
  "test/domain/shell/ReadOnlyProperties.test.ts",
  "test/domain/Admission.test.ts",
  "test/layers/executor/StreamingExecutorProperties.test.ts",
  "test/layers/shell/ReadOnlyAnalysis.test.ts",
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
    projects: [
      // One module graph per worker for the unit files (no per-file re-import of Effect and the engine, which was
      // most of their time); their tests share no global state. The slow files keep a fresh process each.
      { extends: true, test: { name: "unit", include: ["test/**/*.test.ts"], exclude: slow, isolate: false } },
      { extends: true, test: { name: "slow", include: slow } }
    ]
  }
})
