import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck as fc } from "effect"
import * as McpConfig from "../../src/domain/McpConfig.js"
import * as PermissionRule from "../../src/domain/PermissionRule.js"

const origin = { behavior: "deny" as const, source: "test", root: "/" }

/** A server name the config accepts: letters, digits, `-`, `.` and single `_` not at the end. */
const serverName = fc
  .stringMatching(/^[A-Za-z0-9][A-Za-z0-9.-]{0,6}(?:_[A-Za-z0-9.-]{1,4}){0,2}$/)
  .filter((name) => McpConfig.serverNameProblem(name) === undefined)
const toolName = fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/)

describe("MCP server names and permission rules (issue 28 class 7)", () => {
  it("refuses a server name holding __ or ending with _ (as tool names spell it), naming file and server", () => {
    for (const name of ["a__b", "a..b", "x_", "a.", "git__hub"]) {
      const result = McpConfig.decodeLenient(".mcp.json", {
        mcpServers: { [name]: { command: "srv" }, ok: { command: "x" } }
      })
      const lenient = Either.getOrThrow(result)
      expect(Object.keys(lenient.config.mcpServers)).toEqual(["ok"])
      expect(lenient.skipped.map((s) => s.server)).toEqual([name])
      const notice = McpConfig.skippedNotice(".mcp.json", lenient.skipped[0])
      expect(notice).toContain(`MCP server ${JSON.stringify(name)} of .mcp.json is disabled`)
      expect(notice).toContain('holds "__" or ends with "_"')
    }
    for (const name of ["github", "my_server", "a-b", "a.b", "A1"]) {
      expect(McpConfig.serverNameProblem(name)).toBeUndefined()
    }
  })

  it.prop(
    "a server rule (mcp__a, mcp__a__*) covers the tools of server a and of no other accepted server",
    [serverName, serverName, toolName],
    ([a, b, tool]) => {
      const name = McpConfig.toolName(b, tool)
      const same = McpConfig.normalizeName(a) === McpConfig.normalizeName(b)
      for (const rule of [`mcp__${McpConfig.normalizeName(a)}`, `mcp__${McpConfig.normalizeName(a)}__*`]) {
        expect(PermissionRule.namesTool(rule, { name, aliases: [] })).toBe(same)
      }
    }
  )

  it("without the refusal, mcp__a would cover server a__b (why names are refused)", () => {
    expect(PermissionRule.namesTool("mcp__a", { name: "mcp__a__b__tool", aliases: [] })).toBe(true)
  })
})

