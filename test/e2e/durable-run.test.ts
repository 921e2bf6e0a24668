import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { crashedText } from "../../src/layers/durable/DurableSession.js"
import { bin } from "../fixtures/Cli.js"
import * as MessagesServer from "../fixtures/MessagesServer.js"
import * as Postgres from "../fixtures/Postgres.js"

interface Ended {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** The processes started by the running test (each the leader of its own process group). */
const started: Array<{ readonly child: ChildProcess.ChildProcess; readonly ended: Promise<unknown> }> = []

const signalGroup = (pid: number, signal: NodeJS.Signals) => {
  try {
    process.kill(-pid, signal)
  } catch {
    // the group is gone
  }
}

// whatever a test started is gone after it: SIGTERM to each group, up to 5 s, then SIGKILL (a `resume` that
// ignored SIGTERM once stayed behind, reparented to init)
afterEach(async () => {
  const all = started.splice(0)
  await Promise.all(
    all.map(async ({ child, ended }) => {
      if (child.pid === undefined) return
      if (child.exitCode === null && child.signalCode === null) {
        signalGroup(child.pid, "SIGTERM")
        await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 5_000))])
      }
      signalGroup(child.pid, "SIGKILL")
    })
  )
})

/** Starts `armature ARGS` in `dir` (ended with its process group after the test); `ended` settles when it exits. */
const start = (args: ReadonlyArray<string>, dir: string, env: Record<string, string>) => {
  const child = ChildProcess.spawn(process.execPath, [bin, ...args], {
    cwd: dir,
    env: {
      ...process.env,
      ANTHROPIC_API_KEY: "dummy",
      ANTHROPIC_MODEL: undefined,
      HOME: dir,
      ARMATURE_STATE_DIR: Path.join(dir, ".armature"),
      ...env
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true
  })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString("utf8")
  })
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString("utf8")
  })
  const ended = new Promise<Ended>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }))
  )
  started.push({ child, ended })
  return { child, ended, output: () => ({ stdout, stderr }) }
}

const run = (args: ReadonlyArray<string>, dir: string, env: Record<string, string>) =>
  Effect.promise(() => start(args, dir, env).ended)

const jsonLines = (text: string): ReadonlyArray<Record<string, unknown>> =>
  text
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>)

/** Waits (checking every 20 ms) until `condition` holds; fails with `what` after 60 s. */
const until = (what: string, condition: () => boolean) =>
  Effect.suspend(() => (condition() ? Effect.void : Effect.fail(what))).pipe(
    Effect.retry(Schedule.spaced("20 millis").pipe(Schedule.upTo("60 seconds"))),
    Effect.orDie
  )

/** Lets a process blocked reading the fifo go; false when nobody reads it (yet, or any more). */
const release = (fifo: string): boolean => {
  try {
    const fd = Fs.openSync(fifo, Fs.constants.O_WRONLY | Fs.constants.O_NONBLOCK)
    Fs.closeSync(fd)
    return true
  } catch {
    return false
  }
}

/** The live processes whose command line contains `text` (read from /proc). */
const processesWith = (text: string): ReadonlyArray<number> =>
  Fs.readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        const stat = Fs.readFileSync(`/proc/${entry}/stat`, "utf8")
        if (/\) [ZX] /.test(stat)) return false
        return Fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(text)
      } catch {
        return false
      }
    })
    .map(Number)

const bash = (id: string, command: string): MessagesServer.ScriptBlock => ({
  type: "tool_use",
  id,
  name: "Bash",
  input: { command }
})

/** The stores a durable session is tested on: the embedded SQLite file, and a fresh PostgreSQL database. */
const stores = [
  { name: "SQLite under .armature/", database: Effect.succeed<ReadonlyArray<string>>([]) },
  {
    name: "PostgreSQL (--database)",
    database: Effect.map(Postgres.freshDatabase("armature_durable_run"), (url) => ["--database", url])
  }
]

