import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { crashedText } from "../../src/layers/durable/DurableSession.js"
import { runCli } from "../fixtures/Cli.js"
import * as MessagesServer from "../fixtures/MessagesServer.js"
import * as Postgres from "../fixtures/Postgres.js"
import { authorization, getJson, getText, post, startRunner, until } from "../fixtures/ServeRunner.js"

const lines = (text: string): ReadonlyArray<Record<string, unknown>> =>
  text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>)

/** Lets a process blocked reading the fifo go (if one still reads it). */
const release = (fifo: string) => {
  try {
    const fd = Fs.openSync(fifo, Fs.constants.O_WRONLY | Fs.constants.O_NONBLOCK)
    Fs.closeSync(fd)
  } catch {
    // nobody reads it any more
  }
}

const bash = (id: string, command: string): MessagesServer.ScriptBlock => ({
  type: "tool_use",
  id,
  name: "Bash",
  input: { command }
})

const names = ["a", "b", "c", "d"] as const

describe.each(["SIGKILL", "SIGTERM"] as const)("armature serve, a runner stopped by %s", (signal) => {
  it.scopedLive(
    "two runners share the sessions; one is stopped mid-turn: its sessions finish on the other, no stored call runs twice",
    () =>
      Effect.gen(function* () {
        const database = yield* Postgres.freshDatabase("armature_serve")
        const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-serve-")))
        for (const name of names) ChildProcess.execFileSync("mkfifo", [Path.join(dir, `gate-${name}`)])
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => {
            for (const name of names) release(Path.join(dir, `gate-${name}`))
          })
        )
        // each session has its own script (a lane, found from its prompt): two calls, then a final answer
        const lanes = Object.fromEntries(
          names.map((name) => [
            name,
            [
              MessagesServer.message([
                bash(`toolu_${name}_1`, `echo ${name} >> side-${name}.txt`),
                bash(
                  `toolu_${name}_2`,
                  `echo ${name} >> starts-${name}.txt && touch started-${name} && cat gate-${name}`
                )
              ]),
              MessagesServer.message([{ type: "text", text: `Session ${name} is done.` }])
            ]
          ])
        )
        const server = yield* MessagesServer.make([], {
          laneOf: (body) => /session ([a-d])\b/.exec(JSON.stringify(body.messages[0] ?? ""))?.[1] ?? "main",
          lanes
        })
        const env = { ANTHROPIC_BASE_URL: server.url }
        const first = yield* startRunner(database, dir, env)
        const second = yield* startRunner(database, dir, env)
        const runners = [first, second]
        // both runners hold their shards (8 each of the 16) before sessions start, so none moves while it runs
        yield* until("both runners to hold their shards", () =>
          Effect.runPromise(Postgres.advisoryLocks(database)).then((held) => held.join() === "8,8")
        )

        // sessions a and b are started through the first runner, c and d through the second
        const ids: Record<string, string> = {}
        for (const [i, name] of names.entries()) {
          const started = yield* post(`${runners[Math.floor(i / 2)].url}/sessions`, {
            prompt: `Work for session ${name}`
          })
          expect(started.status).toBe(201)
          ids[name] = String(started.body.session_id)
        }
        yield* until("every session's second call to run", () =>
          names.every((name) => Fs.existsSync(Path.join(dir, `started-${name}`)))
        )
        // the runner that runs session a is killed while the second call of each session runs
        const stateOfA = yield* getJson(`${first.url}/sessions/${ids.a}`)
        expect(stateOfA.body.state).toBe("running")
        const victimPid = (stateOfA.body.runner as { pid: number }).pid
        const victim = runners.find((r) => r.child.pid === victimPid)
        const survivor = runners.find((r) => r.child.pid !== victimPid)
        if (victim === undefined || survivor === undefined) {
          return yield* Effect.dieMessage(`session a runs in process ${victimPid}, not a runner`)
        }
        const states = yield* Effect.forEach(names, (name) => getJson(`${survivor.url}/sessions/${ids[name]}`))
        const onVictim = names.filter((_, i) => (states[i].body.runner as { pid: number }).pid === victimPid)
        // a stream of session a's events, read from the runner that does not run it (yet)
        const streamA = fetch(`${survivor.url}/sessions/${ids.a}/events`, { headers: authorization }).then((r) =>
          r.text()
        )
        victim.child.kill(signal)
        // SIGTERM: the runner lets its shards go and exits 0; its sessions' running calls are cut as by a crash
        expect(yield* Effect.promise(() => victim.ended)).toEqual(
          signal === "SIGKILL" ? { code: null, signal } : { code: 0, signal: null }
        )
        // the survivor's own sessions finish once their second call ends
        for (const name of names.filter((n) => !onVictim.includes(n))) release(Path.join(dir, `gate-${name}`))

        yield* until("every session to end", () =>
          Effect.runPromise(
            Effect.forEach(names, (name) => getJson(`${survivor.url}/sessions/${ids[name]}`)).pipe(
              Effect.map((all) => all.every((s) => s.body.state !== "running"))
            )
          )
        )
        for (const name of names) {
          const state = yield* getJson(`${survivor.url}/sessions/${ids[name]}`)
          expect(state.body).toMatchObject({ session_id: ids[name], state: "success", prompts: 1 })
          expect((state.body.runner as { pid: number }).pid).toBe(survivor.child.pid)
          // every call with a stored result ran once; the call in flight at the kill was not run again
          expect(Fs.readFileSync(Path.join(dir, `side-${name}.txt`), "utf8")).toBe(`${name}\n`)
          expect(Fs.readFileSync(Path.join(dir, `starts-${name}.txt`), "utf8")).toBe(`${name}\n`)
        }
        const eventsOf = (name: string) => getText(`${survivor.url}/sessions/${ids[name]}/events`)
        for (const name of names) {
          const events = lines(yield* eventsOf(name))
          expect(events[0]).toMatchObject({ type: "system", subtype: "init", session_id: ids[name] })
          expect(events.at(-1)).toMatchObject({
            type: "result",
            subtype: "success",
            result: `Session ${name} is done.`
          })
          // the model got both results in order; the killed call's result says it was cut short by a crash
          const answered = server.requests.filter((r) => JSON.stringify(r.body.messages[0]).includes(`session ${name}`))
          expect(answered).toHaveLength(2)
          expect(answered[1].body.messages.at(-1)).toEqual({
            role: "user",
            content: [
              { type: "tool_result", tool_use_id: `toolu_${name}_1`, content: "(Bash completed with no output)" },
              onVictim.includes(name)
                ? { type: "tool_result", tool_use_id: `toolu_${name}_2`, content: crashedText("Bash"), is_error: true }
                : { type: "tool_result", tool_use_id: `toolu_${name}_2`, content: "(Bash completed with no output)" }
            ]
          })
        }
        // the stream opened before the kill on the other runner followed session a to its end, each line once
        const followed = lines(yield* Effect.promise(() => streamA))
        expect(followed).toEqual(lines(yield* eventsOf("a")))
        expect(onVictim).toContain("a")
      }),
    240_000
  )
})

