import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { McpClients } from "../../../src/services/McpClients.js"
import { ToolRegistry } from "../../../src/services/ToolRegistry.js"
import { call, clientLayer, fixtureServer, ready, textOf } from "../../fixtures/mcp/client.js"

const logFile = () => Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-mcp-pages-")), "log.jsonl")

const cursorsIn = (file: string): ReadonlyArray<string | null> =>
  Fs.readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { event: string; cursor?: string | null })
    .filter((e) => e.event === "tools/list")
    .map((e) => e.cursor ?? null)

describe("McpClientsLive tools/list pagination", () => {
  it.live("follows nextCursor page after page and registers every tool of every page", () => {
    const log = logFile()
    return Effect.gen(function* () {
      yield* ready
      const names = (yield* Effect.flatMap(ToolRegistry, (r) => r.all)).map((t) => t.name)
      expect(names.filter((n) => n.startsWith("mcp__")).length).toEqual(12)
      expect(names).toContain("mcp__paged__image")
      // 12 tools in pages of 2: six requests, each after the first with the cursor the previous page gave
      expect(cursorsIn(log)).toEqual([null, "2", "4", "6", "8", "10"])
      expect(textOf(yield* call("mcp__paged__write", { text: "paged" }))).toEqual("wrote paged")
    }).pipe(Effect.provide(clientLayer({ paged: fixtureServer({ FIXTURE_PAGE_SIZE: "2", FIXTURE_LOG: log }) })))
  })

  it.live("a server whose cursor comes back again fails to connect instead of paging forever", () =>
    Effect.gen(function* () {
      yield* ready
      const [status] = yield* Effect.flatMap(McpClients, (m) => m.servers)
      expect(status.state).toEqual("failed")
      expect(status.lastError).toEqual('tools/list returned the cursor "3" twice')
      const names = (yield* Effect.flatMap(ToolRegistry, (r) => r.all)).map((t) => t.name)
      expect(names.filter((n) => n.startsWith("mcp__"))).toEqual([])
    }).pipe(Effect.provide(clientLayer({ looping: fixtureServer({ FIXTURE_PAGE_SIZE: "3", FIXTURE_PAGE_LOOP: "1" }) })))
  )
})
