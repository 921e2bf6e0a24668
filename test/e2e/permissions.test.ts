import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"

const bin = Path.resolve(__dirname, "../../bin/armature.mjs")
const root = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-e2e-perm-")))
const proj = Path.join(root, "proj")
const home = Path.join(root, "home")
Fs.mkdirSync(Path.join(proj, ".claude"), { recursive: true })
Fs.mkdirSync(Path.join(home, ".claude"), { recursive: true })
const projectSettings = Path.join(proj, ".claude", "settings.json")
const localSettings = Path.join(proj, ".claude", "settings.local.json")
const badSettings = Path.join(root, "bad.json")
Fs.writeFileSync(projectSettings, JSON.stringify({ permissions: { allow: ["Bash(npm run test:*)"] } }))
Fs.writeFileSync(localSettings, JSON.stringify({ permissions: { ask: ["Bash(npm run test:*)"] } }))
Fs.writeFileSync(badSettings, JSON.stringify({ permissions: { deny: ["Bash", 7] } }))
afterAll(() => Fs.rmSync(root, { recursive: true, force: true }))

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const run = (args: ReadonlyArray<string>): Promise<Run> =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, "permissions", "check", ...args],
      { cwd: proj, env: { ...process.env, HOME: home }, timeout: 120_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
        resolve({ code, stdout, stderr })
      }
    )
  })

describe("armature permissions check", () => {
  it("prints one decision object per call, reads settings and flags, exits 2 on bad input", {
    timeout: 240_000
  }, async () => {
    const [projectOnly, withLocal, badInput, badFile] = await Promise.all([
      run([
        "--tool",
        "Bash",
        "--input",
        JSON.stringify({ command: "NODE_ENV=test npm run test --watch" }),
        "--setting-sources",
        "user,project",
        "--cwd",
        proj
      ]),
      run([
        "--tool",
        "Bash",
        "--input",
        JSON.stringify({ command: "npm run test && curl evil.io" }),
        "--disallowed-tools",
        "Bash(curl:*)",
        "--cwd",
        proj
      ]),
      run(["--tool", "Bash", "--input", '{"command": "ls"', "--cwd", proj]),
      run(["--tool", "Bash", "--input", '{"command":"ls"}', "--settings", badSettings, "--cwd", proj])
    ])

    expect(projectOnly.code).toBe(0)
    const allow = JSON.parse(projectOnly.stdout)
    expect(Object.keys(allow)).toEqual(["behavior", "reason", "rule", "source", "trace"])
    expect(allow).toMatchObject({ behavior: "allow", rule: "Bash(npm run test:*)", source: projectSettings })
    expect(allow.trace.at(-1)).toMatchObject({ step: "allowRules", outcome: "allow", rule: "Bash(npm run test:*)" })
    expect(projectOnly.stdout.trim().split("\n")).toHaveLength(1)

    expect(withLocal.code).toBe(3)
    expect(JSON.parse(withLocal.stdout)).toMatchObject({
      behavior: "deny",
      rule: "Bash(curl:*)",
      source: "--disallowed-tools"
    })

    expect(badInput.code).toBe(2)
    expect(badInput.stdout).toBe("")
    expect(badInput.stderr).toMatch(/^armature permissions check: Invalid --input JSON: /)

    expect(badFile.code).toBe(2)
    expect(badFile.stderr).toBe(
      `armature permissions check: Invalid settings file ${badSettings}: at permissions.deny[1]: Expected string, actual 7\n`
    )
  })

  it("plan mode and an ask rule from the local settings file", { timeout: 240_000 }, async () => {
    const [plan, ask] = await Promise.all([
      run([
        "--tool",
        "Write",
        "--input",
        JSON.stringify({ file_path: `${proj}/a.txt`, content: "x" }),
        "--permission-mode",
        "plan",
        "--cwd",
        proj
      ]),
      run(["--tool", "Bash", "--input", JSON.stringify({ command: "npm run test" }), "--cwd", proj])
    ])
    expect(plan.code).toBe(3)
    expect(JSON.parse(plan.stdout)).toMatchObject({ behavior: "deny", rule: null, source: null })
    expect(JSON.parse(plan.stdout).reason).toMatch(/Plan mode: Write is not read-only$/)
    expect(ask.code).toBe(1)
    expect(JSON.parse(ask.stdout)).toMatchObject({
      behavior: "ask",
      rule: "Bash(npm run test:*)",
      source: localSettings
    })
  })

  it("--output text shows behaviour, reason, rule, source and the trace; exit 0 allow, 1 ask, 3 deny", {
    timeout: 240_000
  }, async () => {
    const [allow, ask, deny] = await Promise.all(
      ["echo hi", "npm run test", "curl evil.io"].map((command) =>
        run([
          "--tool",
          "Bash",
          "--input",
          JSON.stringify({ command }),
          "--disallowedTools",
          "Bash(curl:*)",
          "--output",
          "text",
          "--cwd",
          proj
        ])
      )
    )
    expect([allow.code, ask.code, deny.code]).toEqual([0, 1, 3])
    const lines = deny.stdout.trimEnd().split("\n")
    expect(lines[0]).toMatch(/^DENY {2}\S/)
    expect(lines.slice(1, 4)).toEqual(["  rule:   Bash(curl:*)", "  source: --disallowed-tools", "  trace:"])
    expect(lines.slice(4).length).toBeGreaterThan(0)
    expect(lines.slice(4).every((line) => /^ {4}\w+: (allow|deny|ask|passthrough|skip)/.test(line))).toBe(true)
    expect(ask.stdout).toMatch(/^ASK {2}/)
    expect(ask.stdout).toContain(`  source: ${localSettings}`)
    expect(allow.stdout).toMatch(/^ALLOW {2}/)
    expect(`${allow.stdout}${ask.stdout}${deny.stdout}`).not.toContain("\x1b[")
  })
})
