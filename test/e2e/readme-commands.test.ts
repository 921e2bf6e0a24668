/**
 * Every command line of the README's sh blocks, run as written: each `node bin/armature.mjs …` line runs in a
 * fresh project directory (a copy of examples/, src/ and README.md, a git repository) against this checkout's CLI,
 * the model being a scripted Messages API on loopback, `serve` a real runner on a fresh PostgreSQL database and the
 * OTLP endpoint a real HTTP listener. What a line must show is checked too. The lines this test does not run are
 * listed with the reason and the test that runs them instead; a README line in neither list fails the test, so
 * the README cannot gain a command nobody runs.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { bin } from "../fixtures/Cli.js"
import { codeBlocks } from "../fixtures/DocBlocks.js"
import * as MessagesServer from "../fixtures/MessagesServer.js"
import { freshDatabase } from "../fixtures/Postgres.js"

const root = Path.resolve(import.meta.dirname, "../..")
const readme = Fs.readFileSync(Path.join(root, "README.md"), "utf8")

/** The README's command lines: sh blocks, comment-only and blank lines dropped, `\` continuations joined. */
const commandLines = (): ReadonlyArray<string> =>
  codeBlocks(readme)
    .filter((block) => block.lang === "sh")
    .flatMap((block) => block.code.replace(/\\\n\s*/g, "").split("\n"))
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))

/** Lines not run here, by their start, with where they are run instead. */
const notRunHere: ReadonlyArray<readonly [string, string]> = [
  ["npm install effect-armature ", "pack.test.ts runs it in a fresh project with the packed tarball"],
  ["npm install -D vitest@3 ", "pack.test.ts runs it in that project and runs docs/library.md's test file"],
  ["npm ci ", "CI's .ci/run installs the clone with it before running this suite"],
  ["npm test ", "the suite this test belongs to"],
  ["npm run test:unit ", "a part of this suite (vitest --mode unit)"],
  [
    "node bin/armature.mjs mcp login ",
    "needs a server that asks for OAuth and a browser: mcp-oauth.test.ts logs in against a real authorization server on loopback"
  ]
]

interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

const shell = (line: string, cwd: string, env: Record<string, string | undefined>, stdin?: string) =>
  new Promise<Ran>((resolve) => {
    const child = spawn("bash", ["-c", line], {
      cwd,
      env: { ...process.env, ...env },
      stdio: [stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      detached: true
    })
    if (stdin !== undefined) child.stdin?.end(stdin)
    let stdout = ""
    let stderr = ""
    child.stdout?.on("data", (d: Buffer) => {
      stdout += d.toString()
    })
    child.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString()
    })
    const timer = setTimeout(() => kill(child), 120_000)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

const kill = (child: ChildProcess) => {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
  } catch {
    // already gone
  }
}

/** A fresh project: the README's commands refer to examples/, src/, README.md and .claude/settings.json. */
const makeProject = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-readme-"))
  for (const part of ["examples", "src"]) Fs.cpSync(Path.join(root, part), Path.join(dir, part), { recursive: true })
  Fs.copyFileSync(Path.join(root, "README.md"), Path.join(dir, "README.md"))
  // examples/library.ts imports the sources, which need this checkout's dependencies (and tsx)
  Fs.symlinkSync(Path.join(root, "node_modules"), Path.join(dir, "node_modules"))
  Fs.writeFileSync(Path.join(dir, ".gitignore"), "node_modules\n.armature/\n")
  Fs.mkdirSync(Path.join(dir, ".claude"))
  Fs.writeFileSync(Path.join(dir, ".claude/settings.json"), '{ "permissions": { "deny": ["Bash(git push:*)"] } }\n')
  return dir
}

/** An OTLP/HTTP endpoint that records the paths posted to it. */
const otlpListener = Effect.acquireRelease(
  Effect.async<{ server: Http.Server; url: string; paths: Array<string> }>((resume) => {
    const paths: Array<string> = []
    const server = Http.createServer((req, res) => {
      paths.push(req.url ?? "")
      req.resume()
      req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end("{}"))
    })
    server.listen(0, "127.0.0.1", () =>
      resume(Effect.succeed({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths }))
    )
  }),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.close(() => resume(Effect.void))
    })
)

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = Http.createServer()
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port
      server.close(() => resolve(port))
    })
  })

const waitForHttp = async (url: string, deadline: number): Promise<void> => {
  while (Date.now() < deadline) {
    const up = await fetch(url).then(
      () => true,
      () => false
    )
    if (up) return
    await new Promise((r) => setTimeout(r, 250))
  }
  throw new Error(`nothing answered at ${url}`)
}

