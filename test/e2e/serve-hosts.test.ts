import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { crashedText } from "../../src/layers/durable/DurableSession.js"
import * as MessagesServer from "../fixtures/MessagesServer.js"
import * as NetNamespaces from "../fixtures/NetNamespaces.js"
import * as Postgres from "../fixtures/Postgres.js"
import { blockIds, eventLines, getJson, getText, post, startRunner, until } from "../fixtures/ServeRunner.js"

const lines = eventLines

// Sessions are spread over the runners by their id's shard: 9 are submitted, then more (up to 24) until both
// runners in namespaces hold one, so the test never depends on how 9 random ids happen to fall.
const names = Array.from({ length: 24 }, (_, i) => `s${i}`)
const callsPerSession = 3

describe("armature serve across hosts", () => {
  it.scopedLive(
    "runners in their own network namespaces: one's link is cut, another is SIGKILLed; every session completes, no call runs twice, the cut runner stops",
    () =>
      Effect.gen(function* () {
        const net = yield* NetNamespaces.make(2)
        const database = yield* Postgres.freshDatabase("armature_serve_hosts")
        const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-serve-hosts-")))
        Fs.chmodSync(dir, 0o755)
        // each turn k of a session asks for call k (chosen by the conversation's length, so a turn asked again gets
        // the same call); each call appends its name to calls.txt, then takes a while
        const lanes: Record<string, ReadonlyArray<MessagesServer.Reply>> = {}
        for (const s of names) {
          for (let k = 0; k < callsPerSession; k++) {
            const call = MessagesServer.message([
              {
                type: "tool_use",
                id: `toolu_${s}_${k}`,
                name: "Bash",
                input: { command: `echo ${s}-${k} >> calls.txt && sleep 3` }
              }
            ])
            lanes[`${s}/${k}`] = [call, call, call, call]
          }
          const done = MessagesServer.message([{ type: "text", text: `Session ${s} is done.` }])
          lanes[`${s}/${callsPerSession}`] = [done, done, done, done]
        }
        const server = yield* MessagesServer.make([], {
          laneOf: (body) => {
            const s = /session (s\d+)\b/.exec(JSON.stringify(body.messages[0] ?? ""))?.[1] ?? "main"
            return `${s}/${body.messages.filter((m) => m.role === "assistant").length}`
          },
          lanes
        })
        // PostgreSQL and the Messages API, reached from the namespaces through the bridge's address
        const admin = new URL(Postgres.adminUrl)
        const pgPort = yield* NetNamespaces.forwarder(net.bridgeAddress, {
          host: admin.hostname,
          port: Number(admin.port || 5432)
        })
        const apiPort = yield* NetNamespaces.forwarder(net.bridgeAddress, {
          host: "127.0.0.1",
          port: Number(new URL(server.url).port)
        })
        const remoteDatabase = new URL(database)
        remoteDatabase.hostname = net.bridgeAddress
        remoteDatabase.port = String(pgPort)
        const remoteEnv = { ANTHROPIC_BASE_URL: `http://${net.bridgeAddress}:${apiPort}` }

        // this host's runner, and one in each namespace (a host of its own: its own network and host name)
        const local = yield* startRunner(database, dir, { ANTHROPIC_BASE_URL: server.url }, [
          "--permission-mode",
          "bypassPermissions",
          "--cwd",
          dir,
          "--runner-host",
          net.bridgeAddress
        ])
        const remote = (ns: NetNamespaces.Namespace, name: string) =>
          startRunner(
            remoteDatabase.toString(),
            dir,
            remoteEnv,
            ["--permission-mode", "bypassPermissions", "--cwd", dir, "--host", ns.address, "--runner-host", ns.address],
            ["ip", "netns", "exec", ns.name, "unshare", "--uts", "sh", "-c", `hostname ${name} && exec "$@"`, "sh"]
          )
        const cut = yield* remote(net.namespaces[0], "armature-host-cut")
        const killed = yield* remote(net.namespaces[1], "armature-host-killed")
        yield* until("the three runners to share the 16 shards", () =>
          Effect.runPromise(Postgres.advisoryLocks(database)).then(
            (held) => held.length === 3 && held.reduce((a, b) => a + b, 0) === 16
          )
        )

        const ids: Record<string, string> = {}
        const sessions: Array<string> = []
        const submit = (s: string) =>
          Effect.gen(function* () {
            const started = yield* post(`${local.url}/sessions`, { prompt: `Work for session ${s}` })
            expect(started.status).toBe(201)
            ids[s] = String(started.body.session_id)
            sessions.push(s)
          })
        const runnerOf = (s: string) =>
          Effect.map(getJson(`${local.url}/sessions/${ids[s]}`), (r) => (r.body.runner as { pid: number }).pid)
        for (const s of names.slice(0, 9)) yield* submit(s)
        for (;;) {
          // once taken up (no longer "starting"), a session's runner is the one that holds its shard
          yield* until("every session to be taken up by a runner", () =>
            Effect.runPromise(
              Effect.forEach(sessions, (s) => getJson(`${local.url}/sessions/${ids[s]}`)).pipe(
                Effect.map((all) => all.every((r) => r.body.state !== "starting"))
              )
            )
          )
          const held = yield* Effect.forEach(sessions, runnerOf)
          if (held.includes(cut.child.pid ?? -1) && held.includes(killed.child.pid ?? -1)) break
          if (sessions.length === names.length) throw new Error(`no session on a runner in a namespace: ${held}`)
          yield* submit(names[sessions.length])
        }
        // both remote runners run sessions with a call under way
        yield* until("each remote runner to run a call", () =>
          Effect.runPromise(Effect.forEach(sessions, (s) => Effect.map(runnerOf(s), (pid) => ({ s, pid })))).then(
            (all) => {
              const calls = Fs.existsSync(Path.join(dir, "calls.txt"))
                ? Fs.readFileSync(Path.join(dir, "calls.txt"), "utf8")
                : ""
              const busy = (pid: number | undefined) => all.some((x) => x.pid === pid && calls.includes(`${x.s}-`))
              return busy(cut.child.pid) && busy(killed.child.pid)
            }
          )
        )
        const onCut = (yield* Effect.forEach(sessions, (s) => Effect.map(runnerOf(s), (pid) => ({ s, pid })))).filter(
          (x) => x.pid === cut.child.pid
        )
        expect(onCut.length).toBeGreaterThan(0)

        // the link of one runner goes down (its process runs on); the other runner is killed
        NetNamespaces.linkDown(net.namespaces[0])
        killed.child.kill("SIGKILL")

        // the cut runner finds it lost its database and stops: its calls killed, it exits 1
        const cutEnded = yield* Effect.promise(() => cut.ended)
        expect(cutEnded.code, cut.output()).toBe(1)
        expect(cut.output()).toContain("lost its locks")

        yield* until("every session to end", () =>
          Effect.runPromise(
            Effect.forEach(sessions, (s) => getJson(`${local.url}/sessions/${ids[s]}`)).pipe(
              Effect.map((all) => all.every((r) => r.body.state !== "running" && r.body.state !== "starting"))
            )
          )
        )
        const calls = Fs.readFileSync(Path.join(dir, "calls.txt"), "utf8")
          .split("\n")
          .filter((l) => l !== "")
        for (const s of sessions) {
          expect((yield* getJson(`${local.url}/sessions/${ids[s]}`)).body, s).toMatchObject({ state: "success" })
          const shown = lines(yield* getText(`${local.url}/sessions/${ids[s]}/events`))
          // every call asked for once, each with exactly one result
          const uses = blockIds(shown, "tool_use")
          expect(uses, s).toEqual(Array.from({ length: callsPerSession }, (_, k) => `toolu_${s}_${k}`))
          expect(blockIds(shown, "tool_result"), s).toEqual(uses)
          expect(shown.at(-1), s).toMatchObject({ type: "result", subtype: "success" })
          for (let k = 0; k < callsPerSession; k++) {
            const ran = calls.filter((c) => c === `${s}-${k}`).length
            // no call ran twice; a call whose real result the model got ran exactly once
            expect(ran, `${s}-${k}`).toBeLessThanOrEqual(1)
            const result = shown.find((e) => blockIds([e], "tool_result").includes(`toolu_${s}_${k}`))
            const message = result?.message as { content: Array<{ content?: unknown }> } | undefined
            const content = message?.content[0]?.content
            if (content !== crashedText("Bash")) expect(ran, `${s}-${k}`).toBe(1)
          }
        }
      }),
    400_000
  )
})
