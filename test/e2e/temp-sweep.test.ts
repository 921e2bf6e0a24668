/**
 * A Write killed outright (SIGKILL) while it writes 50 MB leaves its `.NAME.PID-RANDOM.armature.tmp` beside the
 * target; the next start of a command in that working directory removes it, before any call runs, and leaves the
 * target and every file that is not a dead writer's temp file alone.
 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { bin, runCli } from "../fixtures/Cli.js"

const isTemp = (name: string) => name.endsWith(".armature.tmp")

/** Starts `armature exec` writing `size` bytes to `target` and SIGKILLs it as soon as its temp file appears. */
const killMidWrite = (cwd: string, target: string, size: number) =>
  new Promise<{ signal: NodeJS.Signals | null; sawTemp: boolean }>((resolve) => {
    // the file is read first: a Write of an existing file needs it
    const calls = [
      { type: "tool_use", id: "r1", name: "Read", input: { file_path: target } },
      { type: "tool_use", id: "w1", name: "Write", input: { file_path: target, content: "x".repeat(size) } }
    ]
    const child = spawn(process.execPath, [bin, "exec", "-", "--permission-mode", "bypassPermissions"], {
      cwd,
      env: { ...process.env, HOME: cwd, ARMATURE_STATE_DIR: Path.join(cwd, ".state") },
      stdio: ["pipe", "ignore", "ignore"]
    })
    let sawTemp = false
    // killed once the temp file holds part of the content: mid-way, not before the first byte
    const watcher = Fs.watch(cwd, (_event, name) => {
      if (sawTemp || name === null || !isTemp(String(name))) return
      const size = Fs.statSync(Path.join(cwd, String(name)), { throwIfNoEntry: false })?.size ?? 0
      if (size === 0) return
      sawTemp = true
      child.kill("SIGKILL")
    })
    child.on("close", (_code, signal) => {
      watcher.close()
      resolve({ signal, sawTemp })
    })
    child.stdin.end(JSON.stringify(calls))
  })

describe("stale temp files are swept at start", () => {
  it("a Write SIGKILLed mid-way (50 MB): the next exec removes its temp file, the target is intact", async () => {
    const cwd = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-sweep-")))
    const target = Path.join(cwd, "big.txt")
    Fs.writeFileSync(target, "the original\n")
    // files that are not a dead writer's temp file stay: another tool's temp, and a temp of a live writer (this test)
    const others = [".big.txt.tmp", `.big.txt.${process.pid}-0123456789ab.armature.tmp`]
    for (const name of others) Fs.writeFileSync(Path.join(cwd, name), "keep")

    const killed = await killMidWrite(cwd, target, 50 * 1024 * 1024)
    expect(killed).toEqual({ signal: "SIGKILL", sawTemp: true })
    const left = Fs.readdirSync(cwd).filter((n) => isTemp(n) && !others.includes(n))
    expect(left).toHaveLength(1)
    expect(Fs.statSync(Path.join(cwd, left[0])).size).toBeGreaterThan(0)
    expect(Fs.readFileSync(target, "utf8")).toBe("the original\n")

    // a later command that writes nothing (a Glob) still sweeps its working directory at start
    const glob = [{ type: "tool_use", id: "g1", name: "Glob", input: { pattern: "*.nothing" } }]
    Fs.writeFileSync(Path.join(cwd, "glob.json"), JSON.stringify(glob))
    const next = await runCli(["exec", "glob.json", "--output", "json"], cwd)
    expect(next.code, next.stderr).toBe(0)
    expect(Fs.readdirSync(cwd).filter(isTemp).sort()).toEqual(others.filter(isTemp).sort())
    expect(Fs.existsSync(Path.join(cwd, ".big.txt.tmp"))).toBe(true)
    expect(Fs.readFileSync(target, "utf8")).toBe("the original\n")
  }, 120_000)
})