describe("the README's commands", () => {
  it("every command line is run here or named with the test that runs it", () => {
    const unaccounted = commandLines().filter(
      (line) => !line.startsWith("node bin/armature.mjs ") && !line.includes("| node bin/armature.mjs ")
    )
    const known = (line: string) =>
      notRunHere.some(([start]) => `${line} `.startsWith(start)) ||
      line.startsWith("node --import tsx examples/library.ts") ||
      line.startsWith("OTEL_EXPORTER_OTLP_ENDPOINT=") ||
      line.startsWith("curl ")
    expect(unaccounted.filter((line) => !known(line))).toEqual([])
  })

  it.scoped(
    "each runs as written in a fresh project and shows what the README says it does",
    () =>
      Effect.gen(function* () {
        const project = makeProject()
        yield* Effect.addFinalizer(() =>
          Effect.promise(() => Fs.promises.rm(project, { recursive: true, force: true }))
        )
        yield* Effect.promise(() =>
          shell("git init -q . && git add -A && git -c user.email=t@t -c user.name=t commit -qm init", project, {})
        )
        const runs = commandLines().filter(
          (line) => /\brun\b/.test(line) && line.includes("bin/armature.mjs run")
        ).length
        const model = yield* MessagesServer.make(
          Array.from({ length: runs + 2 }, (_, i) => MessagesServer.message([{ type: "text", text: `Done ${i}.` }]))
        )
        const otlp = yield* otlpListener
        const database = yield* freshDatabase("readme")
        const port = yield* Effect.promise(freePort)
        const runnerPort = yield* Effect.promise(freePort)
        const env = {
          HOME: project,
          ARMATURE_STATE_DIR: undefined,
          ANTHROPIC_API_KEY: "test-key",
          ANTHROPIC_BASE_URL: model.url,
          ANTHROPIC_MODEL: undefined,
          OTEL_EXPORTER_OTLP_ENDPOINT: undefined,
          NO_COLOR: "1"
        }
        const cli = (line: string) => line.replaceAll("node bin/armature.mjs", `node ${bin}`)
        let durableSession = ""
        let serve: ChildProcess | undefined
        yield* Effect.addFinalizer(() => Effect.sync(() => serve !== undefined && kill(serve)))
        const seen: Array<string> = []

        for (const line of commandLines()) {
          if (notRunHere.some(([start]) => `${line} `.startsWith(start))) continue
          seen.push(line)
          if (line.startsWith("node bin/armature.mjs serve ")) {
            const written = cli(line)
              .replace("postgres://user@db:5432/agents", database)
              .replace("--port 8787", `--port ${port}`)
              .replace("--runner-port 34431", `--runner-port ${runnerPort}`)
            serve = spawn("bash", ["-c", `exec ${written}`], {
              cwd: project,
              env: { ...process.env, ...env },
              stdio: ["ignore", "pipe", "pipe"],
              detached: true
            })
            let serveErr = ""
            serve.stderr?.on("data", (d: Buffer) => {
              serveErr += d.toString()
            })
            yield* Effect.promise(() =>
              waitForHttp(`http://127.0.0.1:${port}/sessions/none`, Date.now() + 90_000).catch((e: Error) => {
                throw new Error(`${e.message}\n${serveErr}`)
              })
            )
            continue
          }
          const written = line.startsWith("curl ")
            ? line.replace("localhost:8787", `127.0.0.1:${port}`)
            : line.startsWith("OTEL_EXPORTER_OTLP_ENDPOINT=")
              ? cli(line.replace("http://127.0.0.1:4318", otlp.url))
              : cli(line.replace("SESSION_ID", durableSession))
          const stdin = line.includes("mcp serve")
            ? `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "readme", version: "1" } } })}\n`
            : undefined
          const ran = yield* Effect.promise(() => shell(written, project, env, stdin))
          const context = `${line}\nexit ${ran.code}\nstdout: ${ran.stdout.slice(-2000)}\nstderr: ${ran.stderr.slice(-2000)}`
          // `permissions check` exits 3 for "deny" (the project's settings deny git push); everything else succeeds.
          const expected = line.includes("permissions check") ? 3 : 0
          expect(ran.code, context).toBe(expected)
          if (line.includes("run --durable")) {
            const init = ran.stdout
              .split("\n")
              .filter((l) => l.startsWith("{"))
              .map((l) => JSON.parse(l) as { type: string; session_id?: string })
              .find((e) => e.session_id !== undefined)
            durableSession = init?.session_id ?? ""
            expect(durableSession, context).not.toBe("")
          }
          if (line.includes("node bin/armature.mjs sessions")) expect(ran.stdout, context).toContain(durableSession)
          if (line.startsWith("curl ")) expect(JSON.parse(ran.stdout), context).toHaveProperty("session_id")
          if (line.includes("mcp serve")) expect(ran.stdout, context).toContain('"serverInfo"')
          if (line.includes("tools search")) expect(ran.stdout, context).toContain("WebFetch")
          if (line.includes("--output json")) expect(JSON.parse(ran.stdout), context).toHaveProperty("summary")
        }
        expect(otlp.paths, "the CLI exported over OTLP/HTTP").toContain("/v1/traces")
        for (const file of ["audit.jsonl", "turn.html", "session.html"]) {
          expect(Fs.existsSync(Path.join(project, file)), file).toBe(true)
        }
        expect(model.requests.length).toBeGreaterThanOrEqual(runs)
        expect(seen.length).toBeGreaterThanOrEqual(20)
      }),
    600_000
  )
})
