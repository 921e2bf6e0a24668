import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { NodeHttpClient } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Option, TestClock } from "effect"
import { afterAll, beforeAll } from "vitest"
import type { ToolFailure } from "../../../src/domain/Errors.js"
import * as Tool from "../../../src/domain/Tool.js"
import * as WebFetch from "../../../src/layers/tools/WebFetch.js"

let server: Http.Server
let base = ""
let port = 0
let slowRequested: () => void = () => {}
let slowSeen: Promise<void> = Promise.resolve()
let infiniteBytesSent = 0
let infiniteClosed: Promise<void> = Promise.resolve()

const html = `<!doctype html><html><head><title>T</title><style>p { color: red }</style></head>
<body><h1>Hello</h1><p>A <a href="https://example.com/x">link</a> and <b>bold</b>.</p>
<script>alert(1)</script><ul><li>one</li><li>two</li></ul></body></html>`

beforeAll(async () => {
  slowSeen = new Promise((resolve) => {
    slowRequested = resolve
  })
  let closeInfinite: () => void = () => {}
  infiniteClosed = new Promise((resolve) => {
    closeInfinite = resolve
  })
  server = Http.createServer((req, res) => {
    const path = req.url ?? "/"
    const chain = /^\/chain\/(\d+)$/.exec(path)
    if (path === "/html") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
      res.end(html)
    } else if (path === "/text") {
      res.writeHead(200, { "content-type": "text/plain" })
      res.end("plain <b>text</b>")
    } else if (path === "/json") {
      res.writeHead(200, { "content-type": "application/json" })
      res.end('{"a":1}')
    } else if (path === "/png") {
      res.writeHead(200, { "content-type": "image/png" })
      res.end(Buffer.from([137, 80, 78, 71]))
    } else if (path === "/same-host") {
      res.writeHead(302, { location: "/html" })
      res.end()
    } else if (path === "/cross-host") {
      res.writeHead(301, { location: `http://localhost:${port}/html` })
      res.end()
    } else if (path === "/no-location") {
      res.writeHead(307)
      res.end()
    } else if (chain !== null) {
      const n = Number(chain[1])
      if (n === 0) {
        res.writeHead(200, { "content-type": "text/plain" })
        res.end("end of chain")
      } else {
        res.writeHead(302, { location: `/chain/${n - 1}` })
        res.end()
      }
    } else if (path === "/infinite") {
      res.writeHead(200, { "content-type": "text/plain" })
      const chunk = Buffer.alloc(64 * 1024, "a")
      const pump = () => {
        while (!res.destroyed) {
          infiniteBytesSent += chunk.length
          if (!res.write(chunk)) {
            res.once("drain", pump)
            return
          }
        }
      }
      res.on("close", () => closeInfinite())
      pump()
    } else if (path === "/slow") {
      slowRequested()
    } else {
      res.writeHead(404, { "content-type": "text/plain" })
      res.end("nope")
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  port = (server.address() as AddressInfo).port
  base = `http://127.0.0.1:${port}`
})

afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

const context = Effect.map(
  Tool.makeSessionState,
  (state): Tool.ToolContext => ({
    toolUseId: "toolu_1",
    cwd: "/",
    permissionMode: "default",
    progress: () => Effect.void,
    interrupted: Effect.never,
    state
  })
)

/** Fetches through a WebFetch tool built over a real undici client; the result is the tool_result content. */
const fetch = (input: { url: string; prompt?: string }, options: WebFetch.Options = {}) =>
  Effect.gen(function* () {
    const tool = yield* WebFetch.make(options)
    const ctx = yield* context
    const output = yield* tool.call(input, ctx)
    return tool.toResult(Tool.isWithModifier(output) ? output.output : output)
  }).pipe(Effect.provide(NodeHttpClient.layerUndici))

const failure = (effect: Effect.Effect<unknown, ToolFailure | unknown>) =>
  Effect.map(Effect.flip(effect), (error) => (error as ToolFailure).message)

describe("WebFetch", () => {
  it.effect("converts HTML to Markdown with a header", () =>
    Effect.gen(function* () {
      const result = yield* fetch({ url: `${base}/html`, prompt: "What is the heading?" })
      expect(result).toBe(
        `URL: ${base}/html\nStatus: 200 OK\nContent-Type: text/html; charset=utf-8\nPrompt: What is the heading?\n\n` +
          "T\n\n# Hello\n\nA [link](https://example.com/x) and **bold**.\n\n-   one\n-   two"
      )
    })
  )

  it.effect("passes text and JSON through", () =>
    Effect.gen(function* () {
      expect(yield* fetch({ url: `${base}/text` })).toBe(
        `URL: ${base}/text\nStatus: 200 OK\nContent-Type: text/plain\n\nplain <b>text</b>`
      )
      expect(yield* fetch({ url: `${base}/json` })).toBe(
        `URL: ${base}/json\nStatus: 200 OK\nContent-Type: application/json\n\n{"a":1}`
      )
    })
  )

  it.effect("follows a same-host redirect", () =>
    Effect.gen(function* () {
      const result = yield* fetch({ url: `${base}/same-host` })
      expect(String(result).split("\n").slice(0, 4)).toEqual([
        `URL: ${base}/html`,
        `Redirected from: ${base}/same-host`,
        "Status: 200 OK",
        "Content-Type: text/html; charset=utf-8"
      ])
    })
  )

  it.effect("reports a cross-host redirect without following it", () =>
    Effect.gen(function* () {
      const result = yield* fetch({ url: `${base}/cross-host` })
      expect(result).toBe(
        "REDIRECT DETECTED: The URL redirects to a different host.\n\n" +
          `Original URL: ${base}/cross-host\nRedirect URL: http://localhost:${port}/html\nStatus: 301 Moved Permanently\n\n` +
          "The redirect was not followed. To fetch the content, call WebFetch again with the redirect URL."
      )
    })
  )

  it.effect("follows 10 redirects and refuses the 11th", () =>
    Effect.gen(function* () {
      const ten = yield* fetch({ url: `${base}/chain/10` })
      expect(ten).toBe(
        `URL: ${base}/chain/0\nRedirected from: ${base}/chain/10\nStatus: 200 OK\nContent-Type: text/plain\n\nend of chain`
      )
      expect(yield* failure(fetch({ url: `${base}/chain/11` }))).toBe(
        `Too many redirects fetching ${base}/chain/11 (more than 10)`
      )
    })
  )

  it.effect("a redirect without Location is an error", () =>
    Effect.gen(function* () {
      expect(yield* failure(fetch({ url: `${base}/no-location` }))).toBe(
        `Redirect 307 from ${base}/no-location has no valid Location header`
      )
    })
  )

  it.effect("caps the body at 10 MiB and stops downloading", () =>
    Effect.gen(function* () {
      const result = String(yield* fetch({ url: `${base}/infinite` }))
      const header = `URL: ${base}/infinite\nStatus: 200 OK\nContent-Type: text/plain\n\n`
      const note =
        "\n\n[Content truncated: the response is larger than 10485760 bytes; only the first 10485760 bytes were read.]"
      expect(result.startsWith(header)).toBe(true)
      expect(result.endsWith(note)).toBe(true)
      expect(result.length).toBe(header.length + WebFetch.maxBodyBytes + note.length)
      yield* Effect.promise(() => infiniteClosed)
      expect(infiniteBytesSent).toBeLessThan(64 * 1024 * 1024)
    })
  )

  it.effect("times out after 30 s on a server that never answers", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(Effect.exit(fetch({ url: `${base}/slow` })))
      yield* Effect.raceFirst(
        Effect.promise(() => slowSeen),
        Effect.asVoid(Fiber.await(fiber))
      )
      yield* TestClock.adjust("29 seconds")
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      yield* TestClock.adjust("1 second")
      const exit = yield* Fiber.join(fiber)
      expect(Exit.isFailure(exit)).toBe(true)
      expect(yield* failure(exit)).toBe(`WebFetch timed out after 30000 ms fetching ${base}/slow`)
    })
  )

  it.effect("a 404 is a failure with the status", () =>
    Effect.gen(function* () {
      expect(yield* failure(fetch({ url: `${base}/missing` }))).toBe(
        `Request to ${base}/missing failed with status 404 Not Found`
      )
    })
  )

  it.effect("refuses binary content", () =>
    Effect.gen(function* () {
      expect(yield* failure(fetch({ url: `${base}/png` }))).toBe(
        `WebFetch cannot read content of type image/png (from ${base}/png)`
      )
    })
  )

  it.effect("a refused connection is a failure naming the URL", () =>
    Effect.gen(function* () {
      const message = yield* failure(fetch({ url: "http://127.0.0.1:1/x" }))
      expect(message.startsWith("Failed to fetch http://127.0.0.1:1/x: ")).toBe(true)
      expect(message).toContain("ECONNREFUSED")
    })
  )

  it.effect("validates URLs and declares flags, resources and summary", () =>
    Effect.gen(function* () {
      const tool = yield* WebFetch.make()
      const ctx = yield* context
      const invalid = (url: string) => Effect.map(Effect.flip(tool.validate({ url }, ctx)), (e) => e.message)
      expect(yield* invalid("not a url")).toBe("Invalid URL: not a url")
      expect(yield* invalid("ftp://example.com/x")).toBe(
        'Unsupported URL protocol "ftp:": WebFetch only fetches http:// and https:// URLs'
      )
      expect(yield* invalid("https://u:p@example.com/")).toBe("URLs with a user name or password are not supported")
      expect(yield* invalid(`https://example.com/${"a".repeat(2000)}`)).toBe(
        "URL is too long (2020 characters; the limit is 2000)"
      )
      yield* tool.validate({ url: "https://example.com/a" }, ctx)
      expect(tool.resources({ url: "https://example.com:8443/a?b" })).toEqual([
        { key: "url:example.com:8443", access: "read" }
      ])
      expect(tool.summarize({ url: "https://example.com/a" })).toBe("https://example.com/a")
      expect(tool.isReadOnly({ url: "https://example.com" })).toBe(true)
      expect(tool.isConcurrencySafe({ url: "https://example.com" })).toBe(true)
      expect(tool.category).toBe("network")
      expect(Tool.isDeferred(tool)).toBe(true)
    }).pipe(Effect.provide(NodeHttpClient.layerUndici))
  )

  it("permits redirects only to the same protocol, port and host (www. ignored)", () => {
    const ok = (a: string, b: string) => WebFetch.isPermittedRedirect(new URL(a), new URL(b))
    expect(ok("https://a.com/x", "https://a.com/y")).toBe(true)
    expect(ok("https://a.com/x", "https://www.a.com/y")).toBe(true)
    expect(ok("https://a.com/x", "https://b.com/y")).toBe(false)
    expect(ok("http://a.com/x", "https://a.com/x")).toBe(false)
    expect(ok("https://a.com/x", "https://a.com:8443/x")).toBe(false)
  })
})
