/**
 * Start-up of the `armature` binary against Node's own (`node -e 0`), measured in the same run with the runs
 * interleaved so both see the same machine load. One JSON line per command: the median wall time of each, their
 * difference and the goal for that difference; then the resident memory of an idle `armature exec` (waiting on
 * stdin). On Linux each line also has the CPU time (user + system) of the commands, from this process's
 * waited-for-children times in /proc/self/stat: on a machine busy with other work, wall times stretch with the
 * load while CPU times stay close to what an idle machine would show.
 * Run: node --import tsx bench/Startup.bench.ts [runs]
 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

// ARMATURE_BIN measures another build of the binary (e.g. an older checkout) with the same method.
const bin = process.env.ARMATURE_BIN ?? Path.resolve(import.meta.dirname, "../bin/armature.mjs")
const runs = Number(process.argv[2] ?? 7)
const home = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-startup-"))
const env = { ...process.env, HOME: home, ARMATURE_STATE_DIR: Path.join(home, "state") }
Fs.writeFileSync(Path.join(home, "a.txt"), "a\n")
const batch = Path.join(home, "batch.json")
Fs.writeFileSync(batch, JSON.stringify([{ type: "tool_use", id: "g", name: "Glob", input: { pattern: "*.txt" } }]))

/** CPU milliseconds of the children this process has waited for (Linux; 0 elsewhere). */
const childrenCpuMs = (): number => {
  if (process.platform !== "linux") return 0
  // after the command name in parentheses: fields 14 and 15 of stat(5) are cutime and cstime, in clock ticks
  const fields = Fs.readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ")
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100
}

/**
 * Milliseconds from spawn until the process exits (or until `until` sees its stdout say so; it is then killed).
 * Resolves once the process has exited and been reaped either way, so its CPU time is counted.
 */
const timed = (args: ReadonlyArray<string>, until?: (stdout: string) => boolean, input?: string) =>
  new Promise<number>((resolve, reject) => {
    const start = performance.now()
    const child = spawn(process.execPath, args, { cwd: home, env, stdio: ["pipe", "pipe", "ignore"] })
    let out = ""
    let answered: number | undefined
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString()
      if (answered === undefined && until?.(out)) {
        answered = performance.now() - start
        child.kill("SIGKILL")
      }
    })
    child.on("error", reject)
    child.on("exit", (code) => {
      if (until !== undefined) {
        answered !== undefined ? resolve(answered) : reject(new Error(`${args.join(" ")} exited ${code} unanswered`))
      } else {
        code === 0 ? resolve(performance.now() - start) : reject(new Error(`${args.join(" ")} exited ${code}`))
      }
    })
    if (input !== undefined) child.stdin.end(input)
  })

const initialize = `${JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "0" } }
})}\n`

const commands: ReadonlyArray<{
  readonly name: string
  readonly goalMs: number
  readonly run: () => Promise<number>
}> = [
  { name: "armature --version", goalMs: 350, run: () => timed([bin, "--version"]) },
  {
    name: "armature permissions check",
    goalMs: 800,
    run: () =>
      timed([bin, "permissions", "check", "--tool", "Bash", "--input", '{"command":"git status"}', "--cwd", home])
  },
  { name: "armature exec (one Glob)", goalMs: 1000, run: () => timed([bin, "exec", batch, "--output", "json"]) },
  {
    name: "armature mcp serve (initialize answered)",
    goalMs: 1000,
    run: () => timed([bin, "mcp", "serve"], (out) => out.includes('"id":1'), initialize)
  }
]

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

const idleRss = () =>
  new Promise<number>((resolve, reject) => {
    const child = spawn(process.execPath, [bin, "exec", "-", "--output", "stream-json"], {
      cwd: home,
      env,
      stdio: ["pipe", "ignore", "ignore"]
    })
    child.on("error", reject)
    // Give it time to start and settle while it waits for input, then read its resident set.
    setTimeout(() => {
      const status = Fs.readFileSync(`/proc/${child.pid}/status`, "utf8")
      const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN)
      child.kill("SIGKILL")
      resolve(kb / 1024)
    }, 3000)
  })

/** Runs `run` and returns its wall time and the CPU time its process used (once it has been waited for). */
const withCpu = async (run: () => Promise<number>) => {
  const before = childrenCpuMs()
  const ms = await run()
  return { ms, cpu: childrenCpuMs() - before }
}

const main = async () => {
  const node: Array<{ ms: number; cpu: number }> = []
  const ours = commands.map(() => [] as Array<{ ms: number; cpu: number }>)
  for (let i = 0; i < runs; i++) {
    node.push(await withCpu(() => timed(["-e", "0"])))
    for (const [k, command] of commands.entries()) ours[k].push(await withCpu(command.run))
  }
  const base = median(node.map((r) => r.ms))
  const baseCpu = median(node.map((r) => r.cpu))
  console.log(JSON.stringify({ name: "node -e 0", ms: Math.round(base), cpu_ms: Math.round(baseCpu), runs }))
  for (const [k, command] of commands.entries()) {
    const ms = median(ours[k].map((r) => r.ms))
    const cpu = median(ours[k].map((r) => r.cpu))
    console.log(
      JSON.stringify({
        name: command.name,
        ms: Math.round(ms),
        node_ms: Math.round(base),
        diff_ms: Math.round(ms - base),
        goal_diff_ms: command.goalMs,
        ok: ms - base <= command.goalMs,
        cpu_ms: Math.round(cpu),
        cpu_diff_ms: Math.round(cpu - baseCpu),
        load: Math.round(Os.loadavg()[0] * 10) / 10
      })
    )
  }
  if (process.platform === "linux") {
    const rss = await idleRss()
    console.log(JSON.stringify({ name: "idle armature exec RSS", mb: Math.round(rss), goal_mb: 120, ok: rss <= 120 }))
  }
  Fs.rmSync(home, { recursive: true, force: true })
}

main()
