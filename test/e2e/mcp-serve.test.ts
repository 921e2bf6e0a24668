import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect } from "effect"

const root = Path.resolve(__dirname, "../..")

describe("armature mcp serve", () => {
  it.live(
    "round trip with the SDK's client: lists tools, calls Sleep, denies by mode and by rule",
    () =>
      Effect.gen(function* () {
        const cwd = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-mcp-serve-"))
        const stderr: Array<string> = []
        const transport = new StdioClientTransport({
          command: process.execPath,
          args: [
            Path.join(root, "bin/armature.mjs"),
            "mcp",
            "serve",
            "--cwd",
            cwd,
            "--setting-sources",
            "project",
            "--permission-mode",
            "plan",
            "--disallowed-tools",
            "WebFetch"
          ],
          env: { ...(process.env as Record<string, string>), ARMATURE_STATE_DIR: Path.join(cwd, ".state") },
          stderr: "pipe",
          cwd
        })
        transport.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk.toString()))
        const client = new Client({ name: "e2e", version: "1.0.0" })
        yield* Effect.acquireRelease(
          Effect.promise(() => client.connect(transport)),
          () => Effect.promise(() => client.close())
        )
        const { tools } = yield* Effect.promise(() => client.listTools())
        const names = tools.map((t) => t.name)
        expect(names).toContain("Sleep")
        expect(names).not.toContain("WebFetch")
        expect(tools.find((t) => t.name === "Sleep")?.annotations?.readOnlyHint).toBe(true)
        const call = (name: string, args: Record<string, unknown>) =>
          Effect.promise(() => client.callTool({ name, arguments: args }))
        expect(yield* call("Sleep", { duration_ms: 10 })).toEqual({
          content: [{ type: "text", text: "Slept for 10 ms" }]
        })
        expect(yield* call("TodoWrite", { todos: [] })).toEqual({
          content: [{ type: "text", text: "<tool_use_error>Plan mode: TodoWrite is not read-only</tool_use_error>" }],
          isError: true
        })
        const denied = yield* call("WebFetch", { url: "https://example.com" })
        expect(denied.isError).toBe(true)
        expect(JSON.stringify(denied.content)).toContain("WebFetch")
      }).pipe(Effect.scoped),
    120_000
  )
})
