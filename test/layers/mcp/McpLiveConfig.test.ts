import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as McpClientsLive from "../../../src/layers/mcp/McpClientsLive.js"
import * as ToolRegistryLive from "../../../src/layers/registry/ToolRegistryLive.js"
import * as SessionLive from "../../../src/layers/session/SessionLive.js"
import * as SettingsLoader from "../../../src/layers/settings/SettingsLoader.js"
import { McpClients } from "../../../src/services/McpClients.js"
import { fast, fixtureServer } from "../../fixtures/mcp/client.js"

/** How many times each server's process started (the fixture logs a `start` line to its FIXTURE_LOG). */
const starts = (dir: string, name: string): number => {
  const file = Path.join(dir, `${name}.log`)
  if (!Fs.existsSync(file)) return 0
  return Fs.readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.includes('"start"')).length
}

const server = (dir: string, name: string, extra: Record<string, string> = {}) =>
  fixtureServer({ FIXTURE_LOG: Path.join(dir, `${name}.log`), ...extra })

const writeConfig = (dir: string, servers: Record<string, unknown>) =>
  Fs.writeFileSync(Path.join(dir, ".mcp.json"), JSON.stringify({ mcpServers: servers }))

const connected = Effect.flatMap(McpClients, (m) => Effect.zipRight(m.ready, m.servers)).pipe(
  Effect.map((servers) => servers.map((s) => [s.name, s.state, s.connections]))
)

describe("a project's .mcp.json followed while the engine runs", () => {
  it.live(
    "servers added, removed or changed are started, stopped or restarted; the others are not touched",
    () => {
      const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-mcp-live-")))
      Fs.mkdirSync(Path.join(dir, ".claude"))
      Fs.writeFileSync(
        Path.join(dir, ".claude", "settings.local.json"),
        JSON.stringify({ enableAllProjectMcpServers: true })
      )
      writeConfig(dir, { one: server(dir, "one"), two: server(dir, "two"), four: server(dir, "four") })
      const notices: Array<string> = []
      const layer = McpClientsLive.layerFromSources(
        { projectDir: dir, notice: (l) => notices.push(l) },
        fast,
        true
      ).pipe(
        Layer.provideMerge(ToolRegistryLive.layer),
        Layer.provideMerge(SessionLive.layer({ cwd: dir, stateDir: Path.join(dir, ".state") })),
        Layer.provideMerge(SettingsLoader.layer({ projectDir: dir, cwd: dir, settingSources: ["project", "local"] })),
        Layer.provideMerge(NodeContext.layer)
      )
      return Effect.gen(function* () {
        expect(yield* connected).toEqual([
          ["one", "connected", 1],
          ["two", "connected", 1],
          ["four", "connected", 1]
        ])
        // one removed, two's entry changed, three added, four as it was
        const next = {
          two: server(dir, "two", { FIXTURE_PAGE_SIZE: "1" }),
          four: server(dir, "four"),
          three: server(dir, "three")
        }
        // written until seen: the watch is armed by a fiber of its own
        for (let i = 0; i < 100; i++) {
          writeConfig(dir, next)
          yield* Effect.sleep("300 millis")
          const names = (yield* Effect.flatMap(McpClients, (m) => m.servers)).map((s) => s.name)
          if (names.join() === "two,four,three") break
        }
        expect(yield* connected).toEqual([
          ["two", "connected", 1],
          ["four", "connected", 1],
          ["three", "connected", 1]
        ])
        expect([starts(dir, "one"), starts(dir, "two"), starts(dir, "three"), starts(dir, "four")]).toEqual([
          1, 2, 1, 1
        ])
        // a broken edit keeps the servers running
        Fs.writeFileSync(Path.join(dir, ".mcp.json"), '{"mcpServers": {')
        yield* Effect.sleep("1 second")
        expect((yield* connected).map(([name]) => name)).toEqual(["two", "four", "three"])
      }).pipe(
        Effect.provide(layer),
        Effect.ensuring(Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true })))
      )
    },
    180_000
  )
})
