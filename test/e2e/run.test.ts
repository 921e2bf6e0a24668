import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Texts from "../../src/domain/Texts.js"
import * as MessagesServer from "../fixtures/MessagesServer.js"

const bin = Path.resolve(__dirname, "../../bin/armature.mjs")

interface Outcome {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `armature run …` as a process; `onSpawn` may signal it. */
const armature = (
  args: ReadonlyArray<string>,
  env: Record<string, string | undefined>,
  onStdout?: (child: ChildProcess.ChildProcess, stdout: string) => void
) =>
  Effect.async<Outcome>((resume) => {
    const child = ChildProcess.spawn(process.execPath, [bin, "run", ...args], {
      env: { ...process.env, ANTHROPIC_API_KEY: undefined, ANTHROPIC_BASE_URL: undefined, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString("utf8")
      onStdout?.(child, stdout)
    })
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString("utf8")
    })
    child.on("close", (code, signal) => resume(Effect.succeed({ code, stdout, stderr: `${stderr}[signal ${signal}]` })))
    return Effect.sync(() => child.kill("SIGKILL"))
  })

const lines = (stdout: string): ReadonlyArray<Record<string, unknown>> =>
  stdout
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>)

const sandbox = () => {
  const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-run-")))
  return { dir, env: { ARMATURE_STATE_DIR: Path.join(dir, ".armature"), HOME: dir } }
}

const sleepCall = (id: string, ms: number): MessagesServer.ScriptBlock => ({
  type: "tool_use",
  id,
  name: "Sleep",
  input: { duration_ms: ms }
})

describe("armature run", () => {
  it.scopedLive(
    "starts Sleep before the model's stream ends and sends the result back (stream-json)",
    () =>
      Effect.gen(function* () {
        const server = yield* MessagesServer.make([
          MessagesServer.message(
            [
              sleepCall("toolu_1", 3000),
              { type: "text", text: "While that sleeps, I keep streaming tokens for a while." }
            ],
            { pacingMs: 100, chunk: 2 }
          ),
          MessagesServer.message([{ type: "text", text: "Done sleeping." }])
        ])
        const { dir, env } = sandbox()
        const out = yield* armature(["wait please", "--output", "stream-json", "--cwd", dir], {
          ...env,
          ANTHROPIC_API_KEY: "dummy",
          ANTHROPIC_BASE_URL: server.url
        })
        expect(out.code).toBe(0)
        const events = lines(out.stdout)
        expect(events.map((e) => `${e.type}${e.subtype !== undefined ? `/${e.subtype}` : ""}`)).toEqual([
          "system/init",
          "assistant",
          "user",
          "assistant",
          "result/success"
        ])
        expect((events[2].message as { content: unknown }).content).toEqual([
          { type: "tool_result", tool_use_id: "toolu_1", content: "Slept for 3000 ms" }
        ])
        expect(events[4]).toMatchObject({ result: "Done sleeping.", num_turns: 2, is_error: false })
        // The stream went on for over 3 s after the tool_use block; had Sleep(3000) started only at message_stop,
        // the next request could not come sooner than 3 s after it.
        expect(server.requests).toHaveLength(2)
        expect(server.messageStops[0] - server.requests[0].at).toBeGreaterThan(3000)
        expect(server.requests[1].at - server.messageStops[0]).toBeLessThan(2500)
      }),
    120_000
  )

  it.scopedLive(
    "retries a 429, then stops at --max-turns with every tool_use answered (json)",
    () =>
      Effect.gen(function* () {
        const server = yield* MessagesServer.make([
          MessagesServer.status(429, "rate_limit_error", { "retry-after": "0" }),
          MessagesServer.message([sleepCall("toolu_1", 1), sleepCall("toolu_2", 2)]),
          MessagesServer.message([sleepCall("toolu_3", 1)])
        ])
        const { dir, env } = sandbox()
        const out = yield* armature(["loop", "--output", "json", "--max-turns", "1", "--cwd", dir], {
          ...env,
          ANTHROPIC_API_KEY: "dummy",
          ANTHROPIC_BASE_URL: server.url
        })
        expect(out.code).toBe(1)
        const result = JSON.parse(out.stdout) as Record<string, unknown>
        expect(result).toMatchObject({
          type: "result",
          subtype: "error_max_turns",
          is_error: true,
          num_turns: 1,
          result: "Reached the maximum number of turns (1)"
        })
        expect(server.requests).toHaveLength(2)
        const transcript = Path.join(dir, ".armature", "transcripts", `${String(result.session_id)}.jsonl`)
        const recorded = lines(Fs.readFileSync(transcript, "utf8"))
        const results = recorded
          .filter((l) => l.type === "user")
          .flatMap((l) => (l.message as { content: ReadonlyArray<Record<string, unknown>> }).content)
          .filter((b) => b.type === "tool_result")
        expect(results).toEqual([
          { type: "tool_result", tool_use_id: "toolu_1", content: "Slept for 1 ms" },
          { type: "tool_result", tool_use_id: "toolu_2", content: "Slept for 2 ms" }
        ])
      }),
    120_000
  )

  it.scopedLive(
    "Ctrl-C twice aborts: every tool_use is answered in the transcript",
    () =>
      Effect.gen(function* () {
        const server = yield* MessagesServer.make([
          MessagesServer.message([sleepCall("toolu_1", 60_000), sleepCall("toolu_2", 60_000)])
        ])
        const { dir, env } = sandbox()
        let signalled = false
        const out = yield* armature(
          ["sleep long", "--output", "stream-json", "--cwd", dir],
          { ...env, ANTHROPIC_API_KEY: "dummy", ANTHROPIC_BASE_URL: server.url },
          (child, stdout) => {
            if (signalled || !stdout.includes('"subtype":"init"')) return
            signalled = true
            setTimeout(() => {
              child.kill("SIGINT")
              setTimeout(() => child.kill("SIGINT"), 100)
            }, 600)
          }
        )
        // exit status 1; or, when the second Ctrl-C lands while the process is already exiting (the first one may
        // end the run by itself, since Sleep stops on interrupt), the process dies of that signal after finishing
        expect(out.code === 1 || out.stderr.endsWith("[signal SIGINT]"), `${out.stderr}\n${out.stdout}`).toBe(true)
        const events = lines(out.stdout)
        const user = events.find((e) => e.type === "user") as { message: { content: unknown } }
        expect(user.message.content).toEqual([
          { type: "tool_result", tool_use_id: "toolu_1", content: Texts.rejected, is_error: true },
          { type: "tool_result", tool_use_id: "toolu_2", content: Texts.rejected, is_error: true }
        ])
        expect(events.at(-1)).toMatchObject({ type: "result", subtype: "interrupted", is_error: true })
        const sessionId = String(events.at(-1)?.session_id)
        const recorded = lines(
          Fs.readFileSync(Path.join(dir, ".armature", "transcripts", `${sessionId}.jsonl`), "utf8")
        )
        expect(recorded.filter((l) => l.type === "user").at(-1)).toMatchObject({ message: user.message })
      }),
    120_000
  )

  it.scopedLive(
    "a missing ANTHROPIC_API_KEY is a clear error with exit status 2",
    () =>
      Effect.gen(function* () {
        const { dir, env } = sandbox()
        const out = yield* armature(["hello", "--cwd", dir], env)
        expect(out.code).toBe(2)
        expect(out.stderr).toContain("armature: ANTHROPIC_API_KEY is not set. Set it to your Anthropic API key")
      }),
    120_000
  )
})
