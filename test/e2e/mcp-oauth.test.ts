/**
 * OAuth for HTTP MCP servers, end to end against a real authorization server and protected MCP server on
 * 127.0.0.1 (test/fixtures/mcp/OAuthServer.ts): `exec` without credentials fails with the text naming
 * `armature mcp login` (and registers no client); `mcp login` discovers, registers, sends the "browser" (this
 * test, with fetch) to the authorization URL it prints and gets the code on its loopback listener; the tokens are
 * kept 0600 in a 0700 directory; `exec` then calls the tool, refreshing on a 401 and on expiry; `mcp list` shows
 * each state; `mcp logout` removes the tokens; no token ever appears in output, transcript or timeline.
 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { bin, runCli } from "../fixtures/Cli.js"
import * as OAuthServer from "../fixtures/mcp/OAuthServer.js"

const call = JSON.stringify({ type: "tool_use", id: "w1", name: "mcp__docs__whoami", input: {} })

interface Result {
  readonly tool_use_id: string
  readonly is_error: boolean
  readonly content: string | ReadonlyArray<{ readonly text?: string }>
}

const resultOf = (stdout: string): Result => {
  const parsed = JSON.parse(stdout) as { results?: ReadonlyArray<Result> } | ReadonlyArray<Result>
  const results = Array.isArray(parsed) ? parsed : ((parsed as { results?: ReadonlyArray<Result> }).results ?? [])
  const found = results.find((r) => r.tool_use_id === "w1")
  if (found === undefined) throw new Error(`no result in ${stdout}`)
  return found
}

const textOf = (r: Result) => (typeof r.content === "string" ? r.content : r.content.map((b) => b.text ?? "").join(""))

/** Runs `armature mcp login docs`, following the printed URL with fetch as a browser would (auto-approved). */
const login = (dir: string, env: Record<string, string>) =>
  new Promise<{ code: number; stdout: string; stderr: string; landed: number }>((resolve) => {
    const child = spawn(process.execPath, [bin, "mcp", "login", "docs", "--mcp-config", "servers.json"], {
      cwd: dir,
      env: { ...process.env, HOME: dir, ARMATURE_STATE_DIR: Path.join(dir, ".state"), ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    let landed = 0
    let followed = false
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString()
      const url = /^\s+(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)$/m.exec(stdout)?.[1]
      if (url !== undefined && !followed) {
        followed = true
        // the browser: the authorization server redirects to the loopback listener, which answers the page
        void fetch(url).then(
          (res) => {
            landed = res.status
          },
          () => {
            landed = -1
          }
        )
      }
    })
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr, landed }))
  })

