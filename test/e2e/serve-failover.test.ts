import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import * as MessagesServer from "../fixtures/MessagesServer.js"
import * as Postgres from "../fixtures/Postgres.js"
import {
  authorization,
  blockIds,
  eventLines,
  getJson,
  getText,
  post,
  startRunner,
  until
} from "../fixtures/ServeRunner.js"

const lines = eventLines

const bash = (id: string, command: string): MessagesServer.ScriptBlock => ({
  type: "tool_use",
  id,
  name: "Bash",
  input: { command }
})

/** Lets a process blocked reading the fifo go (if one still reads it). */
const release = (fifo: string) => {
  try {
    const fd = Fs.openSync(fifo, Fs.constants.O_WRONLY | Fs.constants.O_NONBLOCK)
    Fs.closeSync(fd)
  } catch {
    // nobody reads it any more
  }
}

/** Rows of a query on the test's database. */
const query = <A extends object>(
  database: string,
  run: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<A>, unknown>
) =>
  Effect.flatMap(SqlClient.SqlClient, run).pipe(
    Effect.provide(PgClient.layer({ url: Redacted.make(database) })),
    Effect.scoped,
    Effect.orDie
  )

describe("armature serve, failover mid-stream", () => {
  it.scopedLive(
    "a runner killed while the model streams a turn: the turn asked again supersedes the dead runner's lines; ?attempts=all keeps them",
    () =>
      Effect.gen(function* () {
        const database = yield* Postgres.freshDatabase("armature_serve_midstream")
        const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-serve-midstream-")))
        // the first asking of turn 1 streams a call (and a text block), then stalls before its end: the runner is
        // killed there. The second asking answers with another call and nothing else; then the final answer.
        const stalled = MessagesServer.message([
          bash("toolu_first", "echo first >> calls.txt"),
          { type: "text", text: "And some text." }
        ])
        if (stalled.kind !== "stream") return yield* Effect.dieMessage("a message is a stream")
        const firstStop = stalled.events.findIndex((e) => "event" in e && e.event === "content_block_stop")
        const stalling: MessagesServer.Reply = {
          kind: "stream",
          events: [
            ...stalled.events.slice(0, firstStop + 1),
            { delayMs: 90_000 },
            ...stalled.events.slice(firstStop + 1)
          ]
        }
        const server = yield* MessagesServer.make([], {
          laneOf: (body) => (JSON.stringify(body.messages[0] ?? "").includes("session m") ? "m" : "main"),
          lanes: {
            m: [
              stalling,
              MessagesServer.message([bash("toolu_second", "echo second >> calls.txt")]),
              MessagesServer.message([{ type: "text", text: "Session m is done." }])
            ]
          }
        })
        const env = { ANTHROPIC_BASE_URL: server.url }
        const runners = [yield* startRunner(database, dir, env), yield* startRunner(database, dir, env)]
        yield* until("both runners to hold their shards", () =>
          Effect.runPromise(Postgres.advisoryLocks(database)).then((held) => held.join() === "8,8")
        )
        const started = yield* post(`${runners[0].url}/sessions`, { prompt: "Work for session m" })
        expect(started.status).toBe(201)
        const id = String(started.body.session_id)
        // the streamed call's line is stored while the turn still streams
        yield* until("the first call's tool_use line to be stored", () =>
          Effect.runPromise(
            query<{ n: number | string }>(
              database,
              (sql) => sql`SELECT COUNT(*) AS n FROM armature_event_lines
                WHERE session_id = ${id} AND line LIKE '%toolu_first%'`
            )
          ).then((rows) => Number(rows[0]?.n ?? 0) === 1)
        )
        const state = yield* getJson(`${runners[0].url}/sessions/${id}`)
        const victim = runners.find((r) => r.child.pid === (state.body.runner as { pid: number }).pid)
        const survivor = runners.find((r) => r !== victim)
        if (victim === undefined || survivor === undefined) return yield* Effect.dieMessage("no runner runs it")
        // a client follows the session from the survivor across the failover
        let received = ""
        const live = fetch(`${survivor.url}/sessions/${id}/events`, { headers: authorization }).then(async (r) => {
          const decoder = new TextDecoder()
          for await (const chunk of r.body ?? []) received += decoder.decode(chunk as Uint8Array, { stream: true })
          return received
        })
        yield* until("the live stream to have sent the first call", () => received.includes("toolu_first"))
        victim.child.kill("SIGKILL")
        expect((yield* Effect.promise(() => victim.ended)).signal).toBe("SIGKILL")

        yield* until("the session to end", () =>
          Effect.runPromise(getJson(`${survivor.url}/sessions/${id}`)).then((s) => s.body.state !== "running")
        )
        expect((yield* getJson(`${survivor.url}/sessions/${id}`)).body).toMatchObject({ state: "success" })
        // only the call of the final attempt ran, once
        expect(Fs.readFileSync(Path.join(dir, "calls.txt"), "utf8")).toBe("second\n")

        // the stream shows the final attempt of each turn: one tool_result per tool_use, the first call absent
        const shown = lines(yield* getText(`${survivor.url}/sessions/${id}/events`))
        expect(blockIds(shown, "tool_use")).toEqual(["toolu_second"])
        expect(blockIds(shown, "tool_result")).toEqual(["toolu_second"])
        expect(shown.some((e) => JSON.stringify(e).includes("And some text."))).toBe(false)
        expect(shown[0]).toMatchObject({ type: "system", subtype: "init", turn: 0 })
        expect(shown.at(-1)).toMatchObject({ type: "result", subtype: "success", result: "Session m is done." })
        const turnOne = shown.filter((e) => e.turn === 1)
        expect(new Set(turnOne.map((e) => e.attempt)).size).toBe(1)
        // numbered in the order stored, each line once
        const seqs = shown.map((e) => Number(e.seq))
        expect(seqs).toEqual([...seqs].sort((a, b) => a - b))
        expect(new Set(seqs).size).toBe(seqs.length)

        // everything, for audit: the dead runner's line of turn 1 is there, under another attempt
        const all = lines(yield* getText(`${survivor.url}/sessions/${id}/events?attempts=all`))
        const first = all.filter((e) => blockIds([e], "tool_use").includes("toolu_first"))
        expect(first).toHaveLength(1)
        expect(first[0].turn).toBe(1)
        expect(first[0].attempt).not.toBe(turnOne[0].attempt)
        expect(all.length).toBe(shown.length + 1)

        // the client that followed it live was told that its turn 1 was superseded, then got the new attempt
        const followed = lines(yield* Effect.promise(() => live))
        const marker = followed.findIndex((e) => e.subtype === "superseded")
        expect(marker).toBeGreaterThan(0)
        expect(followed[marker]).toMatchObject({ turn: 1, attempt: first[0].attempt, by: turnOne[0].attempt })
        expect(blockIds(followed.slice(0, marker), "tool_use")).toEqual(["toolu_first"])
        expect(blockIds(followed.slice(marker), "tool_use")).toEqual(["toolu_second"])
        expect(followed.slice(marker + 1)).toEqual(
          shown.filter((e) => Number(e.seq) > Number(followed[marker - 1].seq))
        )
        expect(server.requests).toHaveLength(3)
      }),
    240_000
  )

  it.scopedLive(
    "a runner killed after a call was begun but before its process started: the runner that takes over runs it, once, not a crash",
    () =>
      Effect.gen(function* () {
        const database = yield* Postgres.freshDatabase("armature_serve_unstarted")
        const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-serve-unstarted-")))
        const gate = Path.join(dir, "hook-gate")
        ChildProcess.execFileSync("mkfifo", [gate])
        yield* Effect.addFinalizer(() => Effect.sync(() => release(gate)))
        // the call's PreToolUse hook runs after the call is recorded as begun and before its process is spawned:
        // the first time it waits at the gate (the runner is killed there), later it lets the call go
        Fs.mkdirSync(Path.join(dir, ".claude"))
        Fs.writeFileSync(
          Path.join(dir, ".claude", "settings.json"),
          JSON.stringify({
            hooks: {
              PreToolUse: [
                {
                  matcher: "Bash",
                  hooks: [
                    {
                      type: "command",
                      command: `cd ${dir} && echo hook >> hooks.txt && if [ ! -e hook-once ]; then touch hook-once; cat hook-gate; fi; exit 0`
                    }
                  ]
                }
              ]
            }
          })
        )
        const server = yield* MessagesServer.make([], {
          laneOf: (body) => (JSON.stringify(body.messages[0] ?? "").includes("session u") ? "u" : "main"),
          lanes: {
            u: [
              MessagesServer.message([bash("toolu_write", "echo once >> calls.txt")]),
              MessagesServer.message([{ type: "text", text: "Session u is done." }])
            ]
          }
        })
        const env = { ANTHROPIC_BASE_URL: server.url }
        const runners = [yield* startRunner(database, dir, env), yield* startRunner(database, dir, env)]
        yield* until("both runners to hold their shards", () =>
          Effect.runPromise(Postgres.advisoryLocks(database)).then((held) => held.join() === "8,8")
        )
        const started = yield* post(`${runners[0].url}/sessions`, { prompt: "Work for session u" })
        expect(started.status).toBe(201)
        const id = String(started.body.session_id)
        yield* until("the hook to wait at its gate", () => Fs.existsSync(Path.join(dir, "hook-once")))
        const state = yield* getJson(`${runners[0].url}/sessions/${id}`)
        const victim = runners.find((r) => r.child.pid === (state.body.runner as { pid: number }).pid)
        const survivor = runners.find((r) => r !== victim)
        if (victim === undefined || survivor === undefined) return yield* Effect.dieMessage("no runner runs it")
        // begun, not started: the begin record is stored and no process of the call has a start mark
        const marks = () =>
          Effect.runPromise(
            query<{ n: number | string }>(
              database,
              (sql) => sql`SELECT COUNT(*) AS n FROM armature_call_starts WHERE session_id = ${id}`
            )
          ).then((rows) => Number(rows[0]?.n ?? 0))
        expect(yield* Effect.promise(marks)).toBe(0)
        victim.child.kill("SIGKILL")
        expect((yield* Effect.promise(() => victim.ended)).signal).toBe("SIGKILL")

        yield* until("the session to end", () =>
          Effect.runPromise(getJson(`${survivor.url}/sessions/${id}`)).then((s) => s.body.state !== "running")
        )
        expect((yield* getJson(`${survivor.url}/sessions/${id}`)).body).toMatchObject({ state: "success" })
        // the call ran once, on the survivor (its hook twice: hooks are not journalled), and the model got its
        // real result, not the crash result
        expect(Fs.readFileSync(Path.join(dir, "calls.txt"), "utf8")).toBe("once\n")
        expect(Fs.readFileSync(Path.join(dir, "hooks.txt"), "utf8")).toBe("hook\nhook\n")
        expect(yield* Effect.promise(marks)).toBe(1)
        expect(server.requests).toHaveLength(2)
        expect(server.requests[1].body.messages.at(-1)).toEqual({
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "toolu_write", content: "(Bash completed with no output)" }]
        })
        const shown = lines(yield* getText(`${survivor.url}/sessions/${id}/events`))
        expect(blockIds(shown, "tool_use")).toEqual(["toolu_write"])
        expect(blockIds(shown, "tool_result")).toEqual(["toolu_write"])
      }),
    240_000
  )
})
