import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Console, Effect, Option, PubSub } from "effect"
import * as DurableStore from "../../../src/layers/durable/DurableStore.js"
import * as SessionEvents from "../../../src/layers/durable/SessionEvents.js"
import * as Postgres from "../../fixtures/Postgres.js"

/**
 * Prints `lines` as a session's output through its events console, as one execution of its workflow does: each
 * line is printed at the position given with it (the turn and attempt it belongs to), or at turn 0.
 */
const execution = (
  sessionId: string,
  lines: ReadonlyArray<string | readonly [SessionEvents.Position, string]>,
  stored?: ReadonlySet<string>
) =>
  Effect.gen(function* () {
    let position: SessionEvents.Position = { turn: 0, attempt: "" }
    const events = yield* SessionEvents.console(sessionId, () => position, stored)
    for (const entry of lines) {
      const line = typeof entry === "string" ? entry : entry[1]
      if (typeof entry !== "string") position = entry[0]
      yield* Console.log(line).pipe(Effect.withConsole(events))
    }
  })

const use = (id: string) =>
  JSON.stringify({ type: "assistant", message: { content: [{ type: "tool_use", id, name: "Bash", input: {} }] } })
const result = (id: string) =>
  JSON.stringify({ type: "user", message: { content: [{ type: "tool_result", tool_use_id: id, content: "ok" }] } })
const text = (t: string) => JSON.stringify({ type: "assistant", message: { content: [{ type: "text", text: t }] } })

describe("SessionEvents", () => {
  it.scoped("numbers a session's lines from 1; a replayed execution stores only the lines past the stored ones", () =>
    Effect.gen(function* () {
      const url = yield* Postgres.freshDatabase("armature_session_events")
      yield* Effect.gen(function* () {
        yield* SessionEvents.ensureTables
        // the first execution died after two lines; the replay prints them again, then goes on
        yield* execution("s1", ["init", "turn 1"])
        yield* execution("s2", ["other session"])
        // the replay knows the places stored before it (it sends nothing for them) and stores the rest
        const places = yield* SessionEvents.storedPlaces("s1")
        expect(places).toEqual(
          new Set([
            SessionEvents.placeKey({ turn: 0, attempt: "", key: "other/1" }),
            SessionEvents.placeKey({ turn: 0, attempt: "", key: "other/2" })
          ])
        )
        yield* execution("s1", ["init", "turn 1", "result"], places)
        const row = (seq: number, line: string) => ({ seq, turn: 0, attempt: "", line })
        expect(yield* SessionEvents.after("s1", 0)).toEqual([row(1, "init"), row(2, "turn 1"), row(3, "result")])
        expect(yield* SessionEvents.after("s1", 2)).toEqual([row(3, "result")])
        expect(yield* SessionEvents.after("s1", 1, { limit: 1 })).toEqual([row(2, "turn 1")])
        expect(yield* SessionEvents.count("s1")).toBe(3)
        expect(yield* SessionEvents.after("s2", 0)).toEqual([row(1, "other session")])
        // an interrupt is asked of one prompt of a session, once
        expect(yield* SessionEvents.interruptRequested("s1", 0)).toBe(false)
        yield* SessionEvents.requestInterrupt("s1", 0)
        yield* SessionEvents.requestInterrupt("s1", 0)
        expect(yield* SessionEvents.interruptRequested("s1", 0)).toBe(true)
        expect(yield* SessionEvents.interruptRequested("s1", 1)).toBe(false)
        expect(yield* SessionEvents.interruptRequested("s2", 0)).toBe(false)
      }).pipe(Effect.provide(DurableStore.sqlLayer({ _tag: "Postgres", url })))
    })
  )

  it.scoped(
    "a turn asked again supersedes the earlier attempt's lines; a replayed stored turn keeps its lines, results in any order",
    () =>
      Effect.gen(function* () {
        const url = yield* Postgres.freshDatabase("armature_session_attempts")
        yield* Effect.gen(function* () {
          yield* SessionEvents.ensureTables
          const t1 = { turn: 1, attempt: "x" }
          // execution x: turn 1 stored (two calls, both results), then turn 2 streamed a call and x died
          yield* execution("s", [
            "init",
            [t1, use("a")],
            [t1, use("b")],
            [t1, result("b")],
            [t1, result("a")],
            [{ turn: 2, attempt: "x" }, use("c")]
          ])
          // execution y replays turn 1 (its results in the other order) and asks turn 2 again: one text block
          const t2y = { turn: 2, attempt: "y" }
          yield* execution("s", [
            "init",
            [t1, use("a")],
            [t1, use("b")],
            [t1, result("a")],
            [t1, result("b")],
            [t2y, text("done")],
            [t2y, "result"]
          ])
          const shown = yield* SessionEvents.after("s", 0)
          expect(shown.map((r) => [r.seq, r.turn, r.attempt, r.line])).toEqual([
            [1, 0, "", "init"],
            [2, 1, "x", use("a")],
            [3, 1, "x", use("b")],
            [4, 1, "x", result("b")],
            [5, 1, "x", result("a")],
            [7, 2, "y", text("done")],
            [8, 2, "y", "result"]
          ])
          expect(yield* SessionEvents.count("s")).toBe(7)
          // every line, for audit: the superseded attempt's tool_use too
          const all = yield* SessionEvents.after("s", 0, { all: true })
          expect(all.map((r) => [r.seq, r.turn, r.attempt])).toEqual([
            [1, 0, ""],
            [2, 1, "x"],
            [3, 1, "x"],
            [4, 1, "x"],
            [5, 1, "x"],
            [6, 2, "x"],
            [7, 2, "y"],
            [8, 2, "y"]
          ])
          // a served line carries its place
          expect(JSON.parse(SessionEvents.served(shown[5]))).toMatchObject({
            type: "assistant",
            seq: 7,
            turn: 2,
            attempt: "y"
          })
        }).pipe(Effect.provide(DurableStore.sqlLayer({ _tag: "Postgres", url })))
      })
  )

  it.scopedLive(
    "a stored line and a change are heard by the listener, once per stored line, with the session's id",
    () =>
      Effect.gen(function* () {
        const url = yield* Postgres.freshDatabase("armature_session_changes")
        yield* Effect.gen(function* () {
          yield* SessionEvents.ensureTables
          const hub = yield* SessionEvents.changes(yield* PgClient.PgClient)
          const heard = yield* PubSub.subscribe(hub)
          // the listener's LISTEN is in place once a notification sent after it is heard
          yield* SessionEvents.changed("probe").pipe(
            Effect.zipRight(heard.take.pipe(Effect.timeoutOption("1 second"))),
            Effect.repeat({ until: Option.isSome }),
            Effect.timeout("60 seconds")
          )
          yield* heard.takeAll
          yield* execution("s1", ["init"])
          // a line stored again (a replay) sends nothing; a line past the stored ones does
          yield* execution("s1", ["init", "turn 1"])
          yield* SessionEvents.changed("s2")
          const ids: Array<string> = []
          while (ids.length < 3) ids.push(yield* heard.take.pipe(Effect.timeout("60 seconds")))
          expect(ids).toEqual(["s1", "s1", "s2"])
          expect(yield* heard.takeAll.pipe(Effect.map(Chunk.toReadonlyArray))).toEqual([])
        }).pipe(Effect.provide(DurableStore.sqlLayer({ _tag: "Postgres", url })))
      })
  )
})
