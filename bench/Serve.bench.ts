/**
 * Sessions through `armature serve`: bursts of N sessions (each one model turn that answers at once, from the
 * scripted Messages server) started over the HTTP API, all at once, alternately through each runner, each followed
 * by its event stream to the end. Per number of runners (1, 2, 3; a fresh database each, on
 * ARMATURE_TEST_DATABASE_URL): sessions finished per minute (median over the bursts), the time from a session's
 * request to its first event line (p50 and p99 over all sessions), and each runner's resident memory after the
 * bursts and its ratio last/first. Runners are the built CLI (`node scripts/build.mjs cli` first). Prints one JSON object.
 *
 * Run: `node --import tsx bench/Serve.bench.ts` (env: BENCH_SESSIONS, default 60; BENCH_BURSTS, default 5;
 * BENCH_RUNNERS, default 1,2,3).
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { Effect, Schedule } from "effect"
import * as MessagesServer from "../test/fixtures/MessagesServer.js"
import * as Postgres from "../test/fixtures/Postgres.js"

const sessions = Math.max(2, Number(process.env.BENCH_SESSIONS ?? 60))
const bursts = Math.max(1, Number(process.env.BENCH_BURSTS ?? 5))
const runnerCounts = (process.env.BENCH_RUNNERS ?? "1,2,3").split(",").map(Number)
const bin = Path.resolve(import.meta.dirname, "../bin/armature.mjs")
/** The bearer token the runners are given (ARMATURE_SERVE_TOKEN) and every request sends. */
const token = "serve-bench-token-0123456789"
const authorization = { authorization: `Bearer ${token}` }

const freePort = () =>
  Effect.async<number>((resume) => {
    const server = Net.createServer()
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as Net.AddressInfo).port
      server.close(() => resume(Effect.succeed(port)))
    })
  })

const until = (what: string, condition: () => Promise<boolean>) =>
  Effect.promise(condition).pipe(
    Effect.flatMap((ok) => (ok ? Effect.void : Effect.fail(what))),
    Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo("300 seconds"))),
    Effect.orDie
  )

/** A runner of `database`, stopped (SIGTERM) when the scope closes; its API's URL. */
const runner = (database: string, dir: string, modelUrl: string) =>
  Effect.gen(function* () {
    const runnerPort = yield* freePort()
    const child = ChildProcess.spawn(
      process.execPath,
      [
        bin,
        "serve",
        "--database",
        database,
        "--port",
        "0",
        "--runner-port",
        String(runnerPort),
        "--cwd",
        dir,
        "--max-sessions",
        "1000"
      ],
      {
        cwd: dir,
        env: {
          ...process.env,
          ANTHROPIC_API_KEY: "bench",
          ANTHROPIC_BASE_URL: modelUrl,
          HOME: dir,
          ARMATURE_SERVE_TOKEN: token
        },
        stdio: ["ignore", "ignore", "pipe"]
      }
    )
    let url = ""
    let output = ""
    child.stderr.on("data", (d: Buffer) => {
      output += d.toString("utf8")
      url = /listening on (http:\/\/[\d.]+:\d+)/.exec(output)?.[1] ?? url
    })
    yield* Effect.addFinalizer(() =>
      Effect.async<void>((resume) => {
        if (child.exitCode !== null) return resume(Effect.void)
        child.on("close", () => resume(Effect.void))
        child.kill("SIGTERM")
      })
    )
    yield* until("a runner to listen", async () => {
      if (child.exitCode !== null) throw new Error(`a runner ended: ${output}`)
      return url !== ""
    })
    return { url, pid: child.pid ?? 0 }
  })

const post = async (url: string, body: unknown): Promise<string> => {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...authorization },
    body: JSON.stringify(body)
  })
  const json = (await response.json()) as { session_id: string }
  if (response.status !== 201) throw new Error(`start: ${response.status} ${JSON.stringify(json)}`)
  return json.session_id
}

const stateOf = async (url: string, id: string): Promise<string> => {
  const response = await fetch(`${url}/sessions/${id}`, { headers: authorization })
  return ((await response.json()) as { state: string }).state
}

