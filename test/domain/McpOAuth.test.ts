import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck as fc } from "effect"
import * as McpConfig from "../../src/domain/McpConfig.js"
import * as McpOAuth from "../../src/domain/McpOAuth.js"

describe("McpOAuth", () => {
  it("the configuration directory: ARMATURE_CONFIG_DIR, else $XDG_CONFIG_HOME/armature, else ~/.config/armature", () => {
    expect(McpOAuth.configDir({ ARMATURE_CONFIG_DIR: "/x/cfg", XDG_CONFIG_HOME: "/xdg" }, "/home/u")).toBe("/x/cfg")
    expect(McpOAuth.configDir({ XDG_CONFIG_HOME: "/xdg" }, "/home/u")).toBe("/xdg/armature")
    // a relative XDG_CONFIG_HOME is invalid by the XDG spec and ignored
    expect(McpOAuth.configDir({ XDG_CONFIG_HOME: "rel" }, "/home/u")).toBe("/home/u/.config/armature")
    expect(McpOAuth.configDir({}, "/home/u")).toBe("/home/u/.config/armature")
  })

  it("one credentials file per server name and URL", () => {
    const a = McpOAuth.credentialsFile("/c", "docs", "https://a.example/mcp")
    expect(a).toMatch(/^\/c\/mcp-oauth\/docs-[0-9a-f]{8}\.json$/)
    expect(McpOAuth.credentialsFile("/c", "docs", "https://b.example/mcp")).not.toBe(a)
    expect(McpOAuth.credentialsFile("/c", "other", "https://a.example/mcp")).not.toBe(a)
    // a name cannot climb out of the directory
    expect(McpOAuth.credentialsFile("/c", "../../etc/passwd", "https://a.example/mcp")).toMatch(
      /^\/c\/mcp-oauth\/[^/]+$/
    )
  })

  it("expiry counts from when the tokens were saved, with a slack; unknown expiry never expires", () => {
    const stored: McpOAuth.Stored = {
      server: "s",
      url: "https://a.example/mcp",
      tokens: { access_token: "at-1", token_type: "Bearer", expires_in: 3600, refresh_token: "rt-1" },
      obtainedAt: 1_000_000
    }
    expect(McpOAuth.expiresAt(stored)).toBe(1_000_000 + 3_600_000)
    expect(McpOAuth.isExpired(stored, 1_000_000 + 3_600_000 - McpOAuth.expirySlackMs - 1)).toBe(false)
    expect(McpOAuth.isExpired(stored, 1_000_000 + 3_600_000 - McpOAuth.expirySlackMs)).toBe(true)
    expect(McpOAuth.loginState(stored, 1e12)).toBe("logged-in") // a refresh token renews it
    const { refresh_token: _, ...noRefresh } = stored.tokens ?? {}
    expect(McpOAuth.loginState({ ...stored, tokens: noRefresh }, 1e12)).toBe("expired")
    const { expires_in: __, ...noExpiry } = stored.tokens ?? {}
    expect(McpOAuth.isExpired({ ...stored, tokens: noExpiry }, 1e15)).toBe(false)
    expect(McpOAuth.loginState(McpOAuth.empty("s", "u"), 0)).toBe("none")
  })

  it("decodes what it encodes; garbage is an error, not a crash", () => {
    const stored: McpOAuth.Stored = { server: "s", url: "u", redirectUrl: McpOAuth.redirectUrlFor(4321) }
    expect(McpOAuth.decodeStored(JSON.stringify(stored))).toEqual(Either.right(stored))
    expect(Either.isLeft(McpOAuth.decodeStored("{"))).toBe(true)
    expect(Either.isLeft(McpOAuth.decodeStored('{"server":1}'))).toBe(true)
    expect(McpOAuth.redirectPort(stored.redirectUrl)).toBe(4321)
    expect(McpOAuth.redirectPort("http://evil.example:4321/callback")).toBeUndefined()
  })

  it("the login command quotes a server name the shell would split", () => {
    expect(McpOAuth.loginCommand("docs")).toBe("armature mcp login docs")
    expect(McpOAuth.loginCommand("my docs")).toBe("armature mcp login 'my docs'")
    expect(McpOAuth.needsLoginText("docs")).toBe(
      "MCP server docs needs authorization (OAuth): run `armature mcp login docs` in a terminal, then try again"
    )
  })

  const token = fc.stringMatching(/^[A-Za-z0-9_-]{16,48}$/).map((s) => `at-${s}`)

  it.prop(
    "no secret of a record survives redaction, wherever it appears in the text",
    [token, token, fc.array(fc.string(), { maxLength: 4 })],
    ([access, refresh, pieces]) => {
      const stored: McpOAuth.Stored = {
        server: "s",
        url: "u",
        tokens: { access_token: access, refresh_token: refresh },
        client: { client_id: "public-id", client_secret: `cs-${refresh}` }
      }
      const text = [...pieces, access, ...pieces, refresh, `Bearer ${access}`, JSON.stringify(stored)].join(" ")
      const out = McpOAuth.redact(text, McpOAuth.secretsOf(stored))
      expect(out).not.toContain(access)
      expect(out).not.toContain(refresh)
      expect(out).toContain("public-id")
    }
  )

  it("an http entry's oauth settings decode; a bad port names its path", () => {
    const decoded = McpConfig.decode(".mcp.json", {
      mcpServers: {
        docs: { type: "http", url: "https://a.example/mcp", oauth: { clientId: "abc", callbackPort: 8123 } }
      }
    })
    expect(Either.map(decoded, (c) => c.mcpServers.docs)).toEqual(
      Either.right({
        type: "http",
        url: "https://a.example/mcp",
        headers: {},
        oauth: { clientId: "abc", callbackPort: 8123 }
      })
    )
    const bad = McpConfig.decode(".mcp.json", {
      mcpServers: { docs: { type: "http", url: "https://a.example/mcp", oauth: { callbackPort: 70000 } } }
    })
    expect(Either.isLeft(bad) && bad.left.reason).toMatch(/mcpServers\.docs\.oauth\.callbackPort/)
  })
})
