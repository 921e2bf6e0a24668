import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import * as PermissionRule from "../../src/domain/PermissionRule.js"
import * as Tool from "../../src/domain/Tool.js"

const origin = { behavior: "allow", source: "/p/.claude/settings.json", root: "/p" } as const
const parse = (text: string) => PermissionRule.parse(text, origin)
const ok = (text: string) => Either.getOrThrow(parse(text))

describe("PermissionRule.parse", () => {
  const valid: ReadonlyArray<readonly [string, string, string | undefined]> = [
    ["Bash", "Bash", undefined],
    ["Bash(*)", "Bash", undefined],
    ["  Read  ", "Read", undefined],
    ["Bash(npm run test:*)", "Bash", "npm run test:*"],
    ["Bash(git * main)", "Bash", "git * main"],
    ["Bash(echo (a))", "Bash", "echo (a)"],
    ["Read(./src/**)", "Read", "./src/**"],
    ["Edit(//etc/**)", "Edit", "//etc/**"],
    ["WebFetch(domain:example.com)", "WebFetch", "domain:example.com"],
    ["mcp__github", "mcp__github", undefined],
    ["mcp__github__*", "mcp__github__*", undefined],
    ["mcp__github__create_issue", "mcp__github__create_issue", undefined],
    ["my-tool.v2", "my-tool.v2", undefined]
  ]
  it.each(valid)("parses %j", (text, tool, content) => {
    const rule = ok(text)
    expect(rule.tool).toBe(tool)
    expect(rule.content).toBe(content)
    expect(rule.source).toBe("/p/.claude/settings.json")
    expect(rule.behavior).toBe("allow")
  })

  const invalid: ReadonlyArray<readonly [string, string]> = [
    ["", "the rule is empty"],
    ["Bash(ls", "expected `Tool(content)` with a closing parenthesis at the end"],
    ["Bash(ls) extra", "expected `Tool(content)` with a closing parenthesis at the end"],
    ["Ba sh", "expected `Tool` or `Tool(content)`; a tool name has only letters, digits, `_`, `-` and `.`"],
    ["(ls)", "expected `Tool` or `Tool(content)`; a tool name has only letters, digits, `_`, `-` and `.`"],
    ["Bash()", "empty parentheses; write `Bash` for the whole tool"],
    ["Bash(npm:*run)", "`:*` is only allowed at the end of a Bash rule"],
    ["Bash(:*)", "a prefix rule needs a prefix before `:*`"],
    [
      "Bash(rm:)",
      "a command does not end in `:`; write `Bash(rm:*)` for the command with any arguments, or `Bash(rm)` for the bare command"
    ],
    ["WebFetch(example.com)", "WebFetch rules have the form `WebFetch(domain:example.com)`"],
    ["mcp__github__x(arg)", "MCP rules take no content: use `mcp__server`, `mcp__server__*` or a tool"],
    ["bash(git push:*)", "unknown tool bash: tool names are case-sensitive (did you mean Bash?)"],
    ["READ(./.env)", "unknown tool READ: tool names are case-sensitive (did you mean Read?)"],
    ["webfetch", "unknown tool webfetch: tool names are case-sensitive (did you mean WebFetch?)"],
    ["notebookedit", "unknown tool notebookedit: tool names are case-sensitive (did you mean NotebookEdit?)"],
    ["Bassh(git push:*)", "unknown tool Bassh (did you mean Bash?): the rule would match nothing"],
    ["Reads(./.env)", "unknown tool Reads (did you mean Read?): the rule would match nothing"],
    ["WebFecth", "unknown tool WebFecth (did you mean WebFetch?): the rule would match nothing"],
    ["edit(./src/**)", "unknown tool edit: tool names are case-sensitive (did you mean Edit?)"],
    ["Grpe", "unknown tool Grpe (did you mean Grep?): the rule would match nothing"]
  ]
  it.each(["Deploy", "Weather(x)", "mcp__reads", "Readme", "BashScript"])(
    "accepts %j: a name far from every known tool may be the application's own tool",
    (text) => expect(Either.isRight(parse(text))).toBe(true)
  )
  it.each(invalid)("rejects %j", (text, reason) => {
    const result = parse(text)
    expect(Either.isLeft(result)).toBe(true)
    const error = Either.getLeft(result)
    if (error._tag === "Some") {
      expect(error.value.reason).toBe(reason)
      expect(error.value.message).toBe(
        `Invalid permission rule ${JSON.stringify(text)} in /p/.claude/settings.json: ${reason}`
      )
    }
  })

  it.each(["Deploy", "Weather(x)", "Foo(git push:*)", "BashScript"])(
    "warns once for %j: a name no built-in tool has matches only a tool registered under it",
    (text) => {
      const tool = text.replace(/\(.*$/, "")
      expect(PermissionRule.unknownToolWarning("/p/.claude/settings.json", text)).toBe(
        `settings file /p/.claude/settings.json: rule "${text}" names no built-in tool (${tool}); it matches only a tool registered under that exact name`
      )
      expect(PermissionRule.unknownToolWarning("--allowed-tools", text)).toMatch(/^--allowed-tools: rule /)
    }
  )
  it.each(["Bash(git push:*)", "Read", "mcp__reads", "mcp__a__b", "bash(git push:*)", "Bassh(x)", "Bash(unclosed"])(
    "does not warn for %j: a known tool, an MCP tool, or a rule parse already refuses",
    (text) => expect(PermissionRule.unknownToolWarning("f", text)).toBeUndefined()
  )

  it("splits flag rule lists on commas and spaces, not inside parentheses", () => {
    expect(PermissionRule.splitRuleList("Read, Bash(git log:*) Edit(./a b.txt),WebFetch")).toEqual([
      "Read",
      "Bash(git log:*)",
      "Edit(./a b.txt)",
      "WebFetch"
    ])
  })
})

describe("PermissionRule.matchesCommand", () => {
  const table: ReadonlyArray<readonly [string, string, boolean]> = [
    ["npm run test:*", "npm run test", true],
    ["npm run test:*", "npm run test --watch", true],
    ["npm run test:*", "npm run test:unit", false],
    ["npm run test:*", "npm run testing", false],
    ["npm run test:*", "npm  run   test", true],
    ["git * main", "git push origin main", true],
    ["git * main", "git checkout main", true],
    ["git * main", "git push origin main --force", false],
    ["git * main", "sudo git push main", false],
    ["git status", "git status", true],
    ["git status", "git status --short", false],
    ["git status", "git  status", true],
    ["ls", "ls -la", false],
    ["ls:*", "ls -la", true],
    ["ls:*", "lsof", false],
    ["rm -rf *", "rm -rf /", true],
    ["echo a.b", "echo aXb", false],
    ["echo (x)", "echo (x)", true],
    ["echo $HOME", "echo $HOME", true]
  ]
  it.each(table)("%j vs %j → %s", (content, command, expected) => {
    expect(PermissionRule.matchesCommand(content, command)).toBe(expected)
  })
})

describe("PermissionRule.mayMatchCommand", () => {
  // null: a word known only at run time; it may be any text, several words or none.
  const table: ReadonlyArray<readonly [string, ReadonlyArray<string | null>, boolean]> = [
    ["rm:*", ["rm", "-rf", "x"], true],
    ["rm:*", ["rmdir", "x"], false],
    ["rm:*", [null, "x"], true],
    ["rm:*", ["echo", null], false],
    ["rm:*", ["r", null], false],
    ["rm:*", ["xargs", "rm", null], false],
    ["rm:*", ["rm", null], true],
    ["rm:*", [null], true],
    ["git push:*", ["git", null], true],
    ["git push:*", ["git", null, "origin"], true],
    ["git push:*", ["git", "log", null], false],
    ["git push:*", ["git", "pu" + "sh", null], true],
    ["git push:*", ["git", "pushx", null], false],
    ["git push", ["git", null], true],
    ["git push", ["git", "status", null], false],
    ["git * main", ["git", null, "main"], true],
    ["git * main", ["git", "push", null], true],
    ["git * main", ["svn", null], false],
    ["npm run test:*", ["npm", "run", null], true],
    ["npm run test:*", ["npm", "  run", "test"], true],
    ["a*b*c", [null, "c"], true],
    ["a*b*c", ["x", null], false]
  ]
  it.each(table)("%j vs %j → %s", (content, form, expected) => {
    expect(PermissionRule.mayMatchCommand(content, form)).toBe(expected)
  })

  it("agrees with matchesCommand on forms without unknown words", () => {
    for (const [content, form] of table) {
      const known = form.map((word) => word ?? "x")
      expect(PermissionRule.mayMatchCommand(content, known)).toBe(
        PermissionRule.matchesCommand(content, known.join(" "))
      )
    }
  })
})

describe("PermissionRule.pathPattern and matchesPath", () => {
  const bases = { cwd: "/p/sub", home: "/home/u" }
  const pattern = (content: string) => PermissionRule.pathPattern({ ...ok("Read(x)"), content }, bases)
  const anchors: ReadonlyArray<readonly [string, string, string]> = [
    ["//etc/passwd", "/etc", "/passwd"],
    ["//etc/**", "/etc", ""],
    ["~/.ssh/**", "/home/u/.ssh", ""],
    ["~/.ssh/id_*", "/home/u/.ssh", "/id_*"],
    ["/src/**/*.ts", "/p/src", "/**/*.ts"],
    ["/secrets", "/p", "/secrets"],
    ["./build/", "/p/sub", "/build/"],
    ["*.env", "/p/sub", "*.env"],
    [".env", "/p/sub", ".env"],
    ["docs/*.md", "/p/sub/docs", "/*.md"],
    ["../other/**", "/p/other", ""],
    ["~", "/home/u", ""]
  ]
  it.each(anchors)("%j → anchor %j, pattern %j", (content, anchor, pat) => {
    expect(pattern(content)).toEqual({ anchor, pattern: pat })
  })

  const matches: ReadonlyArray<readonly [string, string, boolean]> = [
    ["//etc/passwd", "/etc/passwd", true],
    ["//etc/passwd", "/etc/passwd.bak", false],
    ["//etc/**", "/etc/ssh/sshd_config", true],
    ["//etc/**", "/etcetera/x", false],
    ["/src/**/*.ts", "/p/src/a/b.ts", true],
    ["/src/**/*.ts", "/p/src/b.ts", true],
    ["/src/**/*.ts", "/p/src/b.js", false],
    ["/src/**/*.ts", "/p/sub/src/b.ts", false],
    ["*.env", "/p/sub/deep/er/.x.env", true],
    ["*.env", "/p/other/a.env", false],
    [".env", "/p/sub/a/.env", true],
    ["/secrets", "/p/secrets/key.pem", true],
    ["docs/*.md", "/p/sub/docs/a.md", true],
    ["docs/*.md", "/p/sub/docs/x/a.md", false],
    ["~/.ssh/**", "/home/u/.ssh/id_rsa", true],
    ["~", "/home/u/anything", true]
  ]
  it.each(matches)("%j matches %j → %s", (content, path, expected) => {
    const p = pattern(content)
    expect(PermissionRule.matchesPath(p.anchor, p.pattern, path, "allow")).toBe(expected)
  })

  it("deny and ask rules match case-insensitively, allow rules case-sensitively", () => {
    const p = pattern("*.env")
    expect(PermissionRule.matchesPath(p.anchor, p.pattern, "/p/sub/A.ENV", "deny")).toBe(true)
    expect(PermissionRule.matchesPath(p.anchor, p.pattern, "/p/sub/A.ENV", "allow")).toBe(false)
  })
})

describe("PermissionRule tools, domains and suggestions", () => {
  const tool = (name: string, category?: Tool.Category, readOnly = false) =>
    Effect.runSync(
      Tool.make({
        name,
        description: name,
        input: Schema.Struct({ file_path: Schema.optional(Schema.String) }),
        output: Schema.String,
        category,
        isReadOnly: () => readOnly,
        call: () => Effect.succeed("")
      })
    )

  it("whole-tool and MCP server rules", () => {
    const issue = tool("mcp__github__create_issue")
    expect(PermissionRule.namesTool("mcp__github", issue)).toBe(true)
    expect(PermissionRule.namesTool("mcp__github__*", issue)).toBe(true)
    expect(PermissionRule.namesTool("mcp__github__create_issue", issue)).toBe(true)
    expect(PermissionRule.namesTool("mcp__git", issue)).toBe(false)
    expect(PermissionRule.namesTool("mcp__github__close_issue", issue)).toBe(false)
    expect(PermissionRule.namesTool("Bash", tool("Bash"))).toBe(true)
    expect(PermissionRule.namesTool("bash", tool("Bash"))).toBe(false)
  })

  it("Edit(...) covers every editing tool, Read(...) every reading tool", () => {
    const edit = ok("Edit(/x)")
    const read = ok("Read(/x)")
    expect(PermissionRule.coversCall(edit, tool("Write"), {})).toBe(true)
    expect(PermissionRule.coversCall(edit, tool("NotebookEdit"), {})).toBe(true)
    expect(PermissionRule.coversCall(edit, tool("Patch", "file"), {})).toBe(true)
    expect(PermissionRule.coversCall(edit, tool("Viewer", "file", true), {})).toBe(false)
    expect(PermissionRule.coversCall(read, tool("Grep"), {})).toBe(true)
    expect(PermissionRule.coversCall(read, tool("Glob"), {})).toBe(true)
    expect(PermissionRule.coversCall(read, tool("Viewer", "file", true), {})).toBe(true)
    expect(PermissionRule.coversCall(read, tool("Edit"), {})).toBe(false)
  })

  const domains: ReadonlyArray<readonly [string, string, boolean]> = [
    ["domain:example.com", "https://example.com/x", true],
    ["domain:example.com", "https://EXAMPLE.com./x", true],
    ["domain:example.com", "https://api.example.com/x", false],
    ["domain:example.com", "https://example.com.evil.io/", false],
    ["domain:example.com", "https://evil.io/?u=https://example.com", false],
    ["domain:example.com", "https://example.com@evil.io/", false],
    ["domain:*.example.com", "https://api.example.com/", true],
    ["domain:*.example.com", "https://badexample.com/", false]
  ]
  it.each(domains)("%j vs %j → %s", (content, url, expected) => {
    const host = PermissionRule.hostOf(url)
    expect(host !== undefined && PermissionRule.matchesDomain(content, host)).toBe(expected)
  })

  it("suggests prefix rules for always-approvals", () => {
    expect(PermissionRule.bashPrefixRule(["git", "status", "--short"])).toBe("Bash(git status:*)")
    expect(PermissionRule.bashPrefixRule(["ls", "-la"])).toBe("Bash(ls:*)")
    expect(PermissionRule.bashPrefixRule(["npm", "run", "test"])).toBe("Bash(npm run:*)")
    expect(PermissionRule.bashPrefixRule([])).toBeUndefined()
  })
})

describe("PermissionRule.allowSpellingWarning", () => {
  it("names an allow rule that matches next to nothing as written, and how to write it", () => {
    expect(PermissionRule.allowSpellingWarning("/p/s.json", "Bash(rm: *)")).toBe(
      'settings file /p/s.json: allow rule "Bash(rm: *)" matches only commands spelt "rm: …" (with the colon); write Bash(rm:*) or Bash(rm *) for rm with any arguments'
    )
    expect(PermissionRule.allowSpellingWarning("--allowed-tools", "Bash(ls *:*)")).toBe(
      '--allowed-tools: allow rule "Bash(ls *:*)" reads the * before :* as a literal star; write Bash(ls *) for a wildcard'
    )
  })
  it.each(["Bash(rm:*)", "Bash(rm *)", "Bash(git commit -m x)", "Bash", "Read(./a: *)", "Bash(npm run test:*)"])(
    "says nothing about %j",
    (text) => expect(PermissionRule.allowSpellingWarning("/p/s.json", text)).toBeUndefined()
  )
})