/** The resident memory of a process, in MB (from /proc). */
const rssMb = (pid: number): number => {
  const status = Fs.readFileSync(`/proc/${pid}/status`, "utf8")
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
  return Math.round(kb / 1024)
}

/**
 * One session through runner `url`: ms from the request to its first event line, and to the end of its event
 * stream (the session has ended and every line was read).
 */
const oneSession = async (url: string): Promise<{ first_ms: number; end_ms: number }> => {
  const began = Date.now()
  const id = await post(`${url}/sessions`, { prompt: "Go" })
  const response = await fetch(`${url}/sessions/${id}/events`, { headers: authorization })
  let first = 0
  for await (const _chunk of response.body ?? []) if (first === 0) first = Date.now() - began
  const state = await stateOf(url, id)
  if (state !== "success") throw new Error(`a session ended with ${state}`)
  return { first_ms: first, end_ms: Date.now() - began }
}

const percentile = (xs: ReadonlyArray<number>, p: number): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

const median = (xs: ReadonlyArray<number>): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/**
 * `count` runners on a fresh database, `bursts` bursts of `sessions` sessions each (all started at once,
 * alternately through each runner): sessions/min per burst, time to first event over all sessions, and each
 * runner's RSS after the last burst.
 */
const measure = (count: number) =>
  Effect.gen(function* () {
    const database = yield* Postgres.freshDatabase("armature_bench_serve")
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-bench-serve-"))
    const server = yield* MessagesServer.make(
      Array.from({ length: sessions * bursts }, () => MessagesServer.message([{ type: "text", text: "Done." }]))
    )
    const started: Array<{ url: string; pid: number }> = []
    for (let i = 0; i < count; i++) started.push(yield* runner(database, dir, server.url))
    // every runner holds shards before the clock starts (a new runner takes shards over for a few seconds)
    yield* until("every runner to hold shards", () =>
      Effect.runPromise(Postgres.advisoryLocks(database)).then(
        (held) => held.length === count && held.reduce((a, b) => a + b, 0) === 16
      )
    )
    const perMinute: Array<number> = []
    const firsts: Array<number> = []
    const rssByBurst: Array<ReadonlyArray<number>> = []
    for (let b = 0; b < bursts; b++) {
      const began = Date.now()
      const done = yield* Effect.promise(() =>
        Promise.all(Array.from({ length: sessions }, (_, i) => oneSession(started[i % count].url)))
      )
      perMinute.push(Number(((sessions * 60_000) / (Date.now() - began)).toFixed(1)))
      firsts.push(...done.map((d) => d.first_ms))
      rssByBurst.push(started.map((r) => rssMb(r.pid)))
    }
    Fs.rmSync(dir, { recursive: true, force: true })
    return {
      runners: count,
      sessions_per_min: median(perMinute),
      sessions_per_min_bursts: perMinute,
      first_event_ms_p50: percentile(firsts, 50),
      first_event_ms_p99: percentile(firsts, 99),
      rss_mb_after_each_burst: rssByBurst,
      // per runner: its RSS after the last burst over that after the first (1: flat)
      rss_ratio_last_first: started.map((_, i) => Number((rssByBurst[bursts - 1][i] / rssByBurst[0][i]).toFixed(2)))
    }
  }).pipe(Effect.scoped)

const program = Effect.gen(function* () {
  if (!Fs.existsSync(Path.resolve(import.meta.dirname, "../dist/cli/main.js"))) {
    return yield* Effect.dieMessage("bench/Serve.bench.ts runs the built CLI: run `node scripts/build.mjs cli` first")
  }
  const loadBefore = Os.loadavg()[0]
  const results = []
  for (const count of runnerCounts) results.push(yield* measure(count))
  return {
    bench: "Serve",
    sessions,
    bursts,
    load: [loadBefore, Os.loadavg()[0]],
    cores: Os.availableParallelism(),
    results
  }
})

Effect.runPromise(program).then(
  (report) => {
    process.stdout.write(`${JSON.stringify(report)}\n`)
  },
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`)
    process.exitCode = 1
  }
)
