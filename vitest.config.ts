import { defineConfig } from "vitest/config"

// Two projects: `unit` (pure and in-process tests, plus small real processes) and `e2e` (the CLI as a process,
// real servers, the 1 GiB memory test). `npm test` runs both; `npm run test:unit` only the first.
const slow = ["test/e2e/**/*.test.ts", "test/layers/tools/BashMemory.test.ts"]

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    projects: [
      { extends: true, test: { name: "unit", include: ["test/**/*.test.ts"], exclude: slow } },
      { extends: true, test: { name: "e2e", include: slow } }
    ]
  }
})
