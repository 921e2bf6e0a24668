import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as DurableStore from "../../../src/layers/durable/DurableStore.js"
import * as Postgres from "../../fixtures/Postgres.js"

/** What the server says a setting of the connection is. */
const show = (url: string, setting: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<Record<string, string>>(`SHOW ${setting}`)).pipe(
    Effect.map((rows) => rows[0]?.[setting]),
    Effect.provide(DurableStore.sqlLayer({ _tag: "Postgres", url })),
    Effect.scoped
  )

describe("DurableStore: the database server drops a connection whose client stopped answering", () => {
  it.scoped("a runner's connections ask the server for keepalives and a user timeout; the URL's own options win", () =>
    Effect.gen(function* () {
      const database = yield* Postgres.freshDatabase("armature_keepalives")
      expect(yield* show(database, "tcp_keepalives_idle")).toBe("1")
      expect(yield* show(database, "tcp_keepalives_interval")).toBe("1")
      expect(yield* show(database, "tcp_keepalives_count")).toBe("2")
      expect(yield* show(database, "tcp_user_timeout")).toBe("2000")
      const own = new URL(database)
      own.searchParams.set("options", "-c tcp_keepalives_idle=7")
      expect(yield* show(own.toString(), "tcp_keepalives_idle")).toBe("7")
      expect(yield* show(own.toString(), "tcp_user_timeout")).toBe("2000")
    })
  )
})
