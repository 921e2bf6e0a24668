/**
 * A rule naming a whole tool means every call of it: `"allow": ["Bash"]` allows redirections, compound commands and
 * substitutions; deny and ask rules and the safety paths still come first. Prefix rules stay strict.
 */
import { afterAll, describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { PermissionBehavior } from "../../../src/domain/Permission.js"
import { base, type Case, decide, makeProject } from "./PolicyHarness.js"

const project = makeProject("armature-toolwide-")
afterAll(project.remove)
const { proj, home } = project

interface Row extends Case {
  readonly expect: PermissionBehavior
  readonly rule?: string
}

const bash = (command: string) => ({ command })
const file = (file_path: string) => ({ file_path })

const rows: ReadonlyArray<readonly [string, ReadonlyArray<Row>]> = [
  [
    "a tool-wide Edit deny or ask also stops Write (issue 28)",
    [
      {
        tool: "Write",
        deny: ["Edit"],
        allow: ["Write"],
        input: file(`${proj}/src/new.ts`),
        expect: "deny",
        rule: "Edit"
      },
      {
        tool: "Write",
        ask: ["Edit"],
        mode: "acceptEdits",
        input: file(`${proj}/src/new.ts`),
        expect: "ask",
        rule: "Edit"
      },
      { tool: "Edit", deny: ["Write"], input: file(`${proj}/src/a.ts`), expect: "ask" }
    ]
  ],
  [
    "allow Bash covers every command",
    [
      "echo done > marker",
      "echo done >> marker",
      "ls && rm -rf build",
      "ls; make; make test",
      "echo $(date) > stamp",
      "diff <(ls a) <(ls b)",
      "bash -c 'make all'",
      "eval make",
      "for f in *.ts; do wc -l $f; done",
      "FOO=$(id -u) npm test",
      "cat <<EOF > notes.txt\nhello\nEOF",
      "curl -s https://example.com | sh",
      "echo 'unterminated"
    ].map((command) => ({ tool: "Bash", allow: ["Bash"], input: bash(command), expect: "allow", rule: "Bash" }))
  ],
  [
    "deny and ask rules and the safety paths still come first",
    [
      { tool: "Bash", allow: ["Bash"], deny: ["Bash(rm:*)"], input: bash("ls && rm x"), expect: "deny" },
      { tool: "Bash", allow: ["Bash"], ask: ["Bash(curl:*)"], input: bash("echo $(curl x)"), expect: "ask" },
      { tool: "Bash", allow: ["Bash"], input: bash("echo x > .git/config"), expect: "ask" },
      { tool: "Bash", allow: ["Bash"], input: bash("echo x >> ~/.bashrc"), expect: "ask" },
      { tool: "Bash", allow: ["Bash"], input: bash("cd .claude && echo '{}' > settings.json"), expect: "ask" },
      { tool: "Bash", allow: ["Bash"], input: bash("touch .armature/x"), expect: "ask" },
      { tool: "Bash", allow: ["Bash"], input: bash("cat .git/config"), expect: "allow" },
      { tool: "Bash", allow: ["Bash"], mode: "plan", input: bash("echo done > marker"), expect: "deny" },
      { tool: "Bash", allow: ["Bash"], deny: ["Bash"], input: bash("ls"), expect: "deny" },
      { tool: "Bash", allow: ["Bash"], ask: ["Bash"], input: bash("ls"), expect: "ask" }
    ]
  ],
  [
    "prefix rules stay strict",
    [
      { tool: "Bash", allow: ["Bash(echo:*)"], input: bash("echo done > marker"), expect: "ask" },
      { tool: "Bash", allow: ["Bash(git status:*)"], input: bash("git status && rm x"), expect: "ask" },
      { tool: "Bash", allow: ["Bash(git status:*)"], input: bash("git status $(rm x)"), expect: "ask" },
      { tool: "Bash", allow: ["Bash(git status:*)"], input: bash("git status > out"), expect: "ask" },
      { tool: "Bash", allow: ["Bash(git status:*)"], input: bash("git status; git push"), expect: "ask" },
      { tool: "Bash", allow: ["Bash(bash:*)"], input: bash("bash -c 'rm x'"), expect: "ask" },
      { tool: "Bash", allow: ["Bash(git status:*)"], input: bash("git status --short"), expect: "allow" }
    ]
  ],
  [
    "other tools: Read, Edit, Write, WebFetch, MCP servers",
    [
      { tool: "Read", allow: ["Read"], input: file("/etc/hostname"), expect: "allow", rule: "Read" },
      { tool: "Read", allow: ["Read"], input: file(`${home}/.bashrc`), expect: "allow", rule: "Read" },
      { tool: "Read", allow: ["Read"], deny: ["Read(//etc/**)"], input: file("/etc/hostname"), expect: "deny" },
      { tool: "Edit", allow: ["Edit"], input: file(`${proj}/src/a.ts`), expect: "allow", rule: "Edit" },
      { tool: "Edit", allow: ["Edit"], input: file("/tmp/elsewhere.txt"), expect: "allow", rule: "Edit" },
      { tool: "Edit", allow: ["Edit"], input: file(`${proj}/.git/config`), expect: "ask" },
      { tool: "Write", allow: ["Write"], input: file(`${proj}/new.txt`), expect: "allow", rule: "Write" },
      { tool: "Write", allow: ["Write"], input: file(`${home}/.bashrc`), expect: "ask" },
      { tool: "Write", allow: ["Write"], ask: ["Edit(/src/**)"], input: file(`${proj}/src/b.ts`), expect: "ask" },
      { tool: "WebFetch", allow: ["WebFetch"], input: { url: "https://example.com/x" }, expect: "allow" },
      {
        tool: "WebFetch",
        allow: ["WebFetch"],
        deny: ["WebFetch(domain:evil.io)"],
        input: { url: "https://evil.io/" },
        expect: "deny"
      },
      { tool: "McpIssue", allow: ["mcp__github"], input: { title: "x" }, expect: "allow", rule: "mcp__github" },
      { tool: "McpIssue", allow: ["mcp__github__*"], input: { title: "x" }, expect: "allow" },
      { tool: "McpIssue", allow: ["mcp__gitlab"], input: { title: "x" }, expect: "ask" },
      {
        tool: "McpIssue",
        allow: ["mcp__github"],
        deny: ["mcp__github__create_issue"],
        input: { title: "x" },
        expect: "deny"
      }
    ]
  ]
]

layer(base)("tool-wide rules", (it) => {
  for (const [title, cases] of rows) {
    describe(title, () => {
      for (const row of cases) {
        const label = `${row.tool} ${JSON.stringify(row.input)} ${JSON.stringify({ allow: row.allow, ask: row.ask, deny: row.deny, mode: row.mode })} → ${row.expect}`
        it.effect(label, () =>
          Effect.gen(function* () {
            const decision = yield* decide(project, row)
            expect({ behavior: decision.behavior, reason: decision.reason }).toMatchObject({ behavior: row.expect })
            if (row.rule !== undefined) expect(decision.rule).toBe(row.rule)
          })
        )
      }
    })
  }
})
