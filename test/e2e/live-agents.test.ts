/**
 * `.claude/agents` followed during `armature run` (docs/library.md, "Live configuration"): over the scripted
 * Messages server, each sub-agent's request waits (an `after` reply) while the test edits the agents folder and
 * waits for the reload line on stderr; the next turn's Agent tool then lists the agents as they are now. An agent
 * added mid-run can be launched at the next turn; a removed one is gone; a file broken mid-run keeps its last good
 * definition and is warned about once.
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as MessagesServer from "../fixtures/MessagesServer.js"

const bin = Path.resolve(import.meta.dirname, "../../bin/armature.mjs")

const agentFile = (name: string, description: string, prompt: string) =>
  `---\nname: ${name}\ndescription: ${description}\ntools: Read\n---\n${prompt}\n`

const agentCall = (id: string, type: string): MessagesServer.ScriptBlock => ({
  type: "tool_use",
  id,
  name: "Agent",
  input: { description: `ask the ${type}`, prompt: "Look at main.ts", subagent_type: type }
})

/** A promise and the function that settles it. */
const gate = () => {
  let open = () => {}
  const until = new Promise<void>((resolve) => {
    open = resolve
  })
  return { until, open }
}

const laneOf = (body: MessagesServer.RecordedRequest["body"]) => {
  const system = JSON.stringify(body.system ?? "")
  return system.includes("You are the reviewer")
    ? "reviewer"
    : system.includes("You are the tester")
      ? "tester"
      : "main"
}

const agentDescription = (request: MessagesServer.RecordedRequest): string =>
  String((request.body.tools ?? []).find((t) => t.name === "Agent")?.description ?? "")

describe("live agent definitions (armature run)", () => {
  it.scopedLive(
    "an agent added, changed or removed mid-run is offered as it is now from the next turn; a broken file keeps its last good definition and warns once",
    () =>
      Effect.gen(function* () {
        const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-live-agents-")))
        yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true })))
        const agents = Path.join(dir, ".claude", "agents")
        Fs.mkdirSync(agents, { recursive: true })
        Fs.mkdirSync(Path.join(dir, "home"))
        Fs.writeFileSync(Path.join(dir, "main.ts"), "export const x = 1\n")
        const reviewer = Path.join(agents, "reviewer.md")
        Fs.writeFileSync(reviewer, agentFile("reviewer", "Reviews code for bugs", "You are the reviewer."))
        Fs.writeFileSync(Path.join(agents, "old.md"), agentFile("old", "An agent about to go", "You are old."))

        const firstEdit = gate()
        const secondEdit = gate()
        const server = yield* MessagesServer.make(
          [
            MessagesServer.message([agentCall("toolu_1", "reviewer")]),
            MessagesServer.message([agentCall("toolu_2", "tester")]),
            MessagesServer.message([agentCall("toolu_3", "reviewer")]),
            MessagesServer.message([{ type: "text", text: "All done." }])
          ],
          {
            laneOf,
            lanes: {
              reviewer: [
                {
                  kind: "after",
                  until: firstEdit.until,
                  reply: MessagesServer.message([{ type: "text", text: "r1" }])
                },
                MessagesServer.message([{ type: "text", text: "r2" }])
              ],
              tester: [
                {
                  kind: "after",
                  until: secondEdit.until,
                  reply: MessagesServer.message([{ type: "text", text: "t1" }])
                }
              ]
            }
          }
        )

        const child = ChildProcess.spawn(
          process.execPath,
          [bin, "run", "review main.ts", "--output", "stream-json", "--cwd", dir],
          {
            env: {
              ...process.env,
              ANTHROPIC_API_KEY: "dummy",
              ANTHROPIC_MODEL: undefined,
              ANTHROPIC_BASE_URL: server.url,
              ARMATURE_STATE_DIR: Path.join(dir, ".state"),
              HOME: Path.join(dir, "home")
            },
            stdio: ["ignore", "pipe", "pipe"]
          }
        )
        yield* Effect.addFinalizer(() => Effect.sync(() => child.kill("SIGKILL")))
        let stdout = ""
        let stderr = ""
        child.stdout.on("data", (d: Buffer) => {
          stdout += d.toString()
        })
        child.stderr.on("data", (d: Buffer) => {
          stderr += d.toString()
        })
        const exited = new Promise<number | null>((resolve) => child.on("close", resolve))
        // waits for what the process or the server shows (a line, a request); a process that ended fails the wait
        const until = (what: string, predicate: () => boolean) =>
          Effect.gen(function* () {
            while (!predicate()) {
              if (child.exitCode !== null) return yield* Effect.die(`exited before ${what}:\n${stderr}`)
              yield* Effect.sleep("20 millis")
            }
          })
        const count = (text: string) => stderr.split(text).length - 1

        // turn 1 runs the reviewer; while its request waits, the folder changes three ways
        yield* until("the reviewer's request", () => server.laneOfRequest.includes("reviewer"))
        expect(agentDescription(server.requests[0]!)).toContain("- old: An agent about to go")
        Fs.writeFileSync(Path.join(agents, "tester.md"), agentFile("tester", "Writes tests", "You are the tester."))
        Fs.writeFileSync(reviewer, agentFile("reviewer", "Reviews code for bugs and style", "You are the reviewer."))
        Fs.rmSync(Path.join(agents, "old.md"))
        yield* until("the reload", () =>
          stderr.includes("Agents reloaded (added tester; changed reviewer; removed old)")
        )
        firstEdit.open()

        // turn 2 offers the tester (and launches it); while its request waits, the reviewer's file breaks
        yield* until("the tester's request", () => server.laneOfRequest.includes("tester"))
        const second = server.requests[server.laneOfRequest.lastIndexOf("main")]!
        expect(agentDescription(second)).toContain("- tester: Writes tests")
        expect(agentDescription(second)).toContain("- reviewer: Reviews code for bugs and style")
        expect(agentDescription(second)).not.toContain("- old:")
        Fs.writeFileSync(reviewer, "---\nname: reviewer\nthis line is not front matter\n---\nYou are broken.\n")
        const warning = `agent definition ${reviewer}: line 3: expected "key: value"`
        yield* until("the warning", () => stderr.includes(warning))
        // another edit: the folder is read again with the reviewer still broken, and not warned about again
        Fs.writeFileSync(Path.join(agents, "helper.md"), agentFile("helper", "Helps", "You are the helper."))
        yield* until("the second reload", () => stderr.includes("Agents reloaded (added helper)"))
        secondEdit.open()

        const code = yield* Effect.promise(() => exited)
        expect(code, stderr).toBe(0)
        expect(count(warning)).toBe(1)
        // turn 3: the reviewer as it last was good, still launchable, with its last good prompt
        const mains = server.requests.filter((_, i) => server.laneOfRequest[i] === "main")
        expect(mains).toHaveLength(4)
        expect(agentDescription(mains[2]!)).toContain("- reviewer: Reviews code for bugs and style")
        expect(agentDescription(mains[2]!)).toContain("- helper: Helps")
        expect(server.laneOfRequest.filter((l) => l === "reviewer")).toHaveLength(2)
        const results = stdout
          .split("\n")
          .filter((l) => l.trim() !== "")
          .map((l) => JSON.parse(l) as Record<string, unknown>)
        expect(results.at(-1)).toMatchObject({ type: "result", subtype: "success", result: "All done." })
      }),
    120_000
  )
})
