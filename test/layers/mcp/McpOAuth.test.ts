import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type * as McpConfig from "../../../src/domain/McpConfig.js"
import * as McpOAuth from "../../../src/layers/mcp/McpOAuth.js"

const config: McpConfig.HttpServer = { type: "http", url: "http://127.0.0.1:9/mcp", headers: {} }

const tempDir = () => Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-oauth-store-")))

describe("McpOAuth credentials file", () => {
  it("is written 0600 in a 0700 directory, even where the directory existed with wider modes", () => {
    const dir = tempDir()
    try {
      const file = McpOAuth.fileOf("docs", config, dir)
      Fs.mkdirSync(Path.dirname(file), { recursive: true, mode: 0o755 })
      Fs.chmodSync(Path.dirname(file), 0o755)
      Fs.writeFileSync(file, "{}", { mode: 0o644 })
      const provider = new McpOAuth.FileOAuthProvider("docs", config, file)
      provider.saveClientInformation({ client_id: "c1" })
      provider.saveTokens({ access_token: "at-secret-1", token_type: "Bearer", refresh_token: "rt-secret-1" })
      expect(Fs.statSync(file).mode & 0o777).toBe(0o600)
      expect(Fs.statSync(Path.dirname(file)).mode & 0o777).toBe(0o700)
      // no temporary file is left beside it
      expect(Fs.readdirSync(Path.dirname(file))).toEqual([Path.basename(file)])
      const again = new McpOAuth.FileOAuthProvider("docs", config, file)
      expect(again.tokens()?.access_token).toBe("at-secret-1")
      expect(again.clientInformation()?.client_id).toBe("c1")
      expect(again.redact("Bearer at-secret-1 and rt-secret-1")).toBe("Bearer [redacted] and [redacted]")
      // a refresh refused just after this provider saved new tokens (two refreshes raced) keeps the new ones
      provider.invalidateCredentials("tokens")
      expect(provider.tokens()?.access_token).toBe("at-secret-1")
      // a refused refresh token drops the tokens, keeps the client
      again.invalidateCredentials("tokens")
      const third = new McpOAuth.FileOAuthProvider("docs", config, file)
      expect(third.tokens()).toBeUndefined()
      expect(third.clientInformation()?.client_id).toBe("c1")
      expect(McpOAuth.removeStored(file)).toBe(true)
      expect(McpOAuth.removeStored(file)).toBe(false)
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("headless: no stored client means a login is needed (no registration), and so does an authorization", () => {
    const dir = tempDir()
    try {
      const provider = new McpOAuth.FileOAuthProvider("docs", config, McpOAuth.fileOf("docs", config, dir))
      expect(() => provider.clientInformation()).toThrow(McpOAuth.NeedsLogin)
      expect(() => provider.redirectToAuthorization(new URL("http://127.0.0.1:9/authorize"))).toThrow(
        "run `armature mcp login docs`"
      )
      // a client registered beforehand (the entry's oauth.clientId) is used as given
      const preregistered = new McpOAuth.FileOAuthProvider(
        "docs",
        { ...config, oauth: { clientId: "given", clientSecret: "shh-secret" } },
        McpOAuth.fileOf("docs", config, dir)
      )
      expect(preregistered.clientInformation()).toEqual({ client_id: "given", client_secret: "shh-secret" })
      expect(preregistered.clientMetadata.token_endpoint_auth_method).toBe("client_secret_post")
      expect(preregistered.redact("secret is shh-secret")).toBe("secret is [redacted]")
      // nothing was written by merely looking
      expect(Fs.existsSync(Path.join(dir, "mcp-oauth"))).toBe(false)
      // an entry with its own Authorization header is not OAuth's business
      expect(McpOAuth.headlessProvider("docs", { ...config, headers: { authorization: "Bearer x" } }, dir)).toBe(
        undefined
      )
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
