/**
 * Failover of `armature serve`: two runners on a fresh PostgreSQL database, one session whose Bash call sleeps
 * (`sleep 600`) on one of them; that runner is stopped, with SIGTERM or SIGKILL, and the clock runs from the signal:
 * - `exit_ms` (SIGTERM): until the stopped runner's process has exited;
 * - `handover_ms`: until the other runner, having taken the session over, asks the model for the next turn (the
 *   call's crash result is in that request): the time a session waits.
 * Median of BENCH_FAILOVER_RUNS rounds (default 5) per signal. Runners are the built CLI (`node scripts/build.mjs
 * cli` first). Prints one JSON object.
 *
 * Run: `node --import tsx bench/ServeFailover.bench.ts` (env: BENCH_FAILOVER_RUNS; BENCH_FAILOVER_SIGNALS, default
 * SIGTERM,SIGKILL).
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { Effect } from "effect"
import * as MessagesServer from "../test/fixtures/MessagesServer.js"
import * as Postgres from "../test/fixtures/Postgres.js"
import { getJson, post, startRunner, until } from "../test/fixtures/ServeRunner.js"

const rounds = Math.max(1, Number(process.env.BENCH_FAILOVER_RUNS ?? 5))
/** The signals measured (default both). */
const signals = (process.env.BENCH_FAILOVER_SIGNALS ?? "SIGTERM,SIGKILL").split(",")

const median = (xs: ReadonlyArray<number>): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** One round: a session in a long call on one of two runners, which is stopped by `signal`. */
const once = (signal: "SIGTERM" | "SIGKILL") =>
  Effect.gen(function* () {
    const database = yield* Postgres.freshDatabase("armature_bench_failover")
    const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-bench-failover-")))
    const server = yield* MessagesServer.make([
      MessagesServer.message([
        { type: "tool_use", id: "toolu_long", name: "Bash", input: { command: "touch started && sleep 600" } }
      ]),
      MessagesServer.message([{ type: "text", text: "Done." }])
    ])
    const env = { ANTHROPIC_BASE_URL: server.url }
    const runners = [yield* startRunner(database, dir, env), yield* startRunner(database, dir, env)]
    yield* until("both runners to hold their shards", () =>
      Effect.runPromise(Postgres.advisoryLocks(database)).then((held) => held.join() === "8,8")
    )
    const started = yield* post(`${runners[0].url}/sessions`, { prompt: "Go" })
    const id = String(started.body.session_id)
    yield* until("the call to run", () => Fs.existsSync(Path.join(dir, "started")))
    const state = yield* getJson(`${runners[0].url}/sessions/${id}`)
    const victim = runners.find((r) => r.child.pid === (state.body.runner as { pid: number }).pid)
    const survivor = runners.find((r) => r !== victim)
    if (victim === undefined || survivor === undefined) return yield* Effect.dieMessage("no runner runs the session")
    const at = Date.now()
    victim.child.kill(signal)
    const ended = yield* Effect.promise(() => victim.ended.then(() => Date.now() - at))
    yield* until("the session to be asked on", () => server.requests.length >= 2)
    const handover = server.requests[1].at - at
    yield* until("the session to end", () =>
      Effect.runPromise(getJson(`${survivor.url}/sessions/${id}`)).then((s) => s.body.state === "success")
    )
    Fs.rmSync(dir, { recursive: true, force: true })
    return { exit_ms: ended, handover_ms: handover }
  }).pipe(Effect.scoped)

const measure = (signal: "SIGTERM" | "SIGKILL") =>
  Effect.gen(function* () {
    const all: Array<{ exit_ms: number; handover_ms: number }> = []
    for (let i = 0; i < rounds; i++) all.push(yield* once(signal))
    return {
      exit_ms_median: median(all.map((r) => r.exit_ms)),
      handover_ms_median: median(all.map((r) => r.handover_ms)),
      handover_ms_max: Math.max(...all.map((r) => r.handover_ms)),
      rounds: all
    }
  })

const program = Effect.gen(function* () {
  if (!Fs.existsSync(Path.resolve(import.meta.dirname, "../dist/cli/main.js"))) {
    return yield* Effect.dieMessage(
      "bench/ServeFailover.bench.ts runs the built CLI: run `node scripts/build.mjs cli` first"
    )
  }
  const loadBefore = Os.loadavg()[0]
  const sigterm = signals.includes("SIGTERM") ? yield* measure("SIGTERM") : undefined
  const sigkill = signals.includes("SIGKILL") ? yield* measure("SIGKILL") : undefined
  return {
    bench: "ServeFailover",
    rounds,
    load: [loadBefore, Os.loadavg()[0]],
    cores: Os.availableParallelism(),
    sigterm,
    sigkill
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
