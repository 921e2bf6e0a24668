import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { runCli } from "../fixtures/Cli.js"
import * as MessagesServer from "../fixtures/MessagesServer.js"
import * as Postgres from "../fixtures/Postgres.js"
import { authorization, getText, startRunner, token, until } from "../fixtures/ServeRunner.js"

/** A reply as it came over the wire. */
interface Reply {
  readonly status: number
  readonly headers: Http.IncomingHttpHeaders
  readonly body: string
}

/**
 * A request sent with node:http, whose headers (Host included) are sent exactly as given: what an attacker's page or
 * process can send. `body` is written as it is.
 */
const raw = (url: string, method: string, headers: Record<string, string>, body?: string | Buffer) =>
  Effect.async<Reply>((resume) => {
    const request = Http.request(url, { method, headers }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (c: Buffer) => chunks.push(c))
      response.on("end", () =>
        resume(
          Effect.succeed({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).toString("utf8")
          })
        )
      )
    })
    // a server that answers before reading a large body may close the connection under the writer
    request.on("error", (e) => resume(Effect.succeed({ status: -1, headers: {}, body: String(e) })))
    if (body !== undefined) request.write(body)
    request.end()
  })

const json = { "content-type": "application/json" }

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

const bash = (id: string, command: string): MessagesServer.ScriptBlock => ({
  type: "tool_use",
  id,
  name: "Bash",
  input: { command }
})