describe("McpConfig", () => {
  it("decodes stdio and http servers with defaults", () => {
    const decoded = McpConfig.decodeText(
      ".mcp.json",
      JSON.stringify({
        mcpServers: {
          local: { command: "node", args: ["server.js"], env: { A: "1" } },
          bare: { type: "stdio", command: "srv" },
          remote: { type: "http", url: "http://127.0.0.1:9/mcp", headers: { Authorization: "Bearer x" } }
        }
      })
    )
    expect(decoded).toEqual(
      Either.right({
        mcpServers: {
          local: { command: "node", args: ["server.js"], env: { A: "1" } },
          bare: { type: "stdio", command: "srv", args: [], env: {} },
          remote: { type: "http", url: "http://127.0.0.1:9/mcp", headers: { Authorization: "Bearer x" } }
        }
      })
    )
  })

  it("names the file and the JSON path of every problem", () => {
    const message = (text: string) =>
      Either.match(McpConfig.decodeText("/p/.mcp.json", text), { onLeft: (e) => e.message, onRight: () => "ok" })
    expect(message('{"mcpServers":{"a":{"args":["x"]},"b":{"type":"http","url":"not a url"}}}')).toEqual(
      'Invalid MCP config /p/.mcp.json: mcpServers.a.command: is missing\nmcpServers.b.url: Expected an http(s) URL, got "not a url"'
    )
    expect(message('{"servers":{}}')).toEqual("Invalid MCP config /p/.mcp.json: mcpServers: is missing")
    expect(message("{")).toMatch(/^Invalid MCP config \/p\/\.mcp\.json: not valid JSON \(/)
  })

  // biome-ignore lint/suspicious/noTemplateCurlyInString: literal ${VAR} placeholders are what this test is about
  it("expands ${VAR} and ${VAR:-default}, naming unset variables", () => {
    const text = JSON.stringify({
      // biome-ignore lint/suspicious/noTemplateCurlyInString: literal ${VAR} placeholders are what this test is about
      mcpServers: { s: { command: "${BIN}", args: ["--token=${TOKEN:-none}", "${MISSING}"], env: { K: "${BIN}" } } }
    })
    expect(McpConfig.decodeText("m.json", text, { BIN: "/usr/bin/srv" })).toEqual(
      Either.left(
        new McpConfig.McpConfigError({
          file: "m.json",
          reason: "mcpServers.s.args[1]: environment variable MISSING is not set"
        })
      )
    )
    expect(McpConfig.decodeText("m.json", text, { BIN: "/usr/bin/srv", MISSING: "x" })).toEqual(
      Either.right({
        mcpServers: { s: { command: "/usr/bin/srv", args: ["--token=none", "x"], env: { K: "/usr/bin/srv" } } }
      })
    )
  })

  it("builds mcp__{server}__{tool} names, normalising other characters", () => {
    expect(McpConfig.toolName("fixture", "peek")).toEqual("mcp__fixture__peek")
    expect(McpConfig.toolName("my server", "do.it")).toEqual("mcp__my_server__do_it")
  })

  it("fits the permission rules mcp__server, mcp__server__* and mcp__server__tool", () => {
    const tool = { name: McpConfig.toolName("fixture", "peek"), aliases: [] }
    const names = (text: string) =>
      Either.match(PermissionRule.parse(text, origin), {
        onLeft: (e) => e.message,
        onRight: (rule) => PermissionRule.namesTool(rule.tool, tool)
      })
    expect(["mcp__fixture", "mcp__fixture__*", "mcp__fixture__peek"].map(names)).toEqual([true, true, true])
    expect(["mcp__other", "mcp__fixture__write", "mcp__fix"].map(names)).toEqual([false, false, false])
  })
})

describe("McpConfig project approval", () => {
  const names = fc.uniqueArray(fc.constantFrom("a", "b", "c", "d", "e"), { maxLength: 5 })

  it.prop(
    "a disabled server never starts; an enabled one starts unless disabled; others only with enable-all",
    [names, names, names, fc.boolean()],
    ([servers, enabled, disabled, enableAll]) => {
      const project = { mcpServers: Object.fromEntries(servers.map((n) => [n, { command: n, args: [], env: {} }])) }
      const { approved, unapproved } = McpConfig.approvedProjectServers(project, { enableAll, enabled, disabled })
      for (const name of servers) {
        const started = name in approved.mcpServers
        if (disabled.includes(name)) expect(started || unapproved.includes(name)).toBe(false)
        else if (enableAll || enabled.includes(name))
          expect([started, unapproved.includes(name)]).toEqual([true, false])
        else expect([started, unapproved.includes(name)]).toEqual([false, true])
      }
    }
  )

  it("reads Claude Code's keys from settings and names a key of the wrong type", () => {
    expect(McpConfig.approvalOf({})).toEqual(Either.right({ enableAll: false, enabled: [], disabled: [] }))
    expect(McpConfig.approvalOf({ enableAllProjectMcpServers: true, enabledMcpjsonServers: ["x"], other: 1 })).toEqual(
      Either.right({ enableAll: true, enabled: ["x"], disabled: [] })
    )
    expect(McpConfig.approvalOf({ disabledMcpjsonServers: "x" })).toEqual(
      Either.left('Invalid settings: disabledMcpjsonServers: Expected ReadonlyArray<string>, actual "x"')
    )
  })

  it("merges configs, later servers replacing earlier ones of the same name", () => {
    const a = { mcpServers: { x: { command: "a", args: [], env: {} }, y: { command: "a", args: [], env: {} } } }
    const b = { mcpServers: { y: { command: "b", args: [], env: {} } } }
    expect(McpConfig.mergeConfigs([a, b]).mcpServers).toEqual({ x: a.mcpServers.x, y: b.mcpServers.y })
  })
})

describe("McpConfig sampling policies", () => {
  const server = (sampling?: "ask" | "allow" | "deny") => ({
    command: "s",
    args: [],
    env: {},
    ...(sampling === undefined ? {} : { sampling })
  })

  it("decodes a server's sampling policy and names a bad one", () => {
    const decoded = McpConfig.decodeText("/p/.mcp.json", '{"mcpServers":{"a":{"command":"x","sampling":"allow"}}}')
    expect(Either.map(decoded, (c) => c.mcpServers.a.sampling)).toEqual(Either.right("allow"))
    const bad = McpConfig.decodeText("/p/.mcp.json", '{"mcpServers":{"a":{"command":"x","sampling":"always"}}}')
    expect(Either.mapLeft(bad, (e) => e.message)).toEqual(
      Either.left(
        'Invalid MCP config /p/.mcp.json: mcpServers.a.sampling: Expected "ask", "allow" or "deny", actual "always"'
      )
    )
  })

  it("settings win; a project server cannot allow itself; others keep their own policy", () => {
    const config = {
      mcpServers: { proj: server("allow"), mine: server("allow"), plain: server(), set: server("deny") }
    }
    const applied = McpConfig.applySamplingPolicies(config, { set: "allow" }, new Set(["proj", "plain", "set"]))
    expect(Object.fromEntries(Object.entries(applied.mcpServers).map(([n, s]) => [n, s.sampling]))).toEqual({
      proj: "ask",
      mine: "allow",
      plain: undefined,
      set: "allow"
    })
    expect(McpConfig.samplingPoliciesOf({ mcpSampling: { a: "deny" } })).toEqual(Either.right({ a: "deny" }))
    expect(Either.isLeft(McpConfig.samplingPoliciesOf({ mcpSampling: { a: "yes" } }))).toBe(true)
  })
})

describe("McpConfig, one entry at a time", () => {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: an unset ${VAR} is what this test is about
  const text = JSON.stringify({ mcpServers: { bad: { command: "${UNSET_ONE}" }, ok: { command: "srv" } } })

  it("an invalid entry is skipped with its issues; the others decode", () => {
    expect(McpConfig.decodeTextLenient("/p/.mcp.json", text, {})).toEqual(
      Either.right({
        config: { mcpServers: { ok: { command: "srv", args: [], env: {} } } },
        skipped: [{ server: "bad", issues: ["mcpServers.bad.command: environment variable UNSET_ONE is not set"] }]
      })
    )
    const skipped = { server: "bad", issues: ["a: x", "b: y"] }
    expect(McpConfig.skippedNotice("/p/.mcp.json", skipped)).toEqual(
      'armature: MCP server "bad" of /p/.mcp.json is disabled: a: x; b: y'
    )
  })

  it("a file of the wrong shape still fails as a whole", () => {
    expect(Either.isLeft(McpConfig.decodeTextLenient("f", '{"servers":{}}'))).toBe(true)
    expect(Either.isLeft(McpConfig.decodeTextLenient("f", "{"))).toBe(true)
  })
})

describe("McpConfig.toolName", () => {
  it.prop(
    "names are at most 128 characters, the same for the same tool, kept whole when they fit, with the server prefix",
    [fc.string({ maxLength: 80 }), fc.string({ maxLength: 200 })],
    ([server, toolName]) => {
      const name = McpConfig.toolName(server, toolName)
      const full = `mcp__${McpConfig.normalizeName(server)}__${McpConfig.normalizeName(toolName)}`
      expect(name.length).toBeLessThanOrEqual(128)
      expect(name).toMatch(/^[a-zA-Z0-9_-]+$/)
      expect(McpConfig.toolName(server, toolName)).toEqual(name)
      if (full.length <= 128) expect(name).toEqual(full)
      else expect(name.slice(0, 119)).toEqual(full.slice(0, 119))
    }
  )

  it("two long names that differ only at the end stay apart", () => {
    const a = McpConfig.toolName("srv", `${"x".repeat(150)}a`)
    const b = McpConfig.toolName("srv", `${"x".repeat(150)}b`)
    expect([a.length, b.length]).toEqual([128, 128])
    expect(a).not.toEqual(b)
  })
})

describe("McpConfig.envTunables", () => {
  it("reads MCP_TIMEOUT, MCP_TOOL_TIMEOUT and MAX_MCP_OUTPUT_TOKENS; a bad value is named and ignored", () => {
    expect(McpConfig.envTunables({ MCP_TIMEOUT: "2000", MAX_MCP_OUTPUT_TOKENS: "50000" })).toEqual({
      connectTimeoutMs: 2000,
      toolTimeoutMs: undefined,
      maxOutputTokens: 50000,
      issues: []
    })
    expect(McpConfig.envTunables({ MCP_TOOL_TIMEOUT: "2s", MCP_TIMEOUT: "0" })).toEqual({
      connectTimeoutMs: undefined,
      toolTimeoutMs: undefined,
      maxOutputTokens: undefined,
      issues: [
        'MCP_TIMEOUT="0" is not a positive whole number; it is ignored',
        'MCP_TOOL_TIMEOUT="2s" is not a positive whole number; it is ignored'
      ]
    })
  })
})
