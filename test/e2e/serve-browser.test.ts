/**
 * `armature serve` against a web page: headless chromium (through playwright-core) loads a page of another origin (a
 * second loopback server) whose script posts to the runner as any page can, without a preflight (`no-cors`,
 * `text/plain`), and with one (`cors`, JSON, a guessed token). The runner refuses both; no session is made and no
 * Bash call runs, though the runner would run any call (bypassPermissions).
 */
import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { chromium } from "playwright-core"
import { runCli } from "../fixtures/Cli.js"
import * as MessagesServer from "../fixtures/MessagesServer.js"
import * as Postgres from "../fixtures/Postgres.js"
import { startRunner } from "../fixtures/ServeRunner.js"

const browserPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"

/** A loopback server of one page, whose script runs `script` once loaded and puts what it says in `#done`. */
const pageServer = (script: string) =>
  Effect.acquireRelease(
    Effect.async<Http.Server>((resume) => {
      const server = Http.createServer((_request, response) => {
        response.writeHead(200, { "content-type": "text/html" })
        response.end(`<!doctype html><html><body><pre id="done"></pre><script>${script}</script></body></html>`)
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) => Effect.sync(() => server.close())
  )

describe("armature serve from a web page in headless chromium", () => {
  it.scopedLive(
    "a page of another origin posting text/plain without a preflight (no-cors), or JSON with one, is refused; nothing runs",
    () =>
      Effect.gen(function* () {
        const database = yield* Postgres.freshDatabase("armature_serve_browser")
        const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-serve-browser-")))
        const model = yield* MessagesServer.make([
          MessagesServer.message([
            { type: "tool_use", id: "toolu_page", name: "Bash", input: { command: `touch ${dir}/ran-page` } }
          ]),
          MessagesServer.message([{ type: "text", text: "done" }])
        ])
        const runner = yield* startRunner(database, dir, { ANTHROPIC_BASE_URL: model.url })
        const body = JSON.stringify({ prompt: "mark page" })
        const script = `
          const target = ${JSON.stringify(`${runner.url}/sessions`)};
          const body = ${JSON.stringify(body)};
          (async () => {
            const said = [];
            await fetch(target, { method: "POST", mode: "no-cors", body, headers: { "content-type": "text/plain" } })
              .then((r) => said.push("no-cors: " + r.type), (e) => said.push("no-cors: " + e.message));
            await fetch(target, { method: "POST", body, headers: { "content-type": "application/json",
              authorization: "Bearer guessed-token-0123456789" } })
              .then((r) => said.push("cors: " + r.status), (e) => said.push("cors: failed"));
            document.getElementById("done").textContent = said.join("\\n");
          })();`
        const page = yield* pageServer(script)
        const pageUrl = `http://localhost:${(page.address() as AddressInfo).port}/`
        const seen = yield* Effect.promise(async () => {
          const browser = await chromium.launch({
            executablePath: browserPath,
            args: [
              "--headless",
              "--no-sandbox",
              "--disable-gpu",
              "--disable-quic",
              "--no-first-run",
              "--disable-background-networking",
              "--disable-component-update",
              "--disable-sync"
            ]
          })
          try {
            const tab = await browser.newPage()
            // what reached the runner, as the browser saw it on the wire
            const answers: Array<string> = []
            tab.on("response", (r) => {
              if (r.url().startsWith(runner.url)) answers.push(`${r.request().method()} ${r.status()}`)
            })
            await tab.goto(pageUrl, { waitUntil: "load" })
            await tab.waitForSelector("#done:not(:empty)", { state: "attached", timeout: 60_000 })
            const said = (await tab.textContent("#done")) ?? ""
            return { said, answers }
          } finally {
            await browser.close()
          }
        })
        // the page learns nothing: an opaque answer, and a failed CORS request
        expect(seen.said).toBe("no-cors: opaque\ncors: failed")
        // the simple POST (no token, text/plain, a foreign Origin) got 403; the other never got past its preflight
        expect(seen.answers).toEqual(["POST 403"])
        // no session was made, the model was never asked, nothing ran
        const listed = yield* Effect.promise(() => runCli(["sessions", "--json", "--database", database], dir))
        expect(listed.stdout).toBe("")
        expect(model.requests).toEqual([])
        expect(Fs.existsSync(Path.join(dir, "ran-page"))).toBe(false)
      }),
    300_000
  )
})
