import * as Fs from "node:fs"
import * as Path from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as FsResultStore from "../../../src/layers/FsResultStore.js"
import * as ProcessBackgroundShells from "../../../src/layers/ProcessBackgroundShells.js"
import * as TreeSitterShellAnalyzer from "../../../src/layers/TreeSitterShellAnalyzer.js"
import * as Bash from "../../../src/layers/tools/Bash.js"
import * as Session from "../../../src/services/Session.js"
import { makeContext, tempDir } from "../../fixtures/ProcessTestKit.js"

const stateDir = tempDir("armature-bash-memory-")
const GiB = 1024 * 1024 * 1024
const MiB = 1024 * 1024

const Services = Layer.mergeAll(
  TreeSitterShellAnalyzer.layer,
  FsResultStore.layerDir(stateDir),
  ProcessBackgroundShells.layerDir(stateDir),
  Session.layer({ cwd: stateDir, stateDir })
).pipe(Layer.provideMerge(NodeFileSystem.layer))

layer(Services, { excludeTestServices: true })("Bash memory", (it) => {
  it.effect(
    "1 GiB of output streams to the spill file with RSS growing by less than 100 MiB",
    () =>
      Effect.gen(function* () {
        const bash = yield* Bash.make
        const { ctx } = yield* makeContext("toolu_memory", stateDir)
        const line = `${"a".repeat(63)}\n`
        const baseline = process.memoryUsage().rss
        let peak = baseline
        const sampler = setInterval(() => {
          peak = Math.max(peak, process.memoryUsage().rss)
        }, 50)
        const out = yield* bash
          .call({ command: `yes '${line.slice(0, -1)}' | head -c ${GiB}` }, ctx)
          .pipe(Effect.ensuring(Effect.sync(() => clearInterval(sampler))))
        peak = Math.max(peak, process.memoryUsage().rss)
        const path = Path.join(stateDir, "tool-results", "toolu_memory.txt")
        try {
          expect(Fs.statSync(path).size).toBe(GiB)
          expect(typeof out).toBe("string")
          const text = typeof out === "string" ? out : out.output
          expect(text.startsWith(line.repeat(312))).toBe(true)
          expect(text).toContain(
            `characters omitted: the output was ${GiB} characters (1.0GB), more than the 30000-character limit. Full output saved to: ${path}`
          )
          expect(peak - baseline).toBeLessThan(100 * MiB)
        } finally {
          Fs.rmSync(path, { force: true })
        }
      }),
    120_000
  )
})
