import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Console, Effect, Option, PubSub } from "effect"
import * as DurableStore from "../../../src/layers/durable/DurableStore.js"
import * as SessionEvents from "../../../src/layers/durable/SessionEvents.js"
import * as Postgres from "../../fixtures/Postgres.js"

/** Prints `lines` as a session's output through its events console, as one execution of its workflow does. */
const execution = (sessionId: string, lines: ReadonlyArray<string>) =>
  Effect.flatMap(SessionEvents.console(sessionId), (events) =>
    Effect.forEach(lines, (line) => Console.log(line), { discard: true }).pipe(Effect.withConsole(events))
  )

describe("SessionEvents", () => {
  it.scoped("numbers a session's lines from 1; a replayed execution stores only the lines past the stored ones", () =>
    Effect.gen(function* () {
      const url = yield* Postgres.freshDatabase("armature_session_events")
      yield* Effect.gen(function* () {
        yield* SessionEvents.ensureTables
        // the first execution died after two lines; the replay prints them again, then goes on
        yield* execution("s1", ["init", "turn 1"])
        yield* execution("s2", ["other session"])
        yield* execution("s1", ["init", "turn 1", "result"])
        expect(yield* SessionEvents.after("s1", 0)).toEqual([
          { seq: 1, line: "init" },
          { seq: 2, line: "turn 1" },
          { seq: 3, line: "result" }
        ])
        expect(yield* SessionEvents.after("s1", 2)).toEqual([{ seq: 3, line: "result" }])
        expect(yield* SessionEvents.after("s1", 1, 1)).toEqual([{ seq: 2, line: "turn 1" }])
        expect(yield* SessionEvents.count("s1")).toBe(3)
        expect(yield* SessionEvents.after("s2", 0)).toEqual([{ seq: 1, line: "other session" }])
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