describe("MCP OAuth (processes, a real authorization server on 127.0.0.1)", () => {
  it("login (discovery, registration, PKCE), tokens 0600, refresh on 401 and expiry, list, logout, no token leaks", async () => {
    const server = await OAuthServer.start()
    const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-oauth-")))
    try {
      const configDir = Path.join(dir, "config")
      const env = { ARMATURE_CONFIG_DIR: configDir, MCP_TIMEOUT: "20000", BROWSER: "" }
      Fs.writeFileSync(
        Path.join(dir, "servers.json"),
        JSON.stringify({ mcpServers: { docs: { type: "http", url: server.url } } })
      )
      Fs.writeFileSync(Path.join(dir, "call.json"), `[${call}]`)
      const exec = (...extra: Array<string>) =>
        runCli(
          [
            "exec",
            "call.json",
            "--output",
            "json",
            "--mcp-config",
            "servers.json",
            "--allowed-tools",
            "mcp__docs",
            ...extra
          ],
          dir,
          env
        )
      const list = () => runCli(["mcp", "list", "--mcp-config", "servers.json"], dir, env)

      // headless, before any login: a clear error naming the command, and no client registered
      const before = await exec()
      expect(resultOf(before.stdout).is_error).toBe(true)
      expect(before.stderr).toContain(
        "MCP server docs: needs authorization (OAuth): run `armature mcp login docs` in a terminal, then try again"
      )
      expect(server.seen.registrations).toBe(0)
      expect((await list()).stdout).toContain("docs: needs login (armature mcp login docs)")

      // the login
      const loggedIn = await login(dir, env)
      expect(loggedIn.code, loggedIn.stderr).toBe(0)
      expect(loggedIn.landed).toBe(200)
      expect(loggedIn.stdout).toContain("To log in to MCP server docs, open this URL in a browser:")
      expect(loggedIn.stdout).toContain("Logged in to docs: 1 tool.")
      expect(server.seen.registrations).toBe(1)
      expect(server.seen.authorizations).toBe(1)
      expect(server.seen.grants).toEqual(["authorization_code"])
      expect(server.seen.refusals).toEqual([])
      expect(server.seen.resources).toEqual([server.url])
      const credentialsDir = Path.join(configDir, "mcp-oauth")
      const files = Fs.readdirSync(credentialsDir)
      expect(files).toHaveLength(1)
      const file = Path.join(credentialsDir, files[0])
      expect(Fs.statSync(file).mode & 0o777).toBe(0o600)
      expect(Fs.statSync(credentialsDir).mode & 0o777).toBe(0o700)
      expect(Fs.readFileSync(file, "utf8")).toContain(server.seen.issued[0])

      // connected: the tool runs, and the record carries no token
      const listed = await list()
      expect(listed.stdout).toContain("docs: connected, 1 tool")
      const ok = await exec("--transcript", "t1.jsonl", "--timeline", "t1.html")
      expect(ok.code, ok.stderr).toBe(0)
      expect(resultOf(ok.stdout).is_error).toBe(false)
      expect(textOf(resultOf(ok.stdout))).toBe("you are the fixture user")

      // the server expires the access token: 401, refresh, retry
      const unauthorizedBefore = server.seen.unauthorized
      server.expireAccessTokens()
      const afterExpiry = await exec()
      expect(resultOf(afterExpiry.stdout).is_error, afterExpiry.stdout).toBe(false)
      expect(server.seen.grants).toEqual(["authorization_code", "refresh_token"])
      expect(server.seen.unauthorized).toBeGreaterThan(unauthorizedBefore)

      // the stored token's own expiry passed: refreshed before connecting, without a 401
      const stored = JSON.parse(Fs.readFileSync(file, "utf8")) as Record<string, unknown>
      Fs.writeFileSync(file, JSON.stringify({ ...stored, obtainedAt: Date.now() - 7200_000 }), { mode: 0o600 })
      const unauthorizedThen = server.seen.unauthorized
      const refreshed = await exec("--transcript", "t2.jsonl")
      expect(resultOf(refreshed.stdout).is_error, refreshed.stdout).toBe(false)
      expect(server.seen.grants).toEqual(["authorization_code", "refresh_token", "refresh_token"])
      expect(server.seen.unauthorized).toBe(unauthorizedThen)
      expect(server.seen.refusals).toEqual([])
      expect(Fs.statSync(file).mode & 0o777).toBe(0o600)

      // no token anywhere but the credentials file
      const said = [before, loggedIn, listed, ok, afterExpiry, refreshed]
        .flatMap((r) => [r.stdout, r.stderr])
        .concat(["t1.jsonl", "t1.html", "t2.jsonl"].map((f) => Fs.readFileSync(Path.join(dir, f), "utf8")))
        .join("\n")
      expect(server.seen.issued.length).toBe(6)
      for (const token of server.seen.issued) expect(said).not.toContain(token)

      // logout forgets the tokens
      const out = await runCli(["mcp", "logout", "docs", "--mcp-config", "servers.json"], dir, env)
      expect(out.code, out.stderr).toBe(0)
      expect(out.stdout).toContain("Logged out of docs")
      expect(Fs.existsSync(file)).toBe(false)
      expect((await list()).stdout).toContain("docs: needs login")
    } finally {
      await server.close()
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 240_000)

  it("login opens $BROWSER with the URL; a server that lets initialize through and wants a token after it", async () => {
    const server = await OAuthServer.start({ openInitialize: true })
    const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-oauth-")))
    try {
      Fs.writeFileSync(
        Path.join(dir, "servers.json"),
        JSON.stringify({ mcpServers: { docs: { type: "http", url: server.url } } })
      )
      // the "browser": follows the URL it is given, as a user approving would
      Fs.writeFileSync(
        Path.join(dir, "browser.mjs"),
        "const r = await fetch(process.argv[2]); process.exitCode = r.status === 200 ? 0 : 1\n"
      )
      const result = await runCli(["mcp", "login", "docs", "--mcp-config", "servers.json", "--timeout", "120"], dir, {
        ARMATURE_CONFIG_DIR: Path.join(dir, "config"),
        BROWSER: `${process.execPath} ${Path.join(dir, "browser.mjs")}`
      })
      expect(result.code, result.stderr).toBe(0)
      expect(result.stdout).toContain("Logged in to docs: 1 tool.")
      expect(server.seen.registrations).toBe(1)
      expect(server.seen.authorizations).toBe(1)
      expect(server.seen.grants).toEqual(["authorization_code"])
      expect(server.seen.refusals).toEqual([])
      for (const token of server.seen.issued) expect(result.stdout + result.stderr).not.toContain(token)
    } finally {
      await server.close()
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)

  it("a machine client (client_credentials) gets its token itself: exec works with no login, the secret never shows", async () => {
    const server = await OAuthServer.start()
    const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-oauth-")))
    try {
      const oauth = {
        clientId: OAuthServer.machineClient.id,
        clientSecret: OAuthServer.machineClient.secret,
        grant: "client_credentials"
      }
      Fs.writeFileSync(
        Path.join(dir, "servers.json"),
        JSON.stringify({ mcpServers: { docs: { type: "http", url: server.url, oauth } } })
      )
      Fs.writeFileSync(Path.join(dir, "call.json"), `[${call}]`)
      const env = { ARMATURE_CONFIG_DIR: Path.join(dir, "config"), BROWSER: "" }
      const run = await runCli(
        ["exec", "call.json", "--output", "json", "--mcp-config", "servers.json", "--allowed-tools", "mcp__docs"],
        dir,
        env
      )
      expect(run.code, run.stderr).toBe(0)
      expect(textOf(resultOf(run.stdout))).toBe("you are the fixture user")
      expect(server.seen.grants).toEqual(["client_credentials"])
      expect(server.seen.registrations).toBe(0)
      expect(server.seen.authorizations).toBe(0)
      expect(server.seen.refusals).toEqual([])
      const listed = await runCli(["mcp", "list", "--mcp-config", "servers.json"], dir, env)
      expect(listed.stdout).toContain("docs: connected, 1 tool")
      for (const secret of [OAuthServer.machineClient.secret, ...server.seen.issued]) {
        expect(run.stdout + run.stderr + listed.stdout + listed.stderr).not.toContain(secret)
      }
    } finally {
      await server.close()
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
