import { defineConfig } from "vitest/config"

// Two projects: `unit` (pure and in-process tests, plus small real processes) and `slow` (the CLI as a process,
// real servers that restart and time out, the 1 GiB memory test, the per-command read-only properties).
// `npm test` runs both; `npm run test:unit` only the first.
const slow = [
  "test/e2e/**/*.test.ts",
  "test/layers/tools/BashMemory.test.ts",
  "test/layers/mcp/McpClient*.test.ts",
  "test/layers/files/FileAccess.test.ts",
  "test/layers/process/Descendants.test.ts",
  "test/domain/shell/ReadOnlyProperties.test.ts"
]

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    projects: [
      { extends: true, test: { name: "unit", include: ["test/**/*.test.ts"], exclude: slow } },
      { extends: true, test: { name: "slow", include: slow } }
    ]
  }
})
