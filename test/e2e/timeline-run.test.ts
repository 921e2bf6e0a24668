/**
 * `armature run --timeline` against the scripted Messages server: a page with one section per turn, the model's
 * stream as a row, one row per call; the session transcript keeps the call log (states, decisions, the stream), so
 * `armature timeline` draws the same rows from it.
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as MessagesServer from "../fixtures/MessagesServer.js"

const bin = Path.resolve(import.meta.dirname, "../../bin/armature.mjs")

/** Runs the CLI without blocking this process (the scripted server answers from it). */
const armature = (args: ReadonlyArray<string>, env: Record<string, string | undefined>) =>
  Effect.async<{ status: number | null; stdout: string }>((resume) => {
    const child = ChildProcess.spawn(process.execPath, [bin, ...args], {
      env: { ...process.env, ANTHROPIC_MODEL: undefined, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString("utf8")
    })
    child.on("close", (status) => resume(Effect.succeed({ status, stdout })))
    return Effect.sync(() => child.kill("SIGKILL"))
  })

const sleep = (id: string, ms: number): MessagesServer.ScriptBlock => ({
  type: "tool_use",
  id,
  name: "Sleep",
  input: { duration_ms: ms }
})

describe("armature run --timeline", () => {
  it.scopedLive(
    "one section per turn with the model's stream, one row per call; the transcript renders the same",
    () =>
      Effect.gen(function* () {
        const server = yield* MessagesServer.make([
          MessagesServer.message([sleep("toolu_a", 30), sleep("toolu_b", 10)], { pacingMs: 5, chunk: 4 }),
          MessagesServer.message([{ type: "text", text: "Both slept." }])
        ])
        const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-timeline-run-")))
        const env = {
          ARMATURE_STATE_DIR: Path.join(dir, ".armature"),
          HOME: dir,
          ANTHROPIC_API_KEY: "dummy",
          ANTHROPIC_BASE_URL: server.url
        }
        const page = Path.join(dir, "run.html")
        const out = yield* armature(["run", "sleep twice", "--output", "json", "--cwd", dir, "--timeline", page], env)
        expect(out.status).toBe(0)
        const sessionId = String((JSON.parse(out.stdout) as { session_id: string }).session_id)
        const html = Fs.readFileSync(page, "utf8")
        expect(html.match(/<section>/g)).toHaveLength(2)
        expect(html.match(/class="row model-row"/g)).toHaveLength(2)
        expect([...html.matchAll(/class="row call (\w+)-row" data-id="([^"]+)"/g)].map((m) => [m[2], m[1]])).toEqual([
          ["toolu_a", "ok"],
          ["toolu_b", "ok"]
        ])

        const transcript = Path.join(dir, ".armature", "transcripts", `${sessionId}.jsonl`)
        const recorded = Fs.readFileSync(transcript, "utf8")
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l) as Record<string, unknown>)
        const types = new Set(recorded.map((l) => l.type))
        for (const t of ["tool_state", "permission_decision", "model_stream", "assistant", "user"]) {
          expect(types.has(t)).toBe(true)
        }
        const again = Path.join(dir, "again.html")
        const rendered = yield* armature(["timeline", transcript, "-o", again], env)
        expect(rendered.status).toBe(0)
        const redrawn = Fs.readFileSync(again, "utf8")
        expect([...redrawn.matchAll(/data-id="([^"]+)"/g)].map((m) => m[1])).toEqual(["toolu_a", "toolu_b"])
        expect(redrawn.match(/class="row model-row"/g)).toHaveLength(2)
      }),
    180_000
  )
})
