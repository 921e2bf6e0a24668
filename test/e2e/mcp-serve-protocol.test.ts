import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { LoggingMessageNotificationSchema, McpError } from "@modelcontextprotocol/sdk/types.js"

const root = Path.resolve(import.meta.dirname, "../..")
const bin = Path.join(root, "bin/armature.mjs")

const setup = () => {
  const cwd = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-mcp-proto-"))
  const env = { ...(process.env as Record<string, string>), HOME: cwd, ARMATURE_STATE_DIR: Path.join(cwd, ".state") }
  const args = ["mcp", "serve", "--cwd", cwd, "--permission-mode", "bypassPermissions"]
  return { cwd, env, args }
}

/** Starts `mcp serve --http 0` and resolves with its URL once it listens. */
const startHttp = (): Promise<{ child: ChildProcess; url: URL }> => {
  const { cwd, env, args } = setup()
  const child = spawn(process.execPath, [bin, ...args, "--http", "0"], {
    cwd,
    env,
    stdio: ["ignore", "ignore", "pipe"]
  })
  return new Promise((resolve, reject) => {
    let err = ""
    child.stderr?.on("data", (chunk: Buffer) => {
      err += chunk.toString()
      const match = /listening on (http:\/\/\S+)/.exec(err)
      if (match) resolve({ child, url: new URL(match[1]) })
    })
    child.on("exit", (code) => reject(new Error(`exited ${code}: ${err}`)))
  })
}

/** What every transport must show: annotations, -32602, progress with total, engine logs after setLevel. */
const checkProtocol = async (transport: Transport) => {
  const client = new Client({ name: "e2e", version: "1.0.0" })
  const logs: Array<{ level: string; data: unknown }> = []
  client.setNotificationHandler(LoggingMessageNotificationSchema, async (n) => {
    logs.push({ level: n.params.level, data: n.params.data })
  })
  await client.connect(transport)
  try {
    expect(client.getServerCapabilities()?.logging).toEqual({})
    const { tools } = await client.listTools()
    const byName = new Map(tools.map((t) => [t.name, t.annotations]))
    expect(byName.get("Bash")).toEqual({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true
    })
    expect(byName.get("Read")).toEqual({
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false
    })
    for (const name of ["Write", "Edit", "KillShell"]) expect(byName.get(name)?.destructiveHint).toBe(true)

    const unknown = await client.callTool({ name: "NoSuchTool", arguments: {} }).then(
      () => undefined,
      (e: unknown) => e
    )
    expect(unknown).toBeInstanceOf(McpError)
    expect((unknown as McpError).code).toBe(-32602)

    const progress: Array<{ progress: number; total?: number }> = []
    const slept = await client.callTool({ name: "Sleep", arguments: { duration_ms: 1200 } }, undefined, {
      onprogress: (p) => progress.push(p)
    })
    expect(slept.content).toEqual([{ type: "text", text: "Slept for 1200 ms" }])
    expect(progress.length).toBeGreaterThanOrEqual(1)
    expect(progress[0]).toMatchObject({ total: 1200 })

    // The engine logs each call at debug level: relayed only once the client asks for debug.
    const logged = (tool: string) => logs.filter((l) => JSON.stringify(l.data).includes(`tools/call ${tool}`))
    await client.callTool({ name: "Sleep", arguments: { duration_ms: 1 } })
    await client.setLoggingLevel("debug")
    await client.callTool({ name: "Glob", arguments: { pattern: "*.none" } })
    await client.setLoggingLevel("error")
    await client.callTool({ name: "TodoWrite", arguments: { todos: [] } })
    await client.callTool({ name: "Sleep", arguments: { duration_ms: 1 } })
    expect(logged("Glob").map((l) => l.level)).toEqual(["debug"])
    expect(logged("TodoWrite")).toEqual([])
    expect(logs.filter((l) => l.level === "debug").length).toBe(1)
  } finally {
    await client.close()
  }
}

describe("armature mcp serve under the SDK's client", () => {
  it("over stdio: annotations, -32602, progress with total, logging", async () => {
    const { cwd, env, args } = setup()
    await checkProtocol(new StdioClientTransport({ command: process.execPath, args: [bin, ...args], env, cwd }))
  }, 120_000)

  it("over Streamable HTTP on 127.0.0.1: the same, and DNS rebinding refused", async () => {
    const { child, url } = await startHttp()
    try {
      expect(url.hostname).toBe("127.0.0.1")
      expect(url.pathname).toBe("/mcp")
      await checkProtocol(new StreamableHTTPClientTransport(url))
      const initialize = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } }
      })
      const post = (headers: Record<string, string>) =>
        fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
          body: initialize
        })
      expect((await post({ Origin: "http://evil.example" })).status).toBe(403)
      expect((await post({ Origin: `http://localhost:${url.port}` })).status).toBe(200)
      // fetch sets Host itself; a raw request can lie about it
      const Http = await import("node:http")
      const status = await new Promise<number | undefined>((resolve) => {
        const req = Http.request(
          { host: "127.0.0.1", port: url.port, path: "/mcp", method: "POST", headers: { host: "rebound.example" } },
          (res) => resolve(res.statusCode)
        )
        req.end(initialize)
      })
      expect(status).toBe(403)
    } finally {
      child.kill("SIGTERM")
      await new Promise((r) => child.once("exit", r))
    }
  }, 120_000)
})
