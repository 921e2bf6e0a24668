import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"

const bin = Path.resolve(__dirname, "../../bin/armature.mjs")
const bundle = Path.resolve(__dirname, "../../dist/cli/main.js")
const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-e2e-cli-")))
const batch = Path.join(dir, "batch.jsonl")
Fs.writeFileSync(batch, `${JSON.stringify({ type: "tool_use", id: "a", name: "Sleep", input: { duration_ms: 1 } })}\n`)

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const env = { ...process.env, NO_COLOR: undefined, FORCE_COLOR: undefined, HOME: dir, ARMATURE_STATE_DIR: dir }

const settle = (file: string, args: ReadonlyArray<string>, extraEnv: Record<string, string> = {}): Promise<Run> =>
  new Promise((resolve) => {
    execFile(file, args, { cwd: dir, env: { ...env, ...extraEnv }, timeout: 280_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1
      resolve({ code, stdout, stderr })
    })
  })

/** `armature …` with pipes for stdin, stdout and stderr. */
const armature = (...args: ReadonlyArray<string>) => settle(process.execPath, [bin, ...args])

/** `armature …` on a pseudo-terminal (util-linux `script`), so stdout is a TTY. */
const onTerminal = (args: ReadonlyArray<string>, extraEnv: Record<string, string> = {}, entry = bin) =>
  settle("script", ["-qec", [process.execPath, entry, ...args].map((a) => `'${a}'`).join(" "), "/dev/null"], extraEnv)

describe("armature command line", () => {
  it("names each flag error and exits 2; accepts Claude Code's spellings", { timeout: 400_000 }, async () => {
    const [typo, choice, notInt, zero, mode, alias, command] = await Promise.all([
      armature("exec", batch, "--outptu", "json"),
      armature("exec", batch, "--output", "jsn"),
      armature("exec", batch, "--max-concurrency", "abc"),
      armature("exec", batch, "--max-concurrency", "0"),
      armature("run", "hi", "--permission-mode", "yolo"),
      armature("exec", batch, "--allowedTools", "Bash(sleep:*)", "--output-format", "json"),
      armature("tols", "list")
    ])
    expect(typo).toEqual({
      code: 2,
      stdout: "",
      stderr: "armature exec: unknown flag --outptu (did you mean --output?)\n"
    })
    expect([choice.code, notInt.code, zero.code, mode.code, command.code]).toEqual([2, 2, 2, 2, 2])
    expect(choice.stderr).toContain('armature exec: --output: "jsn" is not one of text, json, stream-json\n')
    expect(notInt.stderr).toContain('armature exec: --max-concurrency takes an integer ≥ 1, got "abc"\n')
    expect(zero.stderr).toContain("armature exec: --max-concurrency must be an integer ≥ 1, got 0\n")
    expect(mode.stderr).toContain(
      'armature run: --permission-mode: "yolo" is not one of default, acceptEdits, plan, bypassPermissions, dontAsk\n'
    )
    expect(command.stderr).toContain("armature: unknown command tols (did you mean tools?)")
    expect(alias.code).toBe(0)
    expect(JSON.parse(alias.stdout)).toMatchObject({ summary: { calls: 1, errors: 0 } })
  })

  it("help: full command paths, optional repeatable options, ≤ 100 columns, no colour on a pipe", {
    timeout: 400_000
  }, async () => {
    const [root, schema, exec, version, wizard] = await Promise.all([
      armature("--help"),
      armature("tools", "schema", "--help"),
      armature("exec", "--help"),
      armature("-v"),
      armature("exec", "--wizard")
    ])
    for (const page of [root, schema, exec]) {
      expect(page.code).toBe(0)
      expect(page.stdout).not.toContain("\x1b[")
      expect(page.stdout.split("\n").filter((line) => line.length > 100)).toEqual([])
    }
    expect(root.stdout).toMatch(/\n {2}tools schema +Print the `tools` array/)
    expect(schema.stdout).toContain("\n$ armature tools schema [--cwd directory]")
    // the usage line, with its wrapped continuation lines joined
    const usage = exec.stdout.replace(/\n {4}/g, " ")
    expect(usage).toContain("[--settings file...]")
    expect(usage).toContain("[--allowed-tools text...]")
    expect(version).toMatchObject({ code: 0 })
    expect(version.stdout.trim()).toBe("0.1.0")
    expect(wizard.code).toBe(2)
    expect(wizard.stderr).toBe("armature: --wizard asks its questions on a terminal, and stdin is not one\n")
  })

  it("colour only on a terminal without NO_COLOR", { timeout: 400_000 }, async () => {
    const [coloured, plain] = await Promise.all([onTerminal(["--help"]), onTerminal(["--help"], { NO_COLOR: "1" })])
    expect(coloured.code).toBe(0)
    expect(coloured.stdout).toContain("\x1b[")
    expect(plain.code).toBe(0)
    expect(plain.stdout).toContain("COMMANDS")
    expect(plain.stdout).not.toContain("\x1b[")
  })

  it("--version and --help print, without loading the CLI, exactly what the full CLI prints", {
    timeout: 400_000
  }, async () => {
    // bin/armature.mjs answers these from dist/cli/answers.json; dist/cli/main.js is the full CLI.
    expect(Fs.existsSync(Path.join(Path.dirname(bundle), "answers.json"))).toBe(true)
    const argvs = [["--version"], ["-v"], ["--help"], ["-h"], []]
    const piped = await Promise.all(
      argvs.map((args) => Promise.all([armature(...args), settle(process.execPath, [bundle, ...args])]))
    )
    for (const [quick, full] of piped) {
      expect(quick).toEqual(full)
      expect(full.code).toBe(0)
    }
    const terminal = await Promise.all([
      onTerminal(["--help"]),
      onTerminal(["--help"], {}, bundle),
      onTerminal(["--version"]),
      onTerminal(["--version"], {}, bundle)
    ])
    expect(terminal[0]).toEqual(terminal[1])
    expect(terminal[0].stdout).toContain("\x1b[")
    expect(terminal[2]).toEqual(terminal[3])
  })
})
