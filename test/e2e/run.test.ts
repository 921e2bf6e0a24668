import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
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
  /** Each complete stdout line with the time (Date.now()) it arrived. */
  readonly timed: ReadonlyArray<{ readonly at: number; readonly line: string }>
  /** Each complete stderr line with the time (Date.now()) it arrived. */
  readonly timedErr: ReadonlyArray<{ readonly at: number; readonly line: string }>
}

/** Runs `armature run …` as a process; `onSpawn` may signal it. */
const armature = (
  args: ReadonlyArray<string>,
  env: Record<string, string | undefined>,
  onStdout?: (child: ChildProcess.ChildProcess, stdout: string) => void,
  stdin?: string
) =>
  Effect.async<Outcome>((resume) => {
    const child = ChildProcess.spawn(process.execPath, [bin, "run", ...args], {
      env: {
        ...process.env,
        ANTHROPIC_API_KEY: undefined,
        ANTHROPIC_BASE_URL: undefined,
        ANTHROPIC_MODEL: undefined,
        ...env
      },
      stdio: [stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"]
    })
    if (stdin !== undefined) child.stdin?.end(stdin)
    let stdout = ""
    let stderr = ""
    let partial = ""
    const timed: Array<{ at: number; line: string }> = []
    child.stdout!.on("data", (d: Buffer) => {
      stdout += d.toString("utf8")
      partial += d.toString("utf8")
      const parts = partial.split("\n")
      partial = parts.pop() ?? ""
      for (const line of parts) timed.push({ at: Date.now(), line })
      onStdout?.(child, stdout)
    })
    let partialErr = ""
    const timedErr: Array<{ at: number; line: string }> = []
    child.stderr!.on("data", (d: Buffer) => {
      stderr += d.toString("utf8")
      partialErr += d.toString("utf8")
      const parts = partialErr.split("\n")
      partialErr = parts.pop() ?? ""
      for (const line of parts) timedErr.push({ at: Date.now(), line })
    })
    child.on("close", (code, signal) =>
      resume(Effect.succeed({ code, stdout, stderr: `${stderr}[signal ${signal}]`, timed, timedErr }))
    )
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
        expect(out.code, `${out.stderr}\n${out.stdout.slice(-2000)}`).toBe(0)
        const events = lines(out.stdout)
        const kinds = events.map((e) => `${e.type}${e.subtype !== undefined ? `/${e.subtype}` : ""}`)
        // one assistant event per content block; the result may come before or after the second block
        expect(kinds.filter((k) => k !== "user")).toEqual([
          "system/init",
          "assistant",
          "assistant",
          "assistant",
          "result/success"
        ])
        const user = events.find((e) => e.type === "user")!
        expect(kinds.indexOf("user")).toBeGreaterThan(1)
        expect((user.message as { content: unknown }).content).toEqual([
          { type: "tool_result", tool_use_id: "toolu_1", content: "Slept for 3000 ms" }
        ])
        expect(events.at(-1)).toMatchObject({ result: "Done sleeping.", num_turns: 2, is_error: false })
        // The stream went on for over 3 s after the tool_use block; had Sleep(3000) started only at message_stop,
        // the next request could not come sooner than 3 s after it.
        expect(server.requests).toHaveLength(2)
        expect(server.messageStops[0] - server.requests[0].at).toBeGreaterThan(3000)
        expect(server.requests[1].at - server.messageStops[0]).toBeLessThan(2500)
      }),
    120_000
  )

  it.scopedLive(
    "text output prints a call's result as soon as it is yielded, while the model is still streaming",
    () =>
      Effect.gen(function* () {
        const server = yield* MessagesServer.make([
          MessagesServer.message(
            [
              sleepCall("toolu_1", 1),
              { type: "text", text: "While that runs, I keep streaming tokens for quite a while longer." }
            ],
            { pacingMs: 100, chunk: 2 }
          ),
          MessagesServer.message([{ type: "text", text: "Done." }])
        ])
        const { dir, env } = sandbox()
        const out = yield* armature(["sleep a little", "--cwd", dir], {
          ...env,
          ANTHROPIC_API_KEY: "dummy",
          ANTHROPIC_BASE_URL: server.url
        })
        expect(out.code, out.stderr).toBe(0)
        const results = out.timedErr.filter((l) => l.line.includes("⎿"))
        // once, not again when the turn's user message is reported
        expect(results.map((l) => l.line)).toEqual(["  ⎿ toolu_1 Slept for 1 ms"])
        // the message streamed for over 3 s after its tool_use block: the result came before it ended
        expect(server.messageStops[0] - results[0].at).toBeGreaterThan(1000)
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
        // one user event per result, as claude -p prints them; the transcript keeps them in one message
        const users = events.filter((e) => e.type === "user") as Array<{ message: { content: Array<unknown> } }>
        const rejected = [
          { type: "tool_result", tool_use_id: "toolu_1", content: Texts.rejected, is_error: true },
          { type: "tool_result", tool_use_id: "toolu_2", content: Texts.rejected, is_error: true }
        ]
        expect(users.flatMap((u) => u.message.content)).toEqual(rejected)
        expect(events.at(-1)).toMatchObject({ type: "result", subtype: "interrupted", is_error: true })
        const sessionId = String(events.at(-1)?.session_id)
        const recorded = lines(
          Fs.readFileSync(Path.join(dir, ".armature", "transcripts", `${sessionId}.jsonl`), "utf8")
        )
        expect(recorded.filter((l) => l.type === "user").at(-1)).toMatchObject({
          message: { role: "user", content: rejected }
        })
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

  it.scopedLive(
    "streams: each content block is printed when complete, before its slow tool's result (stream-json)",
    () =>
      Effect.gen(function* () {
        const server = yield* MessagesServer.make([
          MessagesServer.message([
            { type: "text", text: "I will sleep for three seconds." },
            sleepCall("toolu_1", 3000),
            sleepCall("toolu_2", 10)
          ]),
          MessagesServer.message([{ type: "text", text: "Slept." }])
        ])
        const { dir, env } = sandbox()
        const out = yield* armature(["nap", "--output", "stream-json", "--cwd", dir], {
          ...env,
          ANTHROPIC_API_KEY: "dummy",
          ANTHROPIC_BASE_URL: server.url
        })
        expect(out.code, out.stderr).toBe(0)
        const events = out.timed.map(({ at, line }) => ({ at, event: JSON.parse(line) as Record<string, unknown> }))
        const kinds = events.map(
          ({ event }) => `${event.type}${event.subtype !== undefined ? `/${event.subtype}` : ""}`
        )
        // one assistant event per block (text, two tool_use), then the results in order
        expect(kinds).toEqual([
          "system/init",
          "assistant",
          "assistant",
          "assistant",
          "user",
          "user",
          "assistant",
          "result/success"
        ])
        const [, assistant, , , first, second] = events
        expect((first.event.message as { content: unknown }).content).toEqual([
          { type: "tool_result", tool_use_id: "toolu_1", content: "Slept for 3000 ms" }
        ])
        expect((second.event.message as { content: unknown }).content).toEqual([
          { type: "tool_result", tool_use_id: "toolu_2", content: "Slept for 10 ms" }
        ])
        // the text was on stdout while the 3 s tool was still running
        expect(first.at - assistant.at).toBeGreaterThan(2000)
        expect(events.at(-1)?.event).toMatchObject({ is_error: false, num_turns: 2, result: "Slept." })
        expect(Object.keys(events.at(-1)!.event)).toEqual(
          expect.arrayContaining(["session_id", "duration_ms", "total_cost_usd", "usage", "is_error"])
        )
      }),
    180_000
  )

  it.scopedLive(
    "an unreachable API ends promptly in an error result naming the URL and the retries",
    () =>
      Effect.gen(function* () {
        const { dir, env } = sandbox()
        // a port that was just free: nothing listens there
        const port = yield* Effect.promise(
          () =>
            new Promise<number>((resolve) => {
              const probe = Net.createServer().listen(0, "127.0.0.1", () => {
                const { port } = probe.address() as Net.AddressInfo
                probe.close(() => resolve(port))
              })
            })
        )
        const out = yield* armature(["hello", "--output", "stream-json", "--cwd", dir], {
          ...env,
          ANTHROPIC_API_KEY: "dummy",
          ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`
        })
        expect(out.code).toBe(1)
        const result = lines(out.stdout).at(-1)!
        expect(result).toMatchObject({ type: "result", subtype: "error_during_execution", is_error: true })
        expect(String(result.result)).toBe(
          `API error: POST http://127.0.0.1:${port}/v1/messages: connection failed: Connection error. (2 retries)`
        )
        expect(result.duration_ms as number).toBeLessThan(15_000)
      }),
    180_000
  )

  it.scopedLive(
    "a failing API: --max-retries bounds the retries and the result names the status",
    () =>
      Effect.gen(function* () {
        const server = yield* MessagesServer.make([
          MessagesServer.status(529, "overloaded_error", { "retry-after": "0" }),
          MessagesServer.status(529, "overloaded_error", { "retry-after": "0" }),
          MessagesServer.message([{ type: "text", text: "never reached" }])
        ])
        const { dir, env } = sandbox()
        const out = yield* armature(["hello", "--output", "json", "--max-retries", "1", "--cwd", dir], {
          ...env,
          ANTHROPIC_API_KEY: "dummy",
          ANTHROPIC_BASE_URL: server.url
        })
        expect(out.code).toBe(1)
        expect(server.requests).toHaveLength(2)
        const result = JSON.parse(out.stdout) as Record<string, unknown>
        expect(result).toMatchObject({ is_error: true, subtype: "error_during_execution" })
        expect(String(result.result)).toMatch(
          new RegExp(`^API error: POST ${server.url}/v1/messages: HTTP 529: .*overloaded.* \\(1 retry\\)$`)
        )
      }),
    180_000
  )

  it.scopedLive(
    "reads the prompt from stdin, takes Claude Code's spellings and streams text (text output)",
    () =>
      Effect.gen(function* () {
        const server = yield* MessagesServer.make([
          MessagesServer.message([{ type: "text", text: "Hello from the scripted model." }], { chunk: 4 })
        ])
        const { dir, env } = sandbox()
        const out = yield* armature(
          ["-p", "--output-format", "text", "--verbose", "--allowedTools", "Read", "--cwd", dir],
          { ...env, ANTHROPIC_API_KEY: "dummy", ANTHROPIC_BASE_URL: server.url, ANTHROPIC_MODEL: "claude-test-1" },
          undefined,
          "what is in this directory?\n"
        )
        expect(out.code, out.stderr).toBe(0)
        expect(server.requests[0].body.model).toBe("claude-test-1")
        expect(server.requests[0].body.messages[0].content).toEqual([
          { type: "text", text: "what is in this directory?" }
        ])
        expect(out.stdout).toBe("Hello from the scripted model.\n")
        // no colour codes on a pipe
        expect(out.stderr).not.toContain("\x1b[")
      }),
    180_000
  )
})

describe("armature run: the model", () => {
  it.scopedLive(
    "--model beats ANTHROPIC_MODEL, which beats the settings' model, which beats the default",
    () =>
      Effect.gen(function* () {
        const { dir, env } = sandbox()
        Fs.mkdirSync(Path.join(dir, ".claude"))
        Fs.writeFileSync(Path.join(dir, ".claude", "settings.json"), JSON.stringify({ model: "claude-settings-1" }))
        const bare = sandbox()
        const cases: ReadonlyArray<readonly [ReadonlyArray<string>, Record<string, string>, string, string]> = [
          [[], {}, "claude-settings-1", dir],
          [[], { ANTHROPIC_MODEL: "claude-env-1" }, "claude-env-1", dir],
          [["--model", "claude-flag-1"], { ANTHROPIC_MODEL: "claude-env-1" }, "claude-flag-1", dir],
          [[], {}, "claude-sonnet-5-5", bare.dir]
        ]
        const seen = yield* Effect.forEach(
          cases,
          ([flags, extra, , cwd]) =>
            Effect.gen(function* () {
              const server = yield* MessagesServer.make([MessagesServer.message([{ type: "text", text: "ok" }])])
              const out = yield* armature(["hi", "--output", "json", "--cwd", cwd, ...flags], {
                ...(cwd === dir ? env : bare.env),
                ANTHROPIC_API_KEY: "dummy",
                ANTHROPIC_BASE_URL: server.url,
                ...extra
              })
              expect(out.code, out.stderr).toBe(0)
              return server.requests[0].body.model
            }),
          { concurrency: 2 }
        )
        expect(seen).toEqual(cases.map(([, , model]) => model))
      }),
    240_000
  )
})

describe("armature run: Claude Code's multi-value rule flags", () => {
  it.scopedLive(
    "--allowedTools A B and --disallowedTools A B take several rules; the prompt after them is not eaten",
    () =>
      Effect.gen(function* () {
        const server = yield* MessagesServer.make([
          MessagesServer.message([{ type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "echo hi" } }]),
          MessagesServer.message([{ type: "text", text: "Said hi." }])
        ])
        const { dir, env } = sandbox()
        const out = yield* armature(
          [
            "--allowedTools",
            "Read",
            "Bash(echo:*)",
            "say hi with echo",
            "--disallowedTools",
            "Glob",
            "Sleep",
            "--output",
            "stream-json",
            "--cwd",
            dir
          ],
          { ...env, ANTHROPIC_API_KEY: "dummy", ANTHROPIC_BASE_URL: server.url }
        )
        expect(out.code, out.stderr).toBe(0)
        expect(server.requests[0].body.messages[0].content).toEqual([{ type: "text", text: "say hi with echo" }])
        // both denied tools are gone from the pool; the allowed echo ran without an ask (no terminal here)
        const names = (server.requests[0].body.tools ?? []).map((t) => t.name)
        expect(names).toContain("Bash")
        expect(names).not.toContain("Glob")
        expect(names).not.toContain("Sleep")
        const users = lines(out.stdout).filter((e) => e.type === "user")
        expect(users.map((u) => (u.message as { content: unknown }).content)).toEqual([
          [{ type: "tool_result", tool_use_id: "toolu_1", content: "hi" }]
        ])
      }),
    180_000
  )
})

describe("armature run: --result-strategy", () => {
  it.scopedLive(
    "head-tail: the model gets the first and last 40 % of a large result around a summary",
    () =>
      Effect.gen(function* () {
        const { dir, env } = sandbox()
        const text = Array.from({ length: 3000 }, (_, i) => `entry ${i + 1}: cache miss for key alpha`).join("\n")
        Fs.writeFileSync(Path.join(dir, "big.log"), `${text}\n`)
        const server = yield* MessagesServer.make([
          MessagesServer.message([
            {
              type: "tool_use",
              id: "toolu_1",
              name: "Grep",
              input: { pattern: "^entry", path: dir, output_mode: "content", head_limit: 0 }
            }
          ]),
          MessagesServer.message([{ type: "text", text: "Many misses." }])
        ])
        const out = yield* armature(["count the misses", "--result-strategy", "head-tail", "--cwd", dir], {
          ...env,
          ANTHROPIC_API_KEY: "dummy",
          ANTHROPIC_BASE_URL: server.url
        })
        expect(out.code, out.stderr).toBe(0)
        const sent = server.requests[1].body.messages[2].content as ReadonlyArray<{ content: string }>
        const shown = sent[0].content
        expect(shown.startsWith("big.log:1:entry 1: cache miss")).toBe(true)
        expect(shown.trimEnd().endsWith("big.log:3000:entry 3000: cache miss for key alpha")).toBe(true)
        expect(shown).toMatch(
          / omitted; summary follows\] \.\.\.\n[\d,]+ lines, [\d,]+ characters\. Most frequent terms: /
        )
      }),
    180_000
  )
})

