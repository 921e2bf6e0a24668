import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { runCli } from "../fixtures/Cli.js"
import * as MessagesServer from "../fixtures/MessagesServer.js"
import * as Postgres from "../fixtures/Postgres.js"
import { authorization, getText, startRunner, token } from "../fixtures/ServeRunner.js"

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
    240_000
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
    240_000
  )
})
