import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { PassThrough } from "node:stream"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as McpClientsLive from "../../../src/layers/mcp/McpClientsLive.js"
import * as TerminalApprover from "../../../src/layers/permissions/TerminalApprover.js"
import * as ToolRegistryLive from "../../../src/layers/registry/ToolRegistryLive.js"
import * as SessionLive from "../../../src/layers/session/SessionLive.js"
import * as SettingsLoader from "../../../src/layers/settings/SettingsLoader.js"
import * as TreeSitterShellAnalyzer from "../../../src/layers/shell/TreeSitterShellAnalyzer.js"
import * as Approver from "../../../src/services/Approver.js"
import { McpClients } from "../../../src/services/McpClients.js"
import { fast, fixtureServer } from "../../fixtures/mcp/client.js"

/** A project whose .mcp.json names the fixture server three times; "three" is disabled in the local settings. */
const project = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-mcp-approve-"))
  const server = fixtureServer()
  Fs.writeFileSync(
    Path.join(dir, ".mcp.json"),
    JSON.stringify({ mcpServers: { one: server, two: server, three: server } })
  )
  Fs.mkdirSync(Path.join(dir, ".claude"))
  Fs.writeFileSync(
    Path.join(dir, ".claude", "settings.local.json"),
    JSON.stringify({ model: "kept", disabledMcpjsonServers: ["three"] })
  )
  return dir
}

const localSettings = (dir: string) =>
  JSON.parse(Fs.readFileSync(Path.join(dir, ".claude", "settings.local.json"), "utf8")) as Record<string, unknown>

/** The client side of `dir`'s .mcp.json, with `approver`, the settings of the project and a notice collector. */
const clients = <E, R>(
  dir: string,
  approver: Layer.Layer<Approver.Approver, E, R>,
  notices: Array<string>,
  mcpConfigFiles: ReadonlyArray<string> = []
) =>
  McpClientsLive.layerFromSources({ projectDir: dir, notice: (line) => notices.push(line), mcpConfigFiles }, fast).pipe(
    Layer.provide(approver),
    Layer.provideMerge(ToolRegistryLive.layer),
    Layer.provideMerge(SessionLive.layer({ cwd: dir, stateDir: Path.join(dir, ".state") })),
    Layer.provideMerge(SettingsLoader.layer({ projectDir: dir, cwd: dir, settingSources: ["project", "local"] })),
    Layer.provideMerge(NodeContext.layer)
  )

const terminal = (dir: string, answers: ReadonlyArray<string>) => {
  const input = new PassThrough()
  const output = new PassThrough()
  let written = ""
  output.on("data", (chunk) => {
    written += String(chunk)
  })
  for (const line of answers) input.write(`${line}\n`)
  input.end()
  const layer = TerminalApprover.layerWith({ input, output }).pipe(
    Layer.provide(TreeSitterShellAnalyzer.layer),
    Layer.provide(SettingsLoader.layer({ projectDir: dir, cwd: dir, settingSources: [] }))
  )
  return { layer, output: () => written }
}

const started = Effect.flatMap(McpClients, (m) => Effect.zipRight(m.ready, m.servers)).pipe(
  Effect.map((servers) => servers.map((s) => [s.name, s.state]))
)

describe("a project's .mcp.json approved on the terminal", () => {
  it.live("each open server is asked about; the answers decide what starts and are remembered", () => {
    const dir = project()
    const notices: Array<string> = []
    const term = terminal(dir, ["n", "y"])
    return Effect.gen(function* () {
      expect(yield* started).toEqual([["two", "connected"]])
      const file = Path.join(dir, ".mcp.json")
      expect(term.output()).toEqual(
        [
          `New MCP server found in ${file}: one (${process.execPath} --import tsx ${fixtureServer().args[2]})`,
          "[y] use this server  [a] use this and all future servers of this project's .mcp.json  [n] do not use it ",
          `New MCP server found in ${file}: two (${process.execPath} --import tsx ${fixtureServer().args[2]})`,
          "[y] use this server  [a] use this and all future servers of this project's .mcp.json  [n] do not use it "
          // (the answers come from a pipe, so no newline is echoed after each question)
        ]
          .join("\n")
          .replace("do not use it \nNew", "do not use it New")
      )
      expect(localSettings(dir)).toEqual({
        model: "kept",
        disabledMcpjsonServers: ["three", "one"],
        enabledMcpjsonServers: ["two"]
      })
      expect(notices).toEqual([])
    }).pipe(Effect.provide(clients(dir, term.layer, notices)))
  })

  it.live("a: this server and every other open one start, and enableAllProjectMcpServers is remembered", () => {
    const dir = project()
    const term = terminal(dir, ["a"])
    return Effect.gen(function* () {
      expect(yield* started).toEqual([
        ["one", "connected"],
        ["two", "connected"]
      ])
      expect(term.output().match(/New MCP server/g)?.length).toEqual(1)
      expect(localSettings(dir)).toEqual({
        model: "kept",
        disabledMcpjsonServers: ["three"],
        enabledMcpjsonServers: ["one", "two"],
        enableAllProjectMcpServers: true
      })
    }).pipe(Effect.provide(clients(dir, term.layer, [])))
  })

  it.live("headless nothing is asked or written: the servers stay off, with the one-line notice", () => {
    const dir = project()
    const notices: Array<string> = []
    return Effect.gen(function* () {
      expect(yield* started).toEqual([])
      expect(notices.length).toEqual(1)
      expect(notices[0]).toContain('not starting MCP servers "one", "two"')
      expect(localSettings(dir)).toEqual({ model: "kept", disabledMcpjsonServers: ["three"] })
    }).pipe(Effect.provide(clients(dir, Approver.headless, notices)))
  })

  it.live("a project server replaced by a --mcp-config file is neither asked about nor reported", () => {
    const dir = project()
    const extra = Path.join(dir, "extra.json")
    Fs.writeFileSync(extra, JSON.stringify({ mcpServers: { one: fixtureServer() } }))
    const notices: Array<string> = []
    const term = terminal(dir, ["n"])
    return Effect.gen(function* () {
      expect(yield* started).toEqual([["one", "connected"]])
      expect(term.output()).toContain(": two (")
      expect(term.output()).not.toContain(": one (")
      expect(localSettings(dir)).toEqual({ model: "kept", disabledMcpjsonServers: ["three", "two"] })
      expect(notices).toEqual([])
    }).pipe(Effect.provide(clients(dir, term.layer, notices, [extra])))
  })
})
