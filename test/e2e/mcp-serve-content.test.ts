/**
 * `armature mcp serve` offers the working directory's files as resources (a file denied by a Read rule is neither
 * listed nor readable), a file template with path completions, change notifications for a subscribed file, and the
 * project's agents and skills as prompts with completions for their arguments — over stdio and Streamable HTTP,
 * through the SDK's own client.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"

const bin = Path.resolve(import.meta.dirname, "../../bin/armature.mjs")

/** A project with two files, a secret denied by a Read rule, an agent and a skill. */
const setup = () => {
  const cwd = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-mcp-content-")))
  Fs.mkdirSync(Path.join(cwd, "src"))
  Fs.writeFileSync(Path.join(cwd, "README.md"), "# Project\n")
  Fs.writeFileSync(Path.join(cwd, "src", "main.ts"), "export const x = 1\n")
  Fs.writeFileSync(Path.join(cwd, ".env"), "TOKEN=secret\n")
  Fs.mkdirSync(Path.join(cwd, ".claude", "agents"), { recursive: true })
  Fs.writeFileSync(
    Path.join(cwd, ".claude", "settings.json"),
    JSON.stringify({ permissions: { deny: ["Read(./.env)"] } })
  )
  Fs.writeFileSync(
    Path.join(cwd, ".claude", "agents", "reviewer.md"),
    "---\nname: reviewer\ndescription: Reviews code\n---\nYou review code.\n"
  )
  Fs.mkdirSync(Path.join(cwd, ".claude", "skills", "notes"), { recursive: true })
  Fs.writeFileSync(
    Path.join(cwd, ".claude", "skills", "notes", "SKILL.md"),
    "---\ndescription: Writes notes\n---\nWrite notes about $ARGUMENTS.\n"
  )
  const env = { ...(process.env as Record<string, string>), HOME: cwd, ARMATURE_STATE_DIR: Path.join(cwd, ".state") }
  return { cwd, env, args: ["mcp", "serve", "--cwd", cwd] }
}

const startHttp = (cwd: string, env: Record<string, string>, args: ReadonlyArray<string>) => {
  const child = spawn(process.execPath, [bin, ...args, "--http", "0"], {
    cwd,
    env,
    stdio: ["ignore", "ignore", "pipe"]
  })
  return new Promise<{ child: ChildProcess; url: URL }>((resolve, reject) => {
    let err = ""
    child.stderr?.on("data", (chunk: Buffer) => {
      err += chunk.toString()
      const match = /listening on (http:\/\/\S+)/.exec(err)
      if (match) resolve({ child, url: new URL(match[1]) })
    })
    child.on("exit", (code) => reject(new Error(`exited ${code}: ${err}`)))
  })
}

const check = async (cwd: string, transport: Transport) => {
  const client = new Client({ name: "e2e", version: "1.0.0" })
  const updated: Array<string> = []
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, async (n) => {
    updated.push(n.params.uri)
  })
  await client.connect(transport)
  try {
    expect(client.getServerCapabilities()).toMatchObject({
      resources: { subscribe: true },
      prompts: {},
      completions: {}
    })
    const main = `file://${Path.join(cwd, "src", "main.ts")}`
    const { resources } = await client.listResources()
    const names = resources.map((r) => r.name)
    expect(names).toContain("README.md")
    expect(names).toContain(Path.join("src", "main.ts"))
    expect(names).toContain(Path.join(".claude", "settings.json"))
    expect(names).not.toContain(".env")
    expect(resources.find((r) => r.name === "README.md")).toEqual({
      uri: `file://${Path.join(cwd, "README.md")}`,
      name: "README.md",
      mimeType: "text/markdown"
    })
    expect(await client.readResource({ uri: main })).toEqual({
      contents: [{ uri: main, mimeType: "text/typescript", text: "export const x = 1\n" }]
    })
    await expect(client.readResource({ uri: `file://${Path.join(cwd, ".env")}` })).rejects.toThrow(/Resource not found/)
    await expect(client.readResource({ uri: "file:///etc/passwd" })).rejects.toThrow(/Resource not found/)
    const { resourceTemplates } = await client.listResourceTemplates()
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(["file:///{path}"])
    const paths = await client.complete({
      ref: { type: "ref/resource", uri: "file:///{path}" },
      argument: { name: "path", value: `${cwd.slice(1)}/src/` }
    })
    expect(paths.completion.values).toEqual([`${cwd.slice(1)}/src/main.ts`])
    const hidden = await client.complete({
      ref: { type: "ref/resource", uri: "file:///{path}" },
      argument: { name: "path", value: `${cwd.slice(1)}/.e` }
    })
    expect(hidden.completion.values).toEqual([])

    const { prompts } = await client.listPrompts()
    expect(prompts.map((p) => p.name)).toEqual(["agent:general-purpose", "agent:reviewer", "skill:notes"])
    expect(prompts.find((p) => p.name === "skill:notes")?.arguments).toEqual([
      { name: "args", description: "Arguments for the skill" }
    ])
    const review = await client.getPrompt({ name: "agent:reviewer", arguments: { task: "check main.ts" } })
    expect(review.messages).toEqual([
      { role: "user", content: { type: "text", text: "You review code.\n\nTask: check main.ts" } }
    ])
    const notes = await client.getPrompt({ name: "skill:notes", arguments: { args: "the release" } })
    expect(notes.messages[0].content).toEqual({
      type: "text",
      text: `Base directory for this skill: ${Path.join(cwd, ".claude", "skills", "notes")}\n\nWrite notes about the release.`
    })
    const models = await client.complete({
      ref: { type: "ref/prompt", name: "agent:reviewer" },
      argument: { name: "model", value: "h" }
    })
    expect(models.completion.values).toEqual(["haiku"])

    await client.subscribeResource({ uri: main })
    // the watch is set up when subscribe answers; a change is then reported (waited for, not timed)
    Fs.writeFileSync(Path.join(cwd, "src", "main.ts"), "export const x = 2\n")
    for (let i = 0; i < 600 && updated.length === 0; i++) await new Promise((r) => setTimeout(r, 50))
    expect(updated[0]).toBe(main)
    await client.unsubscribeResource({ uri: main })
  } finally {
    await client.close()
  }
}

describe("armature mcp serve: resources, prompts, completions", () => {
  it("over stdio", { timeout: 120_000 }, async () => {
    const { cwd, env, args } = setup()
    await check(
      cwd,
      new StdioClientTransport({ command: process.execPath, args: [bin, ...args], env, cwd, stderr: "ignore" })
    )
  })

  it("over Streamable HTTP", { timeout: 120_000 }, async () => {
    const { cwd, env, args } = setup()
    const { child, url } = await startHttp(cwd, env, args)
    try {
      await check(cwd, new StreamableHTTPClientTransport(url))
    } finally {
      child.kill("SIGTERM")
    }
  })
})
