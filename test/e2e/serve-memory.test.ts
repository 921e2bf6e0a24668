import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as MessagesServer from "../fixtures/MessagesServer.js"
import * as Postgres from "../fixtures/Postgres.js"
import { getJson, getText, post, startRunner, until } from "../fixtures/ServeRunner.js"

const count = 12

/** What `GET /runner` says a runner holds for sessions. */
interface Held {
  readonly sessions_running: ReadonlyArray<string>
  readonly entities: number
  readonly event_streams: number
  readonly event_stream_sessions: number
  readonly call_groups: number
}

describe("armature serve, a runner's memory of finished sessions", () => {
  it.scopedLive(
    "sessions run through one runner; once they have ended and their streams are read, it holds nothing of them",
    () =>
      Effect.gen(function* () {
        const database = yield* Postgres.freshDatabase("armature_serve_memory")
        const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-serve-memory-")))
        const names = Array.from({ length: count }, (_, i) => `s${i}`)
        // each session: one Bash call that takes a moment, then a final answer (lanes found from the prompt)
        const lanes: Record<string, ReadonlyArray<MessagesServer.Reply>> = {}
        for (const s of names) {
          lanes[`${s}/0`] = [
            MessagesServer.message([
              {
                type: "tool_use",
                id: `toolu_${s}`,
                name: "Bash",
                input: { command: `echo ${s} >> calls.txt; sleep 2` }
              }
            ])
          ]
          lanes[`${s}/1`] = [MessagesServer.message([{ type: "text", text: `Session ${s} is done.` }])]
        }
        const server = yield* MessagesServer.make([], {
          laneOf: (body) => {
            const s = /session (s\d+)\b/.exec(JSON.stringify(body.messages[0] ?? ""))?.[1] ?? "main"
            return `${s}/${body.messages.filter((m) => m.role === "assistant").length}`
          },
          lanes
        })
        const runner = yield* startRunner(database, dir, { ANTHROPIC_BASE_URL: server.url })
        const held = () => Effect.runPromise(getJson(`${runner.url}/runner`)).then((r) => r.body as unknown as Held)
        // like every route, it answers only with the token
        expect(yield* Effect.promise(() => fetch(`${runner.url}/runner`).then((r) => r.status))).toBe(401)
        const idle = yield* Effect.promise(held)
        expect(idle).toMatchObject({ sessions_running: [], event_streams: 0, call_groups: 0 })

        const ids: Array<string> = []
        for (const s of names) {
          const started = yield* post(`${runner.url}/sessions`, { prompt: `Work for session ${s}` })
          expect(started.status).toBe(201)
          ids.push(String(started.body.session_id))
        }
        // while they run, the runner holds them: this is what must go back to nothing
        yield* until("the runner to hold running sessions and their calls", () =>
          held().then((h) => h.sessions_running.length > 0 && h.entities > 0 && h.call_groups > 0)
        )
        // every session's stream read to its end (the stream ends once the session has ended)
        const streams = yield* Effect.forEach(ids, (id) => getText(`${runner.url}/sessions/${id}/events`), {
          concurrency: "unbounded"
        })
        for (const text of streams) expect(text).toContain('"subtype":"success"')
        for (const id of ids) expect((yield* getJson(`${runner.url}/sessions/${id}`)).body.state).toBe("success")

        yield* until("the runner to hold nothing of the ended sessions", () =>
          held().then(
            (h) =>
              h.sessions_running.length === 0 &&
              h.entities === 0 &&
              h.event_streams === 0 &&
              h.event_stream_sessions === 0 &&
              h.call_groups === 0
          )
        )
        expect(
          Fs.readFileSync(Path.join(dir, "calls.txt"), "utf8")
            .split("\n")
            .filter((l) => l !== "").length
        ).toBe(count)
      }),
    200_000
  )
})
