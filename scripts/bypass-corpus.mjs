#!/usr/bin/env node
/**
 * Adversarial corpus: commands that try to get a denied command (`rm`, `git push`) or a denied read
 * (`./secrets/**`) past a tool-wide `allow: ["Bash"]` by wrapping it in another command, an interpreter or an
 * option that runs a program. Each runs through `armature permissions check` (exit 0 allow, 1 ask, 3 deny); a
 * bypass attempt must never be allowed, a safe command must stay allowed.
 *
 *   node scripts/bypass-corpus.mjs [--cli bin/armature.mjs] [--mode default] [--verbose]
 *
 * Prints one JSON line per command with --verbose, then a summary line; exits 1 when any expectation fails.
 */
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

const argv = process.argv.slice(2)
const flag = (name, fallback) => {
  const at = argv.indexOf(name)
  return at === -1 ? fallback : argv[at + 1]
}
const cli = Path.resolve(flag("--cli", "bin/armature.mjs"))
const mode = flag("--mode", "default")
const verbose = argv.includes("--verbose")

const corpus = JSON.parse(Fs.readFileSync(new URL("./bypass-corpus.json", import.meta.url), "utf8"))
const { bypass, safe } = corpus

const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-corpus-"))
const settings = Path.join(dir, "settings.json")
Fs.writeFileSync(
  settings,
  JSON.stringify({ permissions: { allow: ["Bash"], deny: ["Bash(rm:*)", "Bash(git push:*)", "Read(./secrets/**)"] } })
)

const check = (command) =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      [
        cli,
        "permissions",
        "check",
        "--tool",
        "Bash",
        "--input",
        JSON.stringify({ command }),
        "--settings",
        settings,
        "--permission-mode",
        mode,
        "--cwd",
        dir,
        "--output",
        "json"
      ],
      { maxBuffer: 1 << 24 },
      (error, stdout) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1
        const behavior = { 0: "allow", 1: "ask", 3: "deny" }[code] ?? `exit ${code}`
        let reason = ""
        try {
          reason = JSON.parse(stdout).reason
        } catch {}
        resolve({ behavior, reason })
      }
    )
  })

const cases = [...bypass.map((command) => ({ command, safe: false })), ...safe.map((command) => ({ command, safe: true }))]
const results = new Array(cases.length)
let next = 0
const worker = async () => {
  while (next < cases.length) {
    const at = next++
    results[at] = { ...cases[at], ...(await check(cases[at].command)) }
  }
}
await Promise.all([worker(), worker()])
Fs.rmSync(dir, { recursive: true, force: true })

const count = (safeCase, behavior) => results.filter((r) => r.safe === safeCase && r.behavior === behavior).length
const failures = results.filter((r) => (r.safe ? r.behavior !== "allow" : r.behavior === "allow" || r.behavior.startsWith("exit")))
if (verbose) for (const r of results) console.log(JSON.stringify(r))
for (const r of failures) console.error(`${r.safe ? "SAFE NOT ALLOWED" : "BYPASS ALLOWED"}: ${r.command}  [${r.behavior}] ${r.reason}`)
console.log(
  JSON.stringify({
    bypassAttempts: bypass.length,
    allowed: count(false, "allow"),
    asked: count(false, "ask"),
    denied: count(false, "deny"),
    safe: safe.length,
    safeAllowed: count(true, "allow"),
    failures: failures.length
  })
)
process.exit(failures.length === 0 ? 0 : 1)
