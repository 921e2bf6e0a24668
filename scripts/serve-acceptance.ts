/**
 * The acceptance run of `armature serve` scale-out (issue 36), to run by hand (about 2–4 minutes; root, `ip netns`,
 * socat, PostgreSQL on ARMATURE_TEST_DATABASE_URL, the built CLI: `node scripts/build.mjs cli` first):
 * 3 runners on a fresh database, two in network namespaces of their own (test/fixtures/NetNamespaces.ts), 45
 * sessions of 3–6 Bash calls each from the scripted Messages server, ~10 busy processes beside them; once both
 * runners in namespaces run calls, one's link is cut (its process runs on) and the other is SIGKILLed. Each call
 * appends its name to calls.txt before it sleeps, so the file counts the calls that ran. Prints one JSON object:
 * sessions completed, calls run twice, calls lost (asked for and never run), sessions whose final event stream has a
 * tool_use without exactly one tool_result, and the failover times: from the kill (or the cut) to the next model
 * request of each session that was on that runner.
 *
 * Run: `node --import tsx scripts/serve-acceptance.ts` (env: ACCEPTANCE_LOAD, default 10 busy processes).
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import * as MessagesServer from "../test/fixtures/MessagesServer.js"
import * as NetNamespaces from "../test/fixtures/NetNamespaces.js"
import * as Postgres from "../test/fixtures/Postgres.js"
import { blockIds, eventLines, getJson, getText, post, startRunner, until } from "../test/fixtures/ServeRunner.js"

const sessionCount = 45
const load = Number(process.env.ACCEPTANCE_LOAD ?? 10)
const names = Array.from({ length: sessionCount }, (_, i) => `s${i}`)
/** Session i makes 3–6 calls. */
const callsOf = (i: number) => 3 + (i % 4)