describe("armature run: --tool-loading", () => {
  const toolsSent = (request: MessagesServer.RecordedRequest) => (request.body.tools ?? []).map((t) => String(t.name))
  const listsDeferred = (request: MessagesServer.RecordedRequest) =>
    JSON.stringify(request.body.system).includes("<available-deferred-tools>\\nWebFetch\\n</available-deferred-tools>")

  it.scopedLive(
    "all, deferred and keyword decide whether WebFetch (a deferred tool) is in the first request",
    () =>
      Effect.gen(function* () {
        const about = "fetch the page at http://example.test/docs and summarise it"
        const cases = [
          ["all", "Rename the variable foo to bar", true],
          ["deferred", about, false],
          ["keyword", about, true],
          ["keyword", "Rename the variable foo to bar", false]
        ] as const
        const seen = yield* Effect.forEach(
          cases,
          ([loading, prompt]) =>
            Effect.gen(function* () {
              const server = yield* MessagesServer.make([MessagesServer.message([{ type: "text", text: "ok" }])])
              const { dir, env } = sandbox()
              const out = yield* armature(
                [prompt, "--tool-loading", loading, "--output", "stream-json", "--cwd", dir],
                {
                  ...env,
                  ANTHROPIC_API_KEY: "dummy",
                  ANTHROPIC_BASE_URL: server.url
                }
              )
              expect(out.code, out.stderr).toBe(0)
              const init = lines(out.stdout)[0] as { tools: Array<string>; deferred_tools: Array<string> }
              const request = server.requests[0]
              const loaded = toolsSent(request).includes("WebFetch")
              // the init event, the tools array and the system prompt's listing agree
              expect(init.tools.includes("WebFetch")).toBe(loaded)
              expect(init.deferred_tools.includes("WebFetch")).toBe(!loaded)
              expect(listsDeferred(request)).toBe(!loaded)
              expect(toolsSent(request)).toEqual(expect.arrayContaining(["Bash", "Read", "ToolSearch"]))
              return loaded
            }),
          { concurrency: 2 }
        )
        expect(seen).toEqual(cases.map(([, , loaded]) => loaded))
      }),
    300_000
  )

  it.scopedLive(
    "recent: a tool used in an earlier session in this project is sent from the first request",
    () =>
      Effect.gen(function* () {
        const { dir, env } = sandbox()
        const first = yield* MessagesServer.make([
          MessagesServer.message([
            { type: "tool_use", id: "toolu_1", name: "ToolSearch", input: { query: "select:WebFetch" } }
          ]),
          MessagesServer.message([
            { type: "tool_use", id: "toolu_2", name: "WebFetch", input: { url: "http://127.0.0.1:9/docs" } }
          ]),
          MessagesServer.message([{ type: "text", text: "Could not fetch it." }])
        ])
        const args = ["read the docs", "--tool-loading", "recent", "--output", "json", "--cwd", dir]
        const one = yield* armature(args, { ...env, ANTHROPIC_API_KEY: "dummy", ANTHROPIC_BASE_URL: first.url })
        expect(one.code, one.stderr).toBe(0)
        // nothing used here before: deferred until ToolSearch loaded it
        expect(toolsSent(first.requests[0])).not.toContain("WebFetch")
        expect(toolsSent(first.requests[1])).toContain("WebFetch")
        const second = yield* MessagesServer.make([MessagesServer.message([{ type: "text", text: "ok" }])])
        const two = yield* armature(args, { ...env, ANTHROPIC_API_KEY: "dummy", ANTHROPIC_BASE_URL: second.url })
        expect(two.code, two.stderr).toBe(0)
        expect(toolsSent(second.requests[0])).toContain("WebFetch")
        expect(listsDeferred(second.requests[0])).toBe(false)
      }),
    300_000
  )
})