describe("armature serve: who may call it", () => {
  it.scopedLive(
    "only a request with the token, a JSON body, no foreign Origin and this server's Host runs anything",
    () =>
      Effect.gen(function* () {
        const database = yield* Postgres.freshDatabase("armature_serve_auth")
        const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-serve-auth-")))
        // every session the model is asked for runs one Bash call that leaves a mark named after its prompt
        const server = yield* MessagesServer.make([], {
          laneOf: (body) => /mark (\w+)/.exec(JSON.stringify(body.messages[0] ?? ""))?.[1] ?? "main",
          lanes: Object.fromEntries(
            ["notoken", "wrongtoken", "textplain", "origin", "host", "nosite", "proper"].map((name) => [
              name,
              [
                MessagesServer.message([bash(`toolu_${name}`, `touch ran-${name}`)]),
                MessagesServer.message([{ type: "text", text: "done" }])
              ]
            ])
          )
        })
        const runner = yield* startRunner(database, dir, { ANTHROPIC_BASE_URL: server.url }, [
          "--permission-mode",
          "bypassPermissions",
          "--cwd",
          dir,
          "--allow-origin",
          "http://app.example:3000"
        ])
        const sessions = `${runner.url}/sessions`
        const start = (name: string) => JSON.stringify({ prompt: `mark ${name}` })
        const hostHeader = new URL(runner.url).host

        const noToken = yield* raw(sessions, "POST", json, start("notoken"))
        expect(noToken.status).toBe(401)
        expect(JSON.parse(noToken.body)).toEqual({ error: "missing bearer token (Authorization: Bearer …)" })
        expect(noToken.headers["www-authenticate"]).toBe("Bearer")
        expect(noToken.body.split("\n").filter((l) => l !== "")).toHaveLength(1)
        const wrongToken = yield* raw(
          sessions,
          "POST",
          { ...json, authorization: `Bearer ${token}x` },
          start("wrongtoken")
        )
        expect(wrongToken.status).toBe(401)
        expect(JSON.parse(wrongToken.body)).toEqual({ error: "wrong token" })
        // reading needs the token too
        expect((yield* raw(`${sessions}/x/events`, "GET", {})).status).toBe(401)

        // the body a page can send without a preflight: text/plain
        const textPlain = yield* raw(
          sessions,
          "POST",
          { ...authorization, "content-type": "text/plain;charset=UTF-8" },
          start("textplain")
        )
        expect(textPlain.status).toBe(415)
        expect(JSON.parse(textPlain.body)).toEqual({ error: "content-type: expected application/json, got text/plain" })

        // a page of another origin, with the token (as if it had leaked): refused, and no CORS header tells it more
        const origin = yield* raw(
          sessions,
          "POST",
          { ...json, ...authorization, origin: "http://evil.example" },
          start("origin")
        )
        expect(origin.status).toBe(403)
        expect(JSON.parse(origin.body)).toEqual({ error: "origin http://evil.example is not allowed (--allow-origin)" })
        expect(origin.headers["access-control-allow-origin"]).toBeUndefined()
        const crossSite = yield* raw(
          sessions,
          "POST",
          { ...json, ...authorization, "sec-fetch-site": "cross-site" },
          start("nosite")
        )
        expect(crossSite.status).toBe(403)
        const preflight = yield* raw(sessions, "OPTIONS", {
          origin: "http://evil.example",
          "access-control-request-method": "POST"
        })
        expect(preflight.status).toBe(403)
        expect(preflight.headers["access-control-allow-origin"]).toBeUndefined()

        // DNS rebinding: the page's own name in Host, the runner's address underneath
        const rebound = yield* raw(
          sessions,
          "POST",
          { ...json, ...authorization, host: `evil.example:${new URL(runner.url).port}` },
          start("host")
        )
        expect(rebound.status).toBe(421)
        expect(JSON.parse(rebound.body)).toEqual({ error: "host evil.example is not this server's (--allow-host)" })

        // an allowed origin: its preflight is answered, and its requests carry the CORS header
        const allowedPreflight = yield* raw(sessions, "OPTIONS", {
          origin: "http://app.example:3000",
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization, content-type"
        })
        expect(allowedPreflight.status).toBe(204)
        expect(allowedPreflight.headers["access-control-allow-origin"]).toBe("http://app.example:3000")
        expect(allowedPreflight.headers["access-control-allow-headers"]).toBe("authorization, content-type")

        // a proper request, as curl sends it (Host: 127.0.0.1:PORT), and from the allowed origin
        const proper = yield* raw(
          sessions,
          "POST",
          { ...json, ...authorization, host: hostHeader, origin: "http://app.example:3000" },
          start("proper")
        )
        expect(proper.status).toBe(201)
        expect(proper.headers["access-control-allow-origin"]).toBe("http://app.example:3000")
        const id = String(JSON.parse(proper.body).session_id)
        const events = yield* getText(`${runner.url}/sessions/${id}/events`)
        expect(events).toContain('"subtype":"success"')
        expect(Fs.existsSync(Path.join(dir, "ran-proper"))).toBe(true)
        // nothing else reached the model or ran
        expect(
          server.requests.map((r) => JSON.stringify(r.body.messages[0])).filter((m) => !m.includes("proper"))
        ).toEqual([])
        expect(Fs.readdirSync(dir).filter((f) => f.startsWith("ran-"))).toEqual(["ran-proper"])
        expect(runner.output()).not.toContain(token)
      }),
    400_000
  )

  it.scopedLive(
    "without ARMATURE_SERVE_TOKEN a token is made once in a file only the user can read; its path is printed",
    () =>
      Effect.gen(function* () {
        const database = yield* Postgres.freshDatabase("armature_serve_tokenfile")
        const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-serve-tokenfile-")))
        const env = { ARMATURE_SERVE_TOKEN: undefined, ARMATURE_STATE_DIR: Path.join(dir, "state") }
        const first = yield* startRunner(database, dir, env)
        const file = Path.join(dir, "state", "serve-token")
        expect(first.output()).toContain(`token: in ${file}`)
        expect(Fs.statSync(file).mode & 0o777).toBe(0o600)
        const made = Fs.readFileSync(file, "utf8").trim()
        expect(made.length).toBeGreaterThanOrEqual(40)
        expect(first.output()).not.toContain(made)
        // a second runner of the same state directory shares it
        const second = yield* startRunner(database, dir, env)
        expect(Fs.readFileSync(file, "utf8").trim()).toBe(made)
        for (const runner of [first, second]) {
          const ok = yield* raw(`${runner.url}/sessions/nope`, "GET", { authorization: `Bearer ${made}` })
          expect(ok.status).toBe(404)
          const test = yield* raw(`${runner.url}/sessions/nope`, "GET", authorization)
          expect(test.status).toBe(401)
        }
        // a token file others may read is refused, naming the flag and the file
        const loose = Path.join(dir, "loose-token")
        Fs.writeFileSync(loose, "0123456789abcdef0123\n", { mode: 0o644 })
        Fs.chmodSync(loose, 0o644)
        const refused = yield* Effect.promise(() =>
          runCli(["serve", "--database", database, "--port", "0", "--token-file", loose], dir)
        )
        expect(refused).toMatchObject({
          code: 2,
          stderr: `armature: --token-file: ${loose} may be read by other users (mode 644); chmod 600 it\n`
        })
        const short = yield* Effect.promise(() =>
          runCli(["serve", "--database", database, "--port", "0"], dir, { ARMATURE_SERVE_TOKEN: "short" })
        )
        expect(short).toMatchObject({
          code: 2,
          stderr: "armature: ARMATURE_SERVE_TOKEN: expected a token of at least 16 characters, no spaces\n"
        })
      }),
    400_000
  )

  it.scopedLive(
    "a request never widens the runner's ceiling, stays inside its projects and within its limits",
    () =>
      Effect.gen(function* () {
        const database = yield* Postgres.freshDatabase("armature_serve_ceiling")
        const root = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-serve-ceiling-")))
        const project = Path.join(root, "project")
        const other = Path.join(root, "other")
        // both folders' settings have a SessionStart hook that leaves a mark: it runs only for a project's session
        for (const dir of [project, Path.join(project, "sub"), other]) {
          Fs.mkdirSync(Path.join(dir, ".claude"), { recursive: true })
          Fs.writeFileSync(
            Path.join(dir, ".claude", "settings.json"),
            JSON.stringify({
              hooks: {
                SessionStart: [{ hooks: [{ type: "command", command: `touch ${Path.join(dir, "hook-ran")}` }] }]
              }
            })
          )
        }
        for (const name of ["a", "b"]) ChildProcess.execFileSync("mkfifo", [Path.join(project, `gate-${name}`)])
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => {
            for (const name of ["a", "b"]) release(Path.join(project, `gate-${name}`))
          })
        )
        const server = yield* MessagesServer.make([], {
          laneOf: (body) => /mark (\w+)/.exec(JSON.stringify(body.messages[0] ?? ""))?.[1] ?? "main",
          lanes: {
            ...Object.fromEntries(
              ["a", "b"].map((name) => [
                name,
                [
                  MessagesServer.message([bash(`toolu_${name}`, `cat gate-${name}`)]),
                  MessagesServer.message([{ type: "text", text: "done" }])
                ]
              ])
            ),
            plan: [MessagesServer.message([{ type: "text", text: "planned" }])]
          }
        })
        // a runner in default mode (no --permission-mode), allowed to cat, 2 sessions and 2 streams at most
        const runner = yield* startRunner(database, project, { ANTHROPIC_BASE_URL: server.url }, [
          "--cwd",
          project,
          "--allowed-tools",
          "Bash(cat:*)",
          "--max-turns",
          "10",
          "--max-body",
          "65536",
          "--max-prompt",
          "2000",
          "--max-sessions",
          "2",
          "--max-streams",
          "2",
          "--max-session-streams",
          "1"
        ])
        const sessions = `${runner.url}/sessions`
        const send = (body: unknown) => raw(sessions, "POST", { ...json, ...authorization }, JSON.stringify(body))
        const refusal = (reply: Reply) => ({ status: reply.status, body: JSON.parse(reply.body) as unknown })

        expect(refusal(yield* send({ prompt: "mark x", permission_mode: "bypassPermissions" }))).toEqual({
          status: 403,
          body: {
            error: "permission_mode: bypassPermissions allows more than the runner's default (--permission-mode)"
          }
        })
        expect(refusal(yield* send({ prompt: "mark x", permission_mode: "acceptEdits" })).status).toBe(403)
        expect(refusal(yield* send({ prompt: "mark x", allowed_tools: ["Bash"] }))).toEqual({
          status: 403,
          body: { error: "allowed_tools: Bash is not among the runner's --allowed-tools" }
        })
        expect(refusal(yield* send({ prompt: "mark x", max_turns: 11 }))).toEqual({
          status: 403,
          body: { error: "max_turns: 11 is more than the runner's 10 (--max-turns)" }
        })
        expect(refusal(yield* send({ prompt: "mark x", cwd: other }))).toEqual({
          status: 403,
          body: { error: `cwd: ${other} is outside the runner's projects (--project)` }
        })
        // a way out through `..` or a link is the same folder
        expect((yield* send({ prompt: "mark x", cwd: `${project}/../other` })).status).toBe(403)
        Fs.symlinkSync(other, Path.join(project, "link"))
        expect((yield* send({ prompt: "mark x", cwd: Path.join(project, "link") })).status).toBe(403)
        expect(refusal(yield* send({ prompt: "mark x", cwd: Path.join(root, "missing") }))).toEqual({
          status: 400,
          body: { error: `cwd: ${Path.join(root, "missing")} is not a directory` }
        })
        expect(refusal(yield* send({ prompt: "mark x", permissions: "all" }))).toEqual({
          status: 400,
          body: { error: "invalid body: unknown field permissions" }
        })
        expect(refusal(yield* send({ prompt: "x".repeat(2001) }))).toEqual({
          status: 413,
          body: { error: "prompt: 2001 characters, more than 2000 (--max-prompt)" }
        })
        const huge = yield* raw(
          sessions,
          "POST",
          { ...json, ...authorization },
          Buffer.from(JSON.stringify({ prompt: "y".repeat(50 * 1024 * 1024) }))
        )
        // the runner answers 413 before reading it all, or cuts the connection once it said so
        expect([413, -1]).toContain(huge.status)
        if (huge.status === 413)
          expect(JSON.parse(huge.body)).toEqual({ error: "body larger than 65536 bytes (--max-body)" })

        // within the ceiling: a stricter mode, a folder inside the project
        const planned = yield* send({ prompt: "mark plan", permission_mode: "plan", cwd: Path.join(project, "sub") })
        expect(planned.status).toBe(201)
        const plannedId = String(JSON.parse(planned.body).session_id)
        expect(yield* getText(`${sessions}/${plannedId}/events`)).toContain('"result":"planned"')
        expect(Fs.existsSync(Path.join(project, "sub", "hook-ran"))).toBe(true)

        // two sessions run (each blocked in its call); a third is refused until one ends
        const a = String(JSON.parse((yield* send({ prompt: "mark a" })).body).session_id)
        const b = String(JSON.parse((yield* send({ prompt: "mark b" })).body).session_id)
        const third = yield* send({ prompt: "mark a" })
        expect(third.status).toBe(429)
        expect(third.headers["retry-after"]).toBe("5")
        expect(JSON.parse(third.body)).toEqual({
          error: "this runner runs 2 sessions, its most (--max-sessions); try again later"
        })
        // one stream per session, two on the runner
        const open = (id: string) => Effect.promise(() => fetch(`${sessions}/${id}/events`, { headers: authorization }))
        const streamA = yield* open(a)
        expect(streamA.status).toBe(200)
        const againA = yield* open(a)
        expect(againA.status).toBe(429)
        expect(againA.headers.get("retry-after")).toBe("5")
        expect(yield* Effect.promise(() => againA.json())).toEqual({
          error: `session ${a} has 1 event streams open here, its most (--max-session-streams); try again later`
        })
        const streamB = yield* open(b)
        expect(streamB.status).toBe(200)
        const onePast = yield* open(plannedId)
        expect(onePast.status).toBe(429)
        expect(yield* Effect.promise(() => onePast.json())).toEqual({
          error: "this runner has 2 event streams open, its most (--max-streams); try again later"
        })
        yield* until("session a's call to read its gate", () => release(Path.join(project, "gate-a")))
        yield* until("session b's call to read its gate", () => release(Path.join(project, "gate-b")))
        for (const stream of [streamA, streamB]) {
          expect(yield* Effect.promise(() => stream.text())).toContain('"result":"done"')
        }
        // the streams that ended gave their places back
        expect(yield* getText(`${sessions}/${plannedId}/events`)).toContain('"result":"planned"')

        // nothing of the other folder was loaded or run, and no refused request reached the model
        expect(Fs.existsSync(Path.join(other, "hook-ran"))).toBe(false)
        expect(server.requests.map((r) => /mark (\w+)/.exec(JSON.stringify(r.body.messages[0]))?.[1]).sort()).toEqual([
          "a",
          "a",
          "b",
          "b",
          "plan"
        ])
      }),
    400_000
  )

  it.scopedLive(
    "the acceptance sequence on a default runner: each refused request runs nothing, the other folder's hook never runs, only the proper request runs",
    () =>
      Effect.gen(function* () {
        const database = yield* Postgres.freshDatabase("armature_serve_heldout")
        const root = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-serve-heldout-")))
        const project = Path.join(root, "project")
        const other = Path.join(root, "other")
        Fs.mkdirSync(project)
        Fs.mkdirSync(Path.join(other, ".claude"), { recursive: true })
        Fs.writeFileSync(
          Path.join(other, ".claude", "settings.json"),
          JSON.stringify({
            permissions: { defaultMode: "bypassPermissions" },
            hooks: { SessionStart: [{ hooks: [{ type: "command", command: `touch ${Path.join(root, "hook-ran")}` }] }] }
          })
        )
        const names = ["notoken", "textplain", "origin", "host", "bypass", "cwd", "huge", "proper"]
        const server = yield* MessagesServer.make([], {
          laneOf: (body) => /mark (\w+)/.exec(JSON.stringify(body.messages[0] ?? ""))?.[1] ?? "main",
          lanes: Object.fromEntries(
            names.map((name) => [
              name,
              [
                MessagesServer.message([bash(`toolu_${name}`, `touch ran-${name}`)]),
                MessagesServer.message([{ type: "text", text: "done" }])
              ]
            ])
          )
        })
        // default permission mode; the one command the proper session needs is allowed
        const runner = yield* startRunner(database, project, { ANTHROPIC_BASE_URL: server.url }, [
          "--cwd",
          project,
          "--allowed-tools",
          "Bash(touch:*)"
        ])
        const sessions = `${runner.url}/sessions`
        const body = (name: string, extra: Record<string, unknown> = {}) =>
          JSON.stringify({ prompt: `mark ${name}`, ...extra })
        const port = new URL(runner.url).port
        const statuses = [
          (yield* raw(sessions, "POST", json, body("notoken"))).status,
          (yield* raw(sessions, "POST", { ...authorization, "content-type": "text/plain" }, body("textplain"))).status,
          (yield* raw(sessions, "POST", { ...json, ...authorization, origin: "http://evil.example" }, body("origin")))
            .status,
          (yield* raw(sessions, "POST", { ...json, ...authorization, host: `evil.example:${port}` }, body("host")))
            .status,
          (yield* raw(
            sessions,
            "POST",
            { ...json, ...authorization },
            body("bypass", { permission_mode: "bypassPermissions" })
          )).status,
          (yield* raw(sessions, "POST", { ...json, ...authorization }, body("cwd", { cwd: other }))).status
        ]
        expect(statuses).toEqual([401, 415, 403, 421, 403, 403])
        const huge = yield* raw(
          sessions,
          "POST",
          { ...json, ...authorization },
          Buffer.from(JSON.stringify({ prompt: `mark huge ${"y".repeat(50 * 1024 * 1024)}` }))
        )
        expect([413, -1]).toContain(huge.status)
        const proper = yield* raw(sessions, "POST", { ...json, ...authorization }, body("proper"))
        expect(proper.status).toBe(201)
        const id = String(JSON.parse(proper.body).session_id)
        expect(yield* getText(`${sessions}/${id}/events`)).toContain('"subtype":"success"')
        // only the proper request reached the model and ran; the other folder's hook never ran
        expect(Fs.readdirSync(root).sort()).toEqual(["other", "project"])
        expect(Fs.readdirSync(project).filter((f) => f.startsWith("ran-"))).toEqual(["ran-proper"])
        expect(Fs.readdirSync(other)).toEqual([".claude"])
        expect(server.requests.map((r) => /mark (\w+)/.exec(JSON.stringify(r.body.messages[0]))?.[1])).toEqual([
          "proper",
          "proper"
        ])
      }),
    400_000
  )
})
