/**
 * The cost of the Bash tool over a bare `bash -c` of the same command, in the same process and run: median of
 * `runs` calls each (after a warm-up), printed as JSON lines. `bash_overhead_ms` is the difference of the medians.
 * Run: node --import tsx bench/Bash.bench.ts [runs]
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import * as Tool from "../src/domain/Tool.js"
import * as ProcessBackgroundShells from "../src/layers/process/ProcessBackgroundShells.js"
import * as ProcessGroup from "../src/layers/process/ProcessGroup.js"
import * as FsResultStore from "../src/layers/results/FsResultStore.js"
import * as SessionLive from "../src/layers/session/SessionLive.js"
import * as TreeSitterShellAnalyzer from "../src/layers/shell/TreeSitterShellAnalyzer.js"
import * as Bash from "../src/layers/tools/Bash.js"

const runs = Number(process.argv[2] ?? 10)
const commands = ["true", "echo hello; ls / > /dev/null"]
const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-bench-bash-")))

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

const round = (ms: number) => Math.round(ms * 100) / 100

const bareBash = (command: string) =>
  new Promise<void>((resolve, reject) => {
    const child = ChildProcess.spawn("/bin/bash", ["-c", command], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] })
    child.stdout.resume()
    child.stderr.resume()
    child.on("close", () => resolve())
    child.on("error", reject)
  })

const Services = Layer.mergeAll(
  TreeSitterShellAnalyzer.layer,
  FsResultStore.layerDir(dir),
  ProcessBackgroundShells.layerDir(dir),
  SessionLive.layer({ cwd: dir, stateDir: dir })
).pipe(Layer.provideMerge(Layer.merge(NodeFileSystem.layer, ProcessGroup.layer)))

const program = Effect.gen(function* () {
  const bash = yield* Bash.make
  const state = yield* Tool.makeSessionState
  let n = 0
  const ctx = (): Tool.ToolContext => ({
    toolUseId: `toolu_bench_${++n}`,
    cwd: dir,
    permissionMode: "default",
    progress: () => Effect.void,
    interrupted: Effect.never,
    state
  })
  const timeTool = (command: string) =>
    Effect.gen(function* () {
      const start = performance.now()
      yield* bash.call({ command }, ctx())
      return performance.now() - start
    })
  const timeBare = (command: string) =>
    Effect.promise(async () => {
      const start = performance.now()
      await bareBash(command)
      return performance.now() - start
    })
  for (const command of commands) {
    // Warm-up: the first calls pay for JIT compilation and first-use module code.
    for (let i = 0; i < 3; i++) {
      yield* timeTool(command)
      yield* timeBare(command)
    }
    const tool: Array<number> = []
    const bare: Array<number> = []
    // Interleaved, so that the machine's load affects both alike.
    for (let i = 0; i < runs; i++) {
      tool.push(yield* timeTool(command))
      bare.push(yield* timeBare(command))
    }
    console.log(
      JSON.stringify({
        name: "bash_overhead_ms",
        command,
        runs,
        tool_median_ms: round(median(tool)),
        bash_c_median_ms: round(median(bare)),
        bash_overhead_ms: round(median(tool) - median(bare)),
        // The fastest of each is less disturbed by the machine's load than the median.
        tool_min_ms: round(Math.min(...tool)),
        bash_c_min_ms: round(Math.min(...bare)),
        processes: Fs.readdirSync("/proc").filter((e) => /^\d+$/.test(e)).length
      })
    )
  }
})

Effect.runPromise(program.pipe(Effect.provide(Services))).finally(() =>
  Fs.rmSync(dir, { recursive: true, force: true })
)
