/**
 * Sessions per second through `armature serve`: N sessions (each one model turn that answers at once, from the
 * scripted Messages server) started over the HTTP API, all at once, alternately through each runner; the time until
 * every start was answered (started/s) and until every session ended (finished/s). Measured with one runner, then
 * with two runners on one PostgreSQL database (a fresh database each, on ARMATURE_TEST_DATABASE_URL), in the same
 * run, so the ratio of the two is what adding a runner changes. Runners are the built CLI (`node scripts/build.mjs
 * cli` first). Prints one JSON object.
 *
 * Run: `node --import tsx bench/Serve.bench.ts` (env: BENCH_SESSIONS, default 40; BENCH_RUNS, default 2).
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { Effect, Schedule } from "effect"
import * as MessagesServer from "../test/fixtures/MessagesServer.js"
import * as Postgres from "../test/fixtures/Postgres.js"

const sessions = Math.max(2, Number(process.env.BENCH_SESSIONS ?? 40))
const runs = Math.max(1, Number(process.env.BENCH_RUNS ?? 2))
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
      [bin, "serve", "--database", database, "--port", "0", "--runner-port", String(runnerPort), "--cwd", dir],
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
    return url
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

/** Starts `sessions` sessions over `count` runners; ms until all were started, and until all ended. */
const once = (count: number) =>
  Effect.gen(function* () {
    const database = yield* Postgres.freshDatabase("armature_bench_serve")
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-bench-serve-"))
    const server = yield* MessagesServer.make(
      Array.from({ length: sessions }, () => MessagesServer.message([{ type: "text", text: "Done." }]))
    )
    const urls: Array<string> = []
    for (let i = 0; i < count; i++) urls.push(yield* runner(database, dir, server.url))
    // every runner holds its shards before the clock starts (a new runner takes shards over for a few seconds)
    yield* until("every runner to hold shards", () =>
      Effect.runPromise(Postgres.advisoryLocks(database)).then(
        (held) => held.length === count && held.every((n) => n === 16 / count)
      )
    )
    const began = Date.now()
    const ids = yield* Effect.promise(() =>
      Promise.all(Array.from({ length: sessions }, (_, i) => post(`${urls[i % count]}/sessions`, { prompt: "Go" })))
    )
    const started = Date.now() - began
    yield* until("every session to end", async () => {
      const states = await Promise.all(ids.map((id, i) => stateOf(urls[i % count], id)))
      const failed = states.find((s) => s !== "running" && s !== "success")
      if (failed !== undefined) throw new Error(`a session ended with ${failed}`)
      return states.every((s) => s === "success")
    })
    const finished = Date.now() - began
    Fs.rmSync(dir, { recursive: true, force: true })
    return { started_ms: started, finished_ms: finished }
  }).pipe(Effect.scoped)

const median = (xs: ReadonlyArray<number>): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

const measure = (count: number) =>
  Effect.gen(function* () {
    const all: Array<{ started_ms: number; finished_ms: number }> = []
    for (let i = 0; i < runs; i++) all.push(yield* once(count))
    const started = median(all.map((r) => r.started_ms))
    const finished = median(all.map((r) => r.finished_ms))
    return {
      started_per_s: Number(((sessions * 1000) / started).toFixed(2)),
      finished_per_s: Number(((sessions * 1000) / finished).toFixed(2)),
      runs: all
    }
  })

const program = Effect.gen(function* () {
  if (!Fs.existsSync(Path.resolve(import.meta.dirname, "../dist/cli/main.js"))) {
    return yield* Effect.dieMessage("bench/Serve.bench.ts runs the built CLI: run `node scripts/build.mjs cli` first")
  }
  const loadBefore = Os.loadavg()[0]
  const one = yield* measure(1)
  const two = yield* measure(2)
  return {
    bench: "Serve",
    sessions,
    runs,
    load: [loadBefore, Os.loadavg()[0]],
    cores: Os.availableParallelism(),
    one_runner: one,
    two_runners: two,
    finished_ratio_two_to_one: Number((two.finished_per_s / one.finished_per_s).toFixed(2))
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