describe("armature serve", () => {
  it.scopedLive(
    "a follow-up prompt continues the conversation; an interrupt ends the running turn; SIGTERM stops the runner",
    () =>
      Effect.gen(function* () {
        const database = yield* Postgres.freshDatabase("armature_serve_api")
        const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-serve-api-")))
        const gate = Path.join(dir, "gate")
        ChildProcess.execFileSync("mkfifo", [gate])
        yield* Effect.addFinalizer(() => Effect.sync(() => release(gate)))
        const server = yield* MessagesServer.make([], {
          laneOf: (body) => /session ([a-z])\b/.exec(JSON.stringify(body.messages[0] ?? ""))?.[1] ?? "main",
          lanes: {
            e: [
              MessagesServer.message([{ type: "text", text: "First answer." }]),
              MessagesServer.message([{ type: "text", text: "Second answer." }])
            ],
            f: [MessagesServer.message([bash("toolu_f_1", "touch started && cat gate")])]
          }
        })
        const runner = yield* startRunner(database, dir, { ANTHROPIC_BASE_URL: server.url })
        const events = (id: string, after = 0) => getText(`${runner.url}/sessions/${id}/events?after=${after}`)

        const started = yield* post(`${runner.url}/sessions`, { prompt: "Hello from session e" })
        expect(started.status).toBe(201)
        const id = String(started.body.session_id)
        // the stream ends with the run's result, once the session is no longer running
        const firstRun = lines(yield* events(id))
        expect(firstRun.at(-1)).toMatchObject({ type: "result", subtype: "success", result: "First answer." })
        expect((yield* getJson(`${runner.url}/sessions/${id}`)).body).toMatchObject({ state: "success", prompts: 1 })

        const followUp = yield* post(`${runner.url}/sessions/${id}/prompt`, { prompt: "And then?" })
        expect(followUp).toEqual({ status: 202, body: { session_id: id, prompt: 1 } })
        const secondRun = lines(yield* events(id, firstRun.length))
        expect(secondRun[0]).toMatchObject({ type: "system", subtype: "init", session_id: id })
        expect(secondRun.at(-1)).toMatchObject({ type: "result", subtype: "success", result: "Second answer." })
        // the whole stream is both runs, each line once
        expect(lines(yield* events(id))).toEqual([...firstRun, ...secondRun])
        expect(server.requests).toHaveLength(2)
        expect(server.requests[1].body.messages).toMatchObject([
          { role: "user", content: [{ type: "text", text: "Hello from session e" }] },
          { role: "assistant", content: [{ type: "text", text: "First answer." }] },
          { role: "user", content: [{ type: "text", text: "And then?" }] }
        ])
        expect((yield* getJson(`${runner.url}/sessions/${id}`)).body).toMatchObject({ state: "success", prompts: 2 })

        // an interrupt ends the run whose call is running; asked of a session that is not running, it is refused
        const blocked = yield* post(`${runner.url}/sessions`, { prompt: "Wait in session f" })
        const blockedId = String(blocked.body.session_id)
        yield* until("the call to start", () => Fs.existsSync(Path.join(dir, "started")))
        expect(yield* post(`${runner.url}/sessions/${blockedId}/prompt`, { prompt: "more" })).toMatchObject({
          status: 409
        })
        expect(yield* post(`${runner.url}/sessions/${blockedId}/interrupt`, {})).toEqual({
          status: 202,
          body: { session_id: blockedId, interrupted: 0 }
        })
        const interrupted = lines(yield* events(blockedId))
        expect(interrupted.at(-1)).toMatchObject({ type: "result", subtype: "interrupted" })
        expect((yield* getJson(`${runner.url}/sessions/${blockedId}`)).body).toMatchObject({ state: "interrupted" })
        expect(yield* post(`${runner.url}/sessions/${blockedId}/interrupt`, {})).toMatchObject({ status: 409 })

        // errors name what is wrong
        expect(yield* post(`${runner.url}/sessions`, { prompt: "" })).toMatchObject({ status: 400 })
        expect((yield* getJson(`${runner.url}/sessions/nope`)).status).toBe(404)

        runner.child.kill("SIGTERM")
        const ended = yield* Effect.promise(() => runner.ended)
        expect(ended.signal).toBe(null)
        expect(runner.output()).not.toContain("Error")
      }),
    240_000
  )

  it.effect(
    "its flags: --help lists the API; a missing or wrong flag is named, exit status 2",
    () =>
      Effect.gen(function* () {
        const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-serve-flags-"))
        const cli = (args: ReadonlyArray<string>) => Effect.promise(() => runCli(args, dir))
        const help = yield* cli(["serve", "--help"])
        expect(help.code).toBe(0)
        expect(help.stdout).toContain("POST /sessions, GET /sessions/ID/events")
        expect(help.stdout).toContain("--runner-port")
        const missing = yield* cli(["serve"])
        expect(missing.code).toBe(2)
        expect(missing.stderr).toContain("--database")
        const wrong = yield* cli(["serve", "--database", "mysql://db/x"])
        expect(wrong).toMatchObject({
          code: 2,
          stderr: "armature: --database: expected a PostgreSQL URL (postgres://…), got mysql://db/x\n"
        })
        const port = yield* cli(["serve", "--database", "postgres://db/x", "--runner-port", "0"])
        expect(port).toMatchObject({ code: 2, stderr: "armature: --runner-port: expected a port (1–65535), got 0\n" })
        const unreachable = yield* cli([
          "serve",
          "--database",
          "postgres://someone:secret@127.0.0.1:1/x",
          "--port",
          "0"
        ])
        expect(unreachable.code).toBe(2)
        expect(unreachable.stderr).toContain(
          "armature: --database: postgres://someone@127.0.0.1:1/x: connect ECONNREFUSED"
        )
        expect(unreachable.stderr).not.toContain("secret")
      }),
    180_000
  )

  it.scopedLive(
    "a session that cannot run (no ANTHROPIC_API_KEY) ends with an error result, not running forever",
    () =>
      Effect.gen(function* () {
        const database = yield* Postgres.freshDatabase("armature_serve_nokey")
        const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-serve-nokey-")))
        const runner = yield* startRunner(database, dir, {
          ANTHROPIC_API_KEY: undefined,
          ANTHROPIC_BASE_URL: undefined
        })
        const started = yield* post(`${runner.url}/sessions`, { prompt: "Anything" })
        const id = String(started.body.session_id)
        const events = lines(yield* getText(`${runner.url}/sessions/${id}/events`))
        expect(events.at(-1)).toMatchObject({ type: "result", subtype: "error_during_execution", is_error: true })
        expect(String(events.at(-1)?.result)).toContain("ANTHROPIC_API_KEY")
        expect((yield* getJson(`${runner.url}/sessions/${id}`)).body).toMatchObject({ state: "error_during_execution" })
        // the runner's own lines only (its start, the session that failed), none of @effect/cluster's INFO logs
        const printed = runner
          .output()
          .split("\n")
          .filter((line) => line !== "")
        expect(printed, runner.output()).toHaveLength(2)
        expect(printed[0]).toMatch(/^armature serve: listening on http:\/\/127\.0\.0\.1:\d+, runner /)
        expect(printed[1]).toBe(`armature serve: session ${id}: ${String(events.at(-1)?.result)}`)
      }),
    180_000
  )

  it.scopedLive(
    "a session whose runner died before handing it to the cluster ends as never started, not running forever",
    () =>
      Effect.gen(function* () {
        const database = yield* Postgres.freshDatabase("armature_serve_phantom")
        const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-serve-phantom-")))
        const runner = yield* startRunner(database, dir, { ANTHROPIC_BASE_URL: "http://127.0.0.1:9" })
        // what a runner killed between recording a new session and handing it over leaves: a starting record of a
        // process that is gone, older than the minute a runner has to take a session up, and no workflow
        const id = "0f0e0d0c-0b0a-4090-8070-605040302010"
        const old = Date.now() - 120_000
        yield* Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql`INSERT INTO armature_sessions (id, args, created_at, pid, host, state, updated_at)
            VALUES (${id}, '{}', ${old}, 999999, ${Os.hostname()}, 'starting', ${old})`
        ).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(database) })), Effect.orDie)
        // its events end, with a result that says why
        const events = lines(yield* getText(`${runner.url}/sessions/${id}/events`))
        expect(events).toEqual([
          {
            type: "result",
            subtype: "error_not_started",
            is_error: true,
            session_id: id,
            result: "the session never started: no runner took it up within 60 s of its creation",
            seq: 1,
            turn: 0,
            attempt: ""
          }
        ])
        expect((yield* getJson(`${runner.url}/sessions/${id}`)).body).toMatchObject({ state: "error_not_started" })
        expect(yield* post(`${runner.url}/sessions/${id}/interrupt`, {})).toEqual({
          status: 409,
          body: { error: `session ${id} is not running (error_not_started)` }
        })
        expect(yield* post(`${runner.url}/sessions/${id}/prompt`, { prompt: "go on" })).toEqual({
          status: 409,
          body: { error: `session ${id} never started; start a new one` }
        })
        expect((yield* getJson(`${runner.url}/sessions/${id}`)).body).toMatchObject({ state: "error_not_started" })
        const listed = yield* Effect.promise(() => runCli(["sessions", "--json", "--database", database], dir))
        expect(lines(listed.stdout)).toMatchObject([{ session_id: id, state: "error_not_started" }])
      }),
    180_000
  )

  it.scopedLive(
    "runners started together on a new database all come up: its tables are made one at a time (3 rounds of 3)",
    () =>
      Effect.gen(function* () {
        for (let round = 1; round <= 3; round++) {
          const database = yield* Postgres.freshDatabase("armature_serve_together")
          const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-serve-together-")))
          const runners = yield* Effect.all(
            [1, 2, 3].map(() => startRunner(database, dir, { ANTHROPIC_BASE_URL: "http://127.0.0.1:9" })),
            { concurrency: "unbounded" }
          )
          for (const runner of runners) {
            expect(runner.output()).not.toContain("duplicate key")
            expect((yield* getJson(`${runner.url}/sessions/nope`)).status).toBe(404)
          }
          for (const runner of runners) runner.child.kill("SIGKILL")
          yield* Effect.promise(() => Promise.all(runners.map((r) => r.ended)))
        }
      }),
    400_000
  )
})
