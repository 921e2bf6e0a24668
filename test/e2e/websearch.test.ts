/**
 * `armature run` with WebSearch, over the scripted Messages server: with an allow rule the request's tools end with
 * Anthropic's `web_search` server tool and the settings' limits; the model's server_tool_use and
 * web_search_tool_result blocks are kept and sent back unchanged; a deny rule or an ask rule (nobody can be asked
 * for a search the API runs) leaves it out, the ask with a note; a `webSearch` of the wrong shape is a usage error.
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as MessagesServer from "../fixtures/MessagesServer.js"

const bin = Path.resolve(__dirname, "../../bin/armature.mjs")

const armature = (args: ReadonlyArray<string>, env: Record<string, string | undefined>) =>
  Effect.async<{ code: number | null; stdout: string; stderr: string }>((resume) => {
    const child = ChildProcess.spawn(process.execPath, [bin, "run", ...args], {
      env: { ...process.env, ANTHROPIC_API_KEY: "dummy", ANTHROPIC_MODEL: undefined, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout!.on("data", (d: Buffer) => {
      stdout += d.toString("utf8")
    })
    child.stderr!.on("data", (d: Buffer) => {
      stderr += d.toString("utf8")
    })
    child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
    return Effect.sync(() => child.kill("SIGKILL"))
  })

/** A project whose settings are `settings`. */
const project = (settings: unknown) => {
  const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-websearch-")))
  Fs.mkdirSync(Path.join(dir, ".claude"))
  Fs.writeFileSync(Path.join(dir, ".claude", "settings.json"), JSON.stringify(settings))
  return { dir, env: { ARMATURE_STATE_DIR: Path.join(dir, ".armature"), HOME: dir } }
}

const search = { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "effect ts" } } as const
const found = {
  type: "web_search_tool_result",
  tool_use_id: "srvtoolu_1",
  content: [
    {
      type: "web_search_result",
      url: "https://effect.website/",
      title: "Effect",
      encrypted_content: "EqgfCioIARgBIiQ3",
      page_age: null
    }
  ]
} as const

describe("armature run: WebSearch", () => {
  it.scopedLive(
    "allowed: web_search is offered with the settings' limits, and its blocks go back unchanged",
    () =>
      Effect.gen(function* () {
        const { dir, env } = project({
          permissions: { allow: ["WebSearch"] },
          webSearch: { maxUses: 3, allowedDomains: ["effect.website"] }
        })
        const server = yield* MessagesServer.make([
          MessagesServer.message([search, found, { type: "text", text: "Effect is a TypeScript library." }], {
            stopReason: "pause_turn"
          }),
          MessagesServer.message([{ type: "text", text: "Done." }])
        ])
        const out = yield* armature(["what is effect", "--output", "json", "--cwd", dir], {
          ...env,
          ANTHROPIC_BASE_URL: server.url
        })
        expect(out.code, out.stderr).toBe(0)
        expect(out.stderr).not.toContain("WebSearch")
        const tools = server.requests[0].body.tools ?? []
        expect(tools.at(-1)).toEqual({
          type: "web_search_20250305",
          name: "web_search",
          max_uses: 3,
          allowed_domains: ["effect.website"]
        })
        // the paused turn is continued with the assistant's blocks exactly as the API sent them
        expect(server.requests).toHaveLength(2)
        expect(server.requests[1].body.messages.at(-1)).toEqual({
          role: "assistant",
          content: [search, found, { type: "text", text: "Effect is a TypeScript library." }]
        })
        // and the transcript keeps them for a resumed session
        const sessionId = JSON.parse(out.stdout).session_id as string
        const transcript = Fs.readFileSync(Path.join(dir, ".armature", "transcripts", `${sessionId}.jsonl`), "utf8")
        expect(transcript).toContain('"encrypted_content":"EqgfCioIARgBIiQ3"')
      }),
    120_000
  )

  it.scopedLive(
    "denied: not offered; asked: not offered, with a note naming the rule; no rule: not offered",
    () =>
      Effect.gen(function* () {
        for (const [settings, note] of [
          [{ permissions: { deny: ["WebSearch"] }, webSearch: {} }, undefined],
          [{ permissions: { ask: ["WebSearch"] } }, "WebSearch is not offered: rule WebSearch"],
          [{ webSearch: { maxUses: 1 } }, "WebSearch is configured (webSearch) but not offered"],
          [{}, undefined]
        ] as const) {
          const { dir, env } = project(settings)
          const server = yield* MessagesServer.make([MessagesServer.message([{ type: "text", text: "ok" }])])
          const out = yield* armature(["hi", "--cwd", dir], { ...env, ANTHROPIC_BASE_URL: server.url })
          expect(out.code, out.stderr).toBe(0)
          const names = (server.requests[0].body.tools ?? []).map((t) => String(t.name))
          expect(names).not.toContain("web_search")
          if (note === undefined) expect(out.stderr).not.toContain("WebSearch")
          else expect(out.stderr).toContain(note)
        }
      }),
    180_000
  )

  it.scopedLive(
    "a webSearch of the wrong shape is a usage error naming the field",
    () =>
      Effect.gen(function* () {
        const { dir, env } = project({ permissions: { allow: ["WebSearch"] }, webSearch: { maxUses: "three" } })
        const server = yield* MessagesServer.make([])
        const out = yield* armature(["hi", "--cwd", dir], { ...env, ANTHROPIC_BASE_URL: server.url })
        expect(out.code).toBe(2)
        expect(out.stderr).toContain("webSearch:")
        expect(out.stderr).toContain("maxUses")
        expect(server.requests).toHaveLength(0)
      }),
    120_000
  )
})