describe.each(stores)("armature run --durable, $name", ({ database }) => {
  it.scopedLive(
    "a session killed (SIGKILL) while its second call runs is resumed: the first call ran once, the model gets both results in order",
    () =>
      Effect.gen(function* () {
        const store = yield* database
        const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-durable-")))
        const gate = Path.join(dir, "gate")
        ChildProcess.execFileSync("mkfifo", [gate])
        yield* Effect.addFinalizer(() => Effect.sync(() => release(gate)))
        const server = yield* MessagesServer.make([
          MessagesServer.message([
            bash("toolu_first", "echo ran >> side.txt"),
            bash("toolu_second", "touch started && cat gate")
          ]),
          MessagesServer.message([{ type: "text", text: "Both calls are answered." }])
        ])
        const env = { ANTHROPIC_BASE_URL: server.url }
        const flags = ["--output", "stream-json", "--permission-mode", "bypassPermissions", "--cwd", dir, ...store]
        const first = start(["run", "--durable", "append then wait", ...flags], dir, env)
        // the second call runs once the first one's result is stored (both change things: they run one at a time)
        yield* until("the second call to start", () => Fs.existsSync(Path.join(dir, "started")))
        first.child.kill("SIGKILL")
        const killed = yield* Effect.promise(() => first.ended)
        expect(killed.signal).toBe("SIGKILL")
        const init = jsonLines(killed.stdout).find((e) => e.type === "system" && e.subtype === "init")
        const sessionId = String(init?.session_id)
        expect(sessionId).toMatch(/^[0-9a-f-]{36}$/)
        expect(server.requests).toHaveLength(1)

        const listed = yield* run(["sessions", "--json", ...store], dir, env)
        expect(jsonLines(listed.stdout)).toMatchObject([{ session_id: sessionId, state: "interrupted" }])

        // resume takes run's output flags (Claude Code's spelling too): the session was started with stream-json
        const timeline = Path.join(dir, "resumed.html")
        const resumed = yield* run(
          ["resume", sessionId, "--output-format", "json", "--verbose", "--timeline", timeline, ...store],
          dir,
          env
        )
        expect(resumed.stderr).not.toContain("Error")
        expect(resumed.code, resumed.stderr).toBe(0)
        const result = JSON.parse(resumed.stdout) as Record<string, unknown>
        expect(result).toMatchObject({ type: "result", subtype: "success", session_id: sessionId })
        expect(Fs.readFileSync(timeline, "utf8")).toContain("<html")
        // the first call's side effect happened exactly once
        expect(Fs.readFileSync(Path.join(dir, "side.txt"), "utf8")).toBe("ran\n")
        // turn 1 was replayed from the store; the model was asked once more, with both results in order
        expect(server.requests).toHaveLength(2)
        const messages = server.requests[1].body.messages
        expect(messages.at(-1)).toEqual({
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_first", content: "(Bash completed with no output)" },
            { type: "tool_result", tool_use_id: "toolu_second", content: crashedText("Bash"), is_error: true }
          ]
        })
        const after = yield* run(["sessions", "--json", ...store], dir, env)
        expect(jsonLines(after.stdout)).toMatchObject([{ session_id: sessionId, state: "success" }])
      }),
    120_000
  )

  it.scopedLive(
    "a call cut off by SIGKILL does not go on: resume kills its processes (a setsid child too) before the model hears of it",
    () =>
      Effect.gen(function* () {
        const store = yield* database
        const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-durable-orphan-")))
        // the call's processes, found by their command lines (the sleeps' odd lengths are this test's own); 20 s, so
        // that a resume slowed by a loaded machine still comes before the call would have ended
        const marker = `20.${process.pid % 1000}${Math.floor(Math.random() * 1e6)}`
        const left = () => processesWith(marker)
        const seen: Array<ReadonlyArray<number>> = []
        const server = yield* MessagesServer.make(
          [
            MessagesServer.message([
              bash("toolu_sleep", `(setsid sleep 1${marker} &); touch started; sleep ${marker} && touch finished`)
            ]),
            MessagesServer.message([{ type: "text", text: "Noted." }])
          ],
          {
            // what of the call still runs when each model request arrives
            laneOf: () => {
              seen.push(left())
              return "main"
            },
            lanes: {}
          }
        )
        const env = { ANTHROPIC_BASE_URL: server.url }
        const flags = ["--output", "stream-json", "--permission-mode", "bypassPermissions", "--cwd", dir, ...store]
        const first = start(["run", "--durable", "sleep a while", ...flags], dir, env)
        yield* until("the call to start", () => Fs.existsSync(Path.join(dir, "started")) && left().length >= 2)
        const killedAt = Date.now()
        first.child.kill("SIGKILL")
        const killed = yield* Effect.promise(() => first.ended)
        const sessionId = String(
          jsonLines(killed.stdout).find((e) => e.type === "system" && e.subtype === "init")?.session_id
        )
        // the engine is gone; the call's processes are not (yet)
        expect(left().length).toBeGreaterThanOrEqual(2)

        const resumed = yield* run(["resume", sessionId, ...store], dir, env)
        expect(resumed.code).toBe(0)
        expect(jsonLines(resumed.stdout).at(-1)).toMatchObject({ type: "result", subtype: "success" })
        // the model heard of the interrupted call only once nothing of it ran
        expect(server.requests).toHaveLength(2)
        expect(seen).toEqual([seen[0], []])
        expect(server.requests[1].body.messages.at(-1)).toEqual({
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "toolu_sleep", content: crashedText("Bash"), is_error: true }]
        })
        expect(left()).toEqual([])
        // past the time the call would have taken, it never finished
        yield* Effect.sleep(Math.max(0, killedAt + 21_000 - Date.now()))
        expect(Fs.existsSync(Path.join(dir, "finished"))).toBe(false)
      }),
    180_000
  )

  it.scopedLive(
    "two resumes of one session started together: one runs it, the other exits 2 at once naming the first (3 rounds)",
    () =>
      Effect.gen(function* () {
        const store = yield* database
        const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-durable-lease-")))
        const gate = Path.join(dir, "gate")
        ChildProcess.execFileSync("mkfifo", [gate])
        yield* Effect.addFinalizer(() => Effect.sync(() => release(gate)))
        const rounds = 3
        // every turn asks for one call that marks its start and then waits at the gate; the last turn ends the run
        const blocked = (n: number) => MessagesServer.message([bash(`toolu_${n}`, `touch started-${n} && cat gate`)])
        const server = yield* MessagesServer.make([
          ...Array.from({ length: rounds + 1 }, (_, i) => blocked(i + 1)),
          MessagesServer.message([{ type: "text", text: "All done." }])
        ])
        const env = { ANTHROPIC_BASE_URL: server.url }
        const flags = ["--output", "stream-json", "--permission-mode", "bypassPermissions", "--cwd", dir, ...store]
        const first = start(["run", "--durable", "wait at the gate", ...flags], dir, env)
        yield* until("the first call to start", () => Fs.existsSync(Path.join(dir, "started-1")))
        first.child.kill("SIGKILL")
        const killed = yield* Effect.promise(() => first.ended)
        const sessionId = String(
          jsonLines(killed.stdout).find((e) => e.type === "system" && e.subtype === "init")?.session_id
        )
        for (let round = 1; round <= rounds; round++) {
          const pair = [
            start(["resume", sessionId, ...store], dir, env),
            start(["resume", sessionId, ...store], dir, env)
          ]
          const exited = () => pair.filter((p) => p.child.exitCode !== null)
          // the winner asked the model and is in its next call; the other one has exited
          yield* until(
            `round ${round}: one resume to run the next call and the other to exit`,
            () => Fs.existsSync(Path.join(dir, `started-${round + 1}`)) && exited().length === 1
          )
          const loser = pair.find((p) => p.child.exitCode !== null)
          const winner = pair.find((p) => p.child.exitCode === null)
          if (loser === undefined || winner === undefined) return yield* Effect.dieMessage("no loser and winner")
          const lost = yield* Effect.promise(() => loser.ended)
          expect(lost.code).toBe(2)
          expect(lost.stderr).toBe(`armature: resume: session ${sessionId} is being run by pid ${winner.child.pid}\n`)
          expect(lost.stdout).toBe("")
          // only the winner asked the model: one request per round
          expect(server.requests).toHaveLength(round + 1)
          if (round < rounds) {
            winner.child.kill("SIGKILL")
            yield* Effect.promise(() => winner.ended)
          } else {
            yield* until("the last call to read its gate", () => release(gate))
            const won = yield* Effect.promise(() => winner.ended)
            expect(won.code).toBe(0)
            expect(jsonLines(won.stdout).at(-1)).toMatchObject({ type: "result", subtype: "success" })
          }
        }
        expect(server.requests).toHaveLength(rounds + 2)
        // each killed call was reported once as cut off by a crash, never run again
        expect(server.requests[1].body.messages.at(-1)).toEqual({
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "toolu_1", content: crashedText("Bash"), is_error: true }]
        })
      }),
    400_000
  )
})