const median = (xs: ReadonlyArray<number>): number | null =>
  xs.length === 0 ? null : [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** `n` busy processes, killed when the scope closes. */
const busyLoad = (n: number) =>
  Effect.acquireRelease(
    Effect.sync(() =>
      Array.from({ length: n }, () => ChildProcess.spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" }))
    ),
    (children) =>
      Effect.sync(() => {
        for (const child of children) child.kill("SIGKILL")
      })
  )

const program = Effect.gen(function* () {
  const net = yield* NetNamespaces.make(2)
  const database = yield* Postgres.freshDatabase("armature_acceptance")
  const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-acceptance-")))
  Fs.chmodSync(dir, 0o755)
  const lanes: Record<string, ReadonlyArray<MessagesServer.Reply>> = {}
  names.forEach((s, i) => {
    for (let k = 0; k < callsOf(i); k++) {
      const call = MessagesServer.message([
        {
          type: "tool_use",
          id: `toolu_${s}_${k}`,
          name: "Bash",
          input: { command: `echo ${s}-${k} >> calls.txt && sleep 2` }
        }
      ])
      lanes[`${s}/${k}`] = [call, call, call, call]
    }
    const done = MessagesServer.message([{ type: "text", text: `Session ${s} is done.` }])
    lanes[`${s}/${callsOf(i)}`] = [done, done, done, done]
  })
  const server = yield* MessagesServer.make([], {
    laneOf: (body) => {
      const s = /session (s\d+)\b/.exec(JSON.stringify(body.messages[0] ?? ""))?.[1] ?? "main"
      return `${s}/${body.messages.filter((m) => m.role === "assistant").length}`
    },
    lanes
  })
  const admin = new URL(Postgres.adminUrl)
  const pgPort = yield* NetNamespaces.forwarder(net.bridgeAddress, {
    host: admin.hostname,
    port: Number(admin.port || 5432)
  })
  const apiPort = yield* NetNamespaces.forwarder(net.bridgeAddress, {
    host: "127.0.0.1",
    port: Number(new URL(server.url).port)
  })
  const remoteDatabase = new URL(database)
  remoteDatabase.hostname = net.bridgeAddress
  remoteDatabase.port = String(pgPort)
  const flags = ["--permission-mode", "bypassPermissions", "--cwd", dir, "--max-sessions", "100"]
  const local = yield* startRunner(database, dir, { ANTHROPIC_BASE_URL: server.url }, [
    ...flags,
    "--runner-host",
    net.bridgeAddress
  ])
  const remote = (ns: NetNamespaces.Namespace, name: string) =>
    startRunner(
      remoteDatabase.toString(),
      dir,
      // each runner's requests are told apart by the path of its base URL
      { ANTHROPIC_BASE_URL: `http://${net.bridgeAddress}:${apiPort}/${name}` },
      [...flags, "--host", ns.address, "--runner-host", ns.address],
      ["ip", "netns", "exec", ns.name, "unshare", "--uts", "sh", "-c", `hostname ${name} && exec "$@"`, "sh"]
    )
  const cut = yield* remote(net.namespaces[0], "armature-host-cut")
  const killed = yield* remote(net.namespaces[1], "armature-host-killed")
  yield* until("the three runners to share the 16 shards", () =>
    Effect.runPromise(Postgres.advisoryLocks(database)).then(
      (held) => held.length === 3 && held.reduce((a, b) => a + b, 0) === 16
    )
  )
  yield* busyLoad(load)
  const loadAtStart = Os.loadavg()[0]

  const ids: Record<string, string> = {}
  for (const s of names) {
    const started = yield* post(`${local.url}/sessions`, { prompt: `Work for session ${s}` })
    if (started.status !== 201) return yield* Effect.dieMessage(`start of ${s}: ${JSON.stringify(started.body)}`)
    ids[s] = String(started.body.session_id)
  }
  const runners = () =>
    Effect.runPromise(
      Effect.forEach(
        names,
        (s) =>
          Effect.map(getJson(`${local.url}/sessions/${ids[s]}`), (r) => ({
            s,
            state: String(r.body.state),
            pid: (r.body.runner as { pid: number }).pid
          })),
        // a round of the 45 reads is short, so that the runners it saw busy are still busy at the cut
        { concurrency: 8 }
      )
    )
  // both runners in namespaces run calls of a session still running; the sessions on each are those of that round
  let before: Awaited<ReturnType<typeof runners>> = []
  yield* until("each remote runner to run a call", () =>
    runners().then((all) => {
      const calls = Fs.existsSync(Path.join(dir, "calls.txt"))
        ? Fs.readFileSync(Path.join(dir, "calls.txt"), "utf8")
        : ""
      const busy = (pid: number | undefined) =>
        all.some((x) => x.pid === pid && x.state === "running" && calls.includes(`${x.s}-`))
      before = all
      return busy(cut.child.pid) && busy(killed.child.pid)
    })
  )
  const onCut = before.filter((x) => x.pid === cut.child.pid && x.state === "running").map((x) => x.s)
  const onKilled = before.filter((x) => x.pid === killed.child.pid && x.state === "running").map((x) => x.s)
  const at = Date.now()
  NetNamespaces.linkDown(net.namespaces[0])
  killed.child.kill("SIGKILL")
  const cutEnded = yield* Effect.promise(() => cut.ended)
  const cutExitMs = Date.now() - at

  // up to 3 minutes; what has not ended by then is reported as such
  for (const deadline = Date.now() + 180_000; Date.now() < deadline; ) {
    const all = yield* Effect.promise(runners)
    if (all.every((x) => x.state !== "running" && x.state !== "starting")) break
    yield* Effect.sleep("500 millis")
  }
  Fs.writeFileSync(
    Path.join(Os.tmpdir(), "serve-acceptance-runners.log"),
    [local, cut, killed].map((r) => r.output()).join("\n----\n")
  )
  const after = yield* Effect.promise(runners)
  // what the engine stored for the sessions that did not end (their messages without a final reply), for a post-mortem
  const stuck = after.filter((x) => x.state === "running" || x.state === "starting").map((x) => ids[x.s])
  if (stuck.length > 0) {
    const rows = yield* Effect.flatMap(
      SqlClient.SqlClient,
      (
        sql
      ) => sql`SELECT m.id, m.shard_id, m.entity_id, m.tag, m.payload, m.processed, m.last_read, m.message_id, m.kind, m.request_id,
          (SELECT string_agg(r.kind::text || ':' || left(r.payload, 120), ' | ') FROM cluster_replies r
            WHERE r.request_id = m.id) AS replies
        FROM cluster_messages m
        WHERE m.entity_id IN (SELECT entity_id FROM cluster_messages WHERE tag = 'run' AND payload::jsonb->>'sessionId' IN ${sql.in(stuck)})
        ORDER BY m.id`
    ).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(database) })), Effect.scoped, Effect.orDie)
    Fs.writeFileSync(
      Path.join(Os.tmpdir(), "serve-acceptance-stuck.json"),
      JSON.stringify({ sessions: stuck, messages: rows }, (_, v) => (typeof v === "bigint" ? String(v) : v), 1)
    )
  }
  const ran = new Map<string, number>()
  for (const line of Fs.readFileSync(Path.join(dir, "calls.txt"), "utf8").split("\n")) {
    if (line !== "") ran.set(line, (ran.get(line) ?? 0) + 1)
  }
  let twice = 0
  let lost = 0
  const unmatched: Array<string> = []
  for (const [i, s] of names.entries()) {
    for (let k = 0; k < callsOf(i); k++) {
      const n = ran.get(`${s}-${k}`) ?? 0
      if (n > 1) twice += 1
      if (n === 0) lost += 1
    }
    // the stream of a session still running would not end: such a session is reported in states, not read
    const state = after.find((x) => x.s === s)?.state
    if (state === "running" || state === "starting") continue
    const shown = eventLines(yield* getText(`${local.url}/sessions/${ids[s]}/events`))
    const uses = blockIds(shown, "tool_use")
    const results = blockIds(shown, "tool_result")
    if (uses.some((id) => results.filter((r) => r === id).length !== 1) || results.length !== uses.length) {
      unmatched.push(s)
    }
  }
  // the first model request of each moved session after the failure
  const failover = (moved: ReadonlyArray<string>, from: string) =>
    moved.flatMap((s) => {
      // a request of the failed runner still on its way is not the takeover
      const i = server.requests.findIndex(
        (r, n) => r.at > at && server.laneOfRequest[n].startsWith(`${s}/`) && !(r.path ?? "").startsWith(`/${from}/`)
      )
      return i === -1 ? [] : [server.requests[i].at - at]
    })
  const killedTimes = failover(onKilled, "armature-host-killed")
  const cutTimes = failover(onCut, "armature-host-cut")
  return {
    script: "serve-acceptance",
    load_processes: load,
    load: [loadAtStart, Os.loadavg()[0]],
    cores: Os.availableParallelism(),
    failed_at: new Date(at).toISOString(),
    completed: `${after.filter((x) => x.state === "success").length}/${sessionCount}`,
    states: Object.fromEntries(
      [...new Set(after.map((x) => x.state))].map((st) => [st, after.filter((x) => x.state === st).length])
    ),
    calls_run_twice: twice,
    calls_lost: lost,
    sessions_tool_use_without_one_result: unmatched,
    sessions_on_killed: onKilled.length,
    sessions_on_cut: onCut.length,
    failover_killed_ms_median: median(killedTimes),
    failover_killed_ms: killedTimes,
    failover_cut_ms_median: median(cutTimes),
    failover_cut_ms: cutTimes,
    cut_runner: {
      exit_code: cutEnded.code,
      exit_ms: cutExitMs,
      said_lost_locks: cut.output().includes("lost its locks")
    }
  }
}).pipe(Effect.scoped)

Effect.runPromise(program).then(
  (report) => process.stdout.write(`${JSON.stringify(report)}\n`),
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`)
    process.exitCode = 1
  }
)
