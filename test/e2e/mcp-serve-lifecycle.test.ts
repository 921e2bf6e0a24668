import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"

const root = Path.resolve(import.meta.dirname, "../..")
const bin = Path.join(root, "bin/armature.mjs")
const fixture = Path.join(root, "test/fixtures/mcp/server.ts")

/** The pids of every live (non-zombie) descendant of `pid`, read from /proc. */
const descendants = (pid: number): ReadonlyArray<number> => {
  const parents = new Map<number, number>()
  for (const entry of Fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = Fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      if (fields[0] !== "Z") parents.set(Number(entry), Number(fields[1]))
    } catch {
      // gone meanwhile
    }
  }
  const found: Array<number> = []
  const walk = (parent: number) => {
    for (const [child, ppid] of parents) {
      if (ppid === parent) {
        found.push(child)
        walk(child)
      }
    }
  }
  walk(pid)
  return found
}

const alive = (pid: number): boolean => {
  try {
    const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z"
  } catch {
    return false
  }
}

interface Served {
  readonly child: ChildProcessWithoutNullStreams
  readonly send: (message: Record<string, unknown>) => void
  readonly line: (raw: string) => void
  /** Resolves with the first message matching `predicate` (already received or to come). */
  readonly next: (predicate: (message: Record<string, unknown>) => boolean) => Promise<Record<string, unknown>>
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>
  readonly stderr: () => string
}

const serve = (args: ReadonlyArray<string>): Served => {
  const cwd = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-mcp-life-"))
  const config = Path.join(cwd, "servers.json")
  Fs.writeFileSync(
    config,
    JSON.stringify({ mcpServers: { fx: { command: process.execPath, args: ["--import", "tsx", fixture], cwd: root } } })
  )
  const child = spawn(process.execPath, [bin, "mcp", "serve", "--cwd", cwd, "--mcp-config", config, ...args], {
    cwd,
    env: { ...process.env, HOME: cwd, ARMATURE_STATE_DIR: Path.join(cwd, ".state") }
  })
  const messages: Array<Record<string, unknown>> = []
  const waiters: Array<() => void> = []
  let buffer = ""
  let stderr = ""
  child.stdout.on("data", (chunk: Buffer) => {
    buffer += chunk.toString()
    const lines = buffer.split("\n")
    buffer = lines.pop() ?? ""
    for (const l of lines) if (l.trim() !== "") messages.push(JSON.parse(l) as Record<string, unknown>)
    for (const w of waiters.splice(0)) w()
  })
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const next = (predicate: (message: Record<string, unknown>) => boolean) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const look = () => {
        const found = messages.find(predicate)
        if (found !== undefined) resolve(found)
        else waiters.push(look)
      }
      look()
    })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal, at: Date.now() }))
  )
  return {
    child,
    send: (message) => child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`),
    line: (raw) => child.stdin.write(`${raw}\n`),
    next,
    exited,
    stderr: () => stderr
  }
}

/** Initializes, then starts a background shell, an in-flight Sleep, and waits for the proxied server's tools. */
const busy = async (served: Served) => {
  served.send({
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } }
  })
  await served.next((m) => m.id === 1)
  served.send({ method: "notifications/initialized" })
  // the proxied server's tools appear once it is connected
  for (let id = 100; ; id++) {
    served.send({ id, method: "tools/list" })
    const listed = (await served.next((m) => m.id === id)) as { result: { tools: Array<{ name: string }> } }
    if (listed.result.tools.some((t) => t.name === "mcp__fx__peek")) break
    await new Promise((r) => setTimeout(r, 100))
  }
  served.send({
    id: 2,
    method: "tools/call",
    params: { name: "Bash", arguments: { command: "sleep 300", run_in_background: true } }
  })
  const started = (await served.next((m) => m.id === 2)) as { result: { isError?: boolean } }
  expect(started.result.isError, JSON.stringify(started)).toBeUndefined()
  served.send({ id: 3, method: "tools/call", params: { name: "Sleep", arguments: { duration_ms: 300_000 } } })
  served.send({ id: 4, method: "tools/call", params: { name: "mcp__fx__peek", arguments: { ms: 300_000 } } })
  const pid = served.child.pid ?? 0
  // the background shell (sleep 300) and the proxied server are descendants
  let before: ReadonlyArray<number> = []
  for (let i = 0; i < 100 && before.length < 2; i++) {
    await new Promise((r) => setTimeout(r, 50))
    before = descendants(pid)
  }
  expect(before.length).toBeGreaterThanOrEqual(2)
  return before
}

describe("armature mcp serve: lifecycle", () => {
  it("exits soon after stdin ends, cancelling calls in flight and leaving no child behind", async () => {
    const served = serve(["--permission-mode", "bypassPermissions"])
    const before = await busy(served)
    const closedAt = Date.now()
    served.child.stdin.end()
    const exit = await served.exited
    expect(exit.code, served.stderr()).toBe(0)
    // Generous for a loaded machine; typically well under a second (docs/mcp.md).
    expect(exit.at - closedAt).toBeLessThan(5000)
    await new Promise((r) => setTimeout(r, 100))
    expect(before.filter(alive)).toEqual([])
  }, 120_000)

  it("exits on SIGTERM and on SIGINT, leaving no child behind", async () => {
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      const served = serve(["--permission-mode", "bypassPermissions"])
      const before = await busy(served)
      served.child.kill(signal)
      const exit = await served.exited
      expect([exit.code, exit.signal], served.stderr()).not.toEqual([null, "SIGKILL"])
      await new Promise((r) => setTimeout(r, 100))
      expect(before.filter(alive)).toEqual([])
    }
  }, 180_000)

  it("answers garbage with JSON-RPC errors and keeps serving", async () => {
    const served = serve([])
    served.line("this is not json")
    expect(await served.next(() => true)).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32700, message: expect.stringMatching(/^Parse error/) }
    })
    served.line(JSON.stringify({ id: 7, hello: "world" }))
    expect(await served.next((m) => m.id === 7)).toEqual({
      jsonrpc: "2.0",
      id: 7,
      error: { code: -32600, message: "Invalid Request: not a JSON-RPC 2.0 message" }
    })
    served.send({ id: 8, method: "ping" })
    expect(await served.next((m) => m.id === 8)).toEqual({ jsonrpc: "2.0", id: 8, result: {} })
    served.child.stdin.end()
    expect((await served.exited).code).toBe(0)
  }, 120_000)
})