describe("armature run: stream-json reports each content block as it completes", () => {
  it.scopedLive(
    "a text block, then a slow tool_use, then a long text: each is on stdout when it ends, the tool's result while the model streams",
    () =>
      Effect.gen(function* () {
        const tail =
          "Meanwhile I keep writing, slowly, one small piece at a time, until the tool is long done, and then some more."
        const server = yield* MessagesServer.make([
          MessagesServer.message(
            [{ type: "text", text: "First I sleep." }, sleepCall("toolu_1", 1500), { type: "text", text: tail }],
            { pacingMs: 60, chunk: 2 }
          ),
          MessagesServer.message([{ type: "text", text: "Done." }])
        ])
        const { dir, env } = sandbox()
        const out = yield* armature(["sleep, then talk", "--output", "stream-json", "--cwd", dir], {
          ...env,
          ANTHROPIC_API_KEY: "dummy",
          ANTHROPIC_BASE_URL: server.url
        })
        expect(out.code, out.stderr).toBe(0)
        interface Line {
          readonly type: string
          readonly session_id: string
          readonly message: { readonly id?: string; readonly content: ReadonlyArray<{ readonly type: string }> }
        }
        const events = out.timed.map(({ at, line }) => ({ at, event: JSON.parse(line) as Line }))
        expect(events.map(({ event }) => event.type)).toEqual([
          "system",
          "assistant",
          "assistant",
          "user",
          "assistant",
          "assistant",
          "result"
        ])
        const firstTurn = events.slice(1, 5)
        const kinds = firstTurn.map(({ event }) => `${event.type}:${event.message.content[0].type}`)
        expect(kinds).toEqual(["assistant:text", "assistant:tool_use", "user:tool_result", "assistant:text"])
        const [text, toolUse, result, longText] = firstTurn
        expect(text.event.message.content).toEqual([{ type: "text", text: "First I sleep." }])
        expect(longText.event.message.content).toEqual([{ type: "text", text: tail }])
        // one message: the same id on each block event, as Claude Code's --verbose stream has
        const ids = [text, toolUse, longText].map((e) => String(e.event.message.id))
        expect(ids[0]).toMatch(/^msg_/)
        expect(new Set(ids).size).toBe(1)
        // by the clock: the first text and the tool_use were out long before the message ended (the long text
        // streams for ~3.5 s after them), the tool_use before its 1.5 s tool finished, and the result before the end
        const end = server.messageStops[0]
        expect(end - text.at).toBeGreaterThan(2_000)
        expect(end - toolUse.at).toBeGreaterThan(1_500)
        expect(result.at - toolUse.at).toBeGreaterThan(1_000)
        expect(result.at).toBeLessThan(end)
        // the transcript keeps the whole message, for --resume
        const sessionId = String(events.at(-1)?.event.session_id)
        const recorded = lines(
          Fs.readFileSync(Path.join(dir, ".armature", "transcripts", `${sessionId}.jsonl`), "utf8")
        ).filter((l) => l.type === "assistant")
        expect((recorded[0].message as { content: Array<{ type: string }> }).content.map((b) => b.type)).toEqual([
          "text",
          "tool_use",
          "text"
        ])
      }),
    180_000
  )
})
