/**
 * The cost of the OS sandbox per Bash call: the wall time of one `touch` through the whole engine (permission
 * decision, executor, process group), sandboxed and not, median over BENCH_CALLS calls (default 20) each, in the same
 * run and the same project. The totals (engine build plus every call) show the sandbox's one-time start (dependency
 * check, proxies, one test command). Prints one JSON object.
 *
 * Run: `node --import tsx bench/Sandbox.bench.ts`.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { Effect } from "effect"
import * as Armature from "../src/Armature.js"
import { ToolExecutor } from "../src/services/ToolExecutor.js"

const calls = Math.max(1, Number(process.env.BENCH_CALLS ?? 20))

const median = (xs: ReadonlyArray<number>): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

const measure = (sandbox: boolean, project: string) =>
  Effect.gen(function* () {
    const executor = yield* ToolExecutor
    const times: Array<number> = []
    for (let i = 0; i < calls; i++) {
      const t0 = performance.now()
      const [result] = yield* executor.runBatchCollect([
        { type: "tool_use", id: `toolu_${sandbox ? "s" : "u"}${i}`, name: "Bash", input: { command: `touch f${i}` } }
      ])
      times.push(performance.now() - t0)
      if (result.is_error === true) return yield* Effect.dieMessage(`call failed: ${String(result.content)}`)
    }
    return { medianMs: median(times), minMs: Math.min(...times), maxMs: Math.max(...times) }
  }).pipe(
    Effect.provide(
      Armature.layerNode({ cwd: project, settingSources: [], allowedTools: ["Bash"], sandbox, resultStore: "memory" })
    )
  )

const program = Effect.gen(function* () {
  const project = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-bench-sandbox-")))
  const t0 = performance.now()
  const plain = yield* measure(false, project)
  const plainTotal = performance.now() - t0
  const t1 = performance.now()
  const sandboxed = yield* measure(true, project)
  const sandboxedTotal = performance.now() - t1
  Fs.rmSync(project, { recursive: true, force: true })
  return {
    bench: "sandbox",
    calls,
    unsandboxed_median_ms: Math.round(plain.medianMs * 10) / 10,
    sandboxed_median_ms: Math.round(sandboxed.medianMs * 10) / 10,
    ratio: Math.round((sandboxed.medianMs / plain.medianMs) * 100) / 100,
    added_per_call_ms: Math.round((sandboxed.medianMs - plain.medianMs) * 10) / 10,
    // Engine build plus every call: the difference is mostly the sandbox's one-time start.
    unsandboxed_total_ms: Math.round(plainTotal),
    sandboxed_total_ms: Math.round(sandboxedTotal),
    sandboxed_min_ms: Math.round(sandboxed.minMs),
    sandboxed_max_ms: Math.round(sandboxed.maxMs),
    load_average: Os.loadavg()[0]
  }
})

Effect.runPromise(program).then(
  (result) => console.log(JSON.stringify(result)),
  (error) => {
    console.error(error)
    process.exitCode = 1
  }
)
