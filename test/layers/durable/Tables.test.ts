import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import * as DurableStore from "../../../src/layers/durable/DurableStore.js"
import * as Tables from "../../../src/layers/durable/Tables.js"
import * as Postgres from "../../fixtures/Postgres.js"

describe("Tables: each table is made once per SQL client, under the schema lock", () => {
  it.scoped(
    "uses side by side run the making once; another client makes it again; a failed making is tried again",
    () =>
      Effect.gen(function* () {
        const url = yield* Postgres.freshDatabase("armature_tables_once")
        let made = 0
        let failures = 1
        const make = Effect.flatMap(SqlClient.SqlClient, (sql) =>
          Effect.zipRight(
            Effect.sync(() => {
              made += 1
            }),
            sql`CREATE TABLE IF NOT EXISTS armature_once_probe (id TEXT PRIMARY KEY)`
          )
        )
        const flaky = Effect.suspend(() => (failures-- > 0 ? Effect.dieMessage("no table") : Effect.void))
        const ensure = Tables.once("armature_once_probe", make)
        const layer = DurableStore.sqlLayer({ _tag: "Postgres", url })
        yield* Effect.all(
          Array.from({ length: 8 }, () => ensure),
          { concurrency: "unbounded" }
        ).pipe(Effect.zipRight(ensure), Effect.provide(layer))
        expect(made).toBe(1)
        // another client (another process, a runner's second pool) makes its own
        yield* ensure.pipe(Effect.provide(layer))
        expect(made).toBe(2)
        const retried = yield* Effect.gen(function* () {
          const first = yield* Effect.exit(Tables.once("flaky", flaky))
          yield* Tables.once("flaky", flaky)
          return first
        }).pipe(Effect.provide(layer))
        expect(Exit.isFailure(retried)).toBe(true)
        expect(failures).toBe(-1)
      })
  )
})
