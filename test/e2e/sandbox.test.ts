/**
 * The sandbox through the CLI: `exec --sandbox` confines Bash, a settings file turns it on, `--no-sandbox` turns
 * it off, a machine without bubblewrap (PATH without it) gets a refusal, and `armature sandbox check` reports.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { runCli } from "../fixtures/Cli.js"

const tempDir = (prefix: string) => Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix)))

const cli = (args: ReadonlyArray<string>, cwd: string, path = process.env.PATH) => runCli(args, cwd, { PATH: path })

const calls = (dir: string, commands: ReadonlyArray<string>) => {
  const file = Path.join(dir, "calls.jsonl")
  Fs.writeFileSync(
    file,
    commands
      .map((command, i) => JSON.stringify({ type: "tool_use", id: `b${i}`, name: "Bash", input: { command } }))
      .join("\n")
  )
  return file
}

const results = (stdout: string): ReadonlyArray<{ content: string; is_error: boolean }> =>
  (JSON.parse(stdout) as { results: ReadonlyArray<{ content: string; is_error: boolean }> }).results

const pathWithout = (binary: string): string => {
  // A PATH with node's directory but without the one holding `binary` (bwrap, socat and rg live in /usr/bin here).
  const where = (process.env.PATH ?? "").split(":").find((dir) => Fs.existsSync(Path.join(dir, binary)))
  return (process.env.PATH ?? "")
    .split(":")
    .filter((dir) => dir !== where && !Fs.existsSync(Path.join(dir, binary)))
    .join(":")
}

describe("armature exec with the sandbox", () => {
  it("--sandbox: a write in the project works, outside it fails with the sandbox's explanation", {
    timeout: 120_000
  }, async () => {
    const project = tempDir("armature-e2e-sbx-")
    const outside = Path.join(tempDir("armature-e2e-sbx-out-"), "x.txt")
    const file = calls(project, ["touch inside.txt", `touch ${outside}`])
    const run = await cli(["exec", file, "--sandbox", "--output", "json"], project)
    expect(run.code).toBe(0)
    const [inside, refused] = results(run.stdout)
    // No allow rule: autoAllowBashIfSandboxed allowed both, headless.
    expect(inside).toMatchObject({ content: "(Bash completed with no output)", is_error: false })
    expect(refused.is_error).toBe(true)
    expect(refused.content).toContain(`The command ran in the OS sandbox, which refused writing ${outside}`)
    expect(Fs.existsSync(Path.join(project, "inside.txt"))).toBe(true)
    expect(Fs.existsSync(outside)).toBe(false)
  })

  it("the settings turn it on; --no-sandbox turns it off (and nothing is auto-allowed then)", {
    timeout: 120_000
  }, async () => {
    const project = tempDir("armature-e2e-sbx-set-")
    Fs.mkdirSync(Path.join(project, ".claude"))
    Fs.writeFileSync(Path.join(project, ".claude", "settings.json"), JSON.stringify({ sandbox: { enabled: true } }))
    const file = calls(project, ["touch inside.txt"])
    const on = await cli(["exec", file, "--output", "json"], project)
    expect(results(on.stdout)[0].is_error).toBe(false)
    const check = await cli(
      ["permissions", "check", "--tool", "Bash", "--input", '{"command":"touch inside.txt"}', "--output", "json"],
      project
    )
    expect(check.code).toBe(0)
    expect(JSON.parse(check.stdout).trace.at(-1)).toMatchObject({ step: "sandboxed", outcome: "allow" })
    const off = await cli(["exec", file, "--no-sandbox", "--output", "json"], project)
    expect(results(off.stdout)[0]).toMatchObject({ is_error: true })
    expect(results(off.stdout)[0].content).toContain("Permission to use Bash has not been granted")
  })

  it("a malformed sandbox setting names the file and the field", { timeout: 60_000 }, async () => {
    const project = tempDir("armature-e2e-sbx-bad-")
    const settings = Path.join(project, "s.json")
    Fs.writeFileSync(settings, JSON.stringify({ sandbox: { excludedCommands: "docker" } }))
    const run = await cli(["exec", calls(project, ["true"]), "--settings", settings], project)
    expect(run.code).toBe(2)
    expect(run.stderr).toContain(
      `Invalid settings file ${settings}: at sandbox.excludedCommands: Expected ReadonlyArray<string>`
    )
  })

  it("bubblewrap absent: Bash refuses with what is missing and the install line; nothing runs", {
    timeout: 120_000
  }, async () => {
    const project = tempDir("armature-e2e-sbx-nobwrap-")
    const file = calls(project, ["touch marker.txt"])
    const run = await cli(
      ["exec", file, "--sandbox", "--allowed-tools", "Bash", "--output", "json"],
      project,
      pathWithout("bwrap")
    )
    const [result] = results(run.stdout)
    expect(result.is_error).toBe(true)
    expect(result.content).toContain("bubblewrap (bwrap) not installed")
    expect(result.content).toContain("apt-get install bubblewrap socat ripgrep")
    expect(Fs.existsSync(Path.join(project, "marker.txt"))).toBe(false)
  })
})

describe("armature sandbox check", () => {
  it("exit 0 with the policy when it works, 1 naming what is missing when it does not", {
    timeout: 120_000
  }, async () => {
    const project = tempDir("armature-e2e-sbx-check-")
    const works = await cli(["sandbox", "check", "--allowed-tools", "WebFetch(domain:example.com)"], project)
    expect(works.code).toBe(0)
    expect(works.stdout).toContain("sandbox: works")
    expect(works.stdout).toContain(`writable: ${project}`)
    expect(works.stdout).toContain("allowed hosts: example.com")
    const broken = await cli(["sandbox", "check", "--output", "json"], project, pathWithout("bwrap"))
    expect(broken.code).toBe(1)
    expect(JSON.parse(broken.stdout)).toMatchObject({
      available: false,
      reasons: expect.arrayContaining(["bubblewrap (bwrap) not installed"])
    })
  })
})
