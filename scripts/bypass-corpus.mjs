#!/usr/bin/env node
/**
 * Adversarial corpus: commands that try to get a denied command (`rm`, `git push`) or a denied read
 * (`./secrets/**`) past a tool-wide `allow: ["Bash"]` by wrapping it in another command, an interpreter or an
 * option that runs a program. Each runs through `armature permissions check` (exit 0 allow, 1 ask, 3 deny, and the
 * printed decision must agree: a crashed CLI also exits 1, and such an error fails its case); a bypass attempt must
 * never be allowed, a safe command must stay allowed. The `scenarios` each bring their own
 * mode, rules and files (directories, files, symlinks made in a fresh project first): commands that must not be
 * allowed by acceptEdits mode, by being read-only, or by a prefix rule, next to ones that must be. The `classes` are
 * attack classes (exec primitives in read-only commands, GNU option prefixes, path escapes, deny rules through
 * wrappers and paths), each run in every mode it lists.
 *
 *   node scripts/bypass-corpus.mjs [--cli bin/armature.mjs] [--mode default] [--only-scenarios] [--verbose]
 *
 * A case is a command line for Bash, or `{ "tool": "Write", "input": {…} }` for another tool.
 * Prints one JSON line per command with --verbose, then a summary line; exits 1 when any expectation fails.
 * `--class TEXT` runs only the scenarios and classes whose name holds TEXT (and skips the main list). A class marked
 * `"open": true` holds escapes not fixed yet: its allowed attempts are counted as `openEscapes`, not as failures
 * (each fix removes the mark, so from then on the class must stay at 0).
 */
import { execFile, execFileSync } from "node:child_process"
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
const only = flag("--class", undefined)
const onlyScenarios = argv.includes("--only-scenarios") || only !== undefined
const bypass = onlyScenarios ? [] : corpus.bypass
const safe = onlyScenarios ? [] : corpus.safe
// each class is run once per mode it lists, as a scenario of its own (bypass attempts must not be allowed in any)
const classes = (corpus.classes ?? []).flatMap((c) =>
  c.modes.map((classMode) => ({ ...c, name: `${classMode}: ${c.name}`, mode: classMode, safe: classMode === "bypassPermissions" ? [] : c.safe }))
)
const scenarios = [...(corpus.scenarios ?? []), ...classes].filter((s) => only === undefined || s.name.includes(only))

/**
 * A fresh project with its settings file; `setup` entries are `["dir", p]`, `["file", p]` (or `["file", p, text]`),
 * `["link", p, target]` and `["git"]` (a repository committing everything made so far).
 */
const project = (permissions, setup = []) => {
  const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-corpus-"))
  for (const [kind, path, target] of setup) {
    if (kind === "git") {
      const git = (...args) =>
        execFileSync("git", ["-c", "user.name=corpus", "-c", "user.email=corpus@example.com", ...args], { cwd: root, stdio: "ignore" })
      git("init", "-q")
      git("add", "-A")
      git("commit", "-q", "-m", "corpus")
      continue
    }
    const at = Path.join(root, path)
    Fs.mkdirSync(kind === "dir" ? at : Path.dirname(at), { recursive: true })
    if (kind === "file") Fs.writeFileSync(at, target ?? "x\n")
    if (kind === "link") Fs.symlinkSync(target, at)
  }
  const settings = Path.join(root, ".armature-corpus-settings.json")
  Fs.writeFileSync(settings, JSON.stringify({ permissions }))
  return { dir: root, settings }
}

const main = project({ allow: ["Bash"], deny: ["Bash(rm:*)", "Bash(git push:*)", "Read(./secrets/**)"] })
const dirs = [main.dir]

// A case is a Bash command, or `{ "tool": "Write", "input": {…} }` for another tool.
const check = ({ command, settings, dir, mode: caseMode }) =>
  new Promise((resolve) => {
    const call = typeof command === "string" ? { tool: "Bash", input: { command } } : command
    execFile(
      process.execPath,
      [
        cli,
        "permissions",
        "check",
        "--tool",
        call.tool,
        "--input",
        JSON.stringify(call.input),
        "--settings",
        settings,
        "--permission-mode",
        caseMode,
        "--cwd",
        dir,
        "--output",
        "json"
      ],
      { maxBuffer: 1 << 24 },
      (error, stdout) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1
        const byCode = { 0: "allow", 1: "ask", 3: "deny" }[code]
        // a crashed CLI also exits 1: a decision counts only when the printed JSON says the same as the exit code,
        // anything else is an error (a failure of the case whatever it expects)
        let decision
        try {
          decision = JSON.parse(stdout)
        } catch {}
        const behavior =
          byCode !== undefined && decision?.behavior === byCode
            ? byCode
            : `error (exit ${code}${decision === undefined ? ", no decision printed" : `, printed ${decision.behavior}`})`
        resolve({ behavior, reason: decision?.reason ?? "" })
      }
    )
  })

const placed = (p, scenario) => ({
  settings: p.settings,
  dir: p.dir,
  mode: scenario?.mode ?? mode,
  scenario: scenario?.name,
  open: scenario?.open === true
})
const cases = [
  ...bypass.map((command) => ({ command, safe: false, ...placed(main) })),
  ...safe.map((command) => ({ command, safe: true, ...placed(main) }))
]
for (const scenario of scenarios) {
  const p = project(scenario.permissions, scenario.setup)
  dirs.push(p.dir)
  cases.push(...scenario.bypass.map((command) => ({ command, safe: false, ...placed(p, scenario) })))
  cases.push(...scenario.safe.map((command) => ({ command, safe: true, ...placed(p, scenario) })))
}
const results = new Array(cases.length)
let next = 0
const worker = async () => {
  while (next < cases.length) {
    const at = next++
    results[at] = { ...cases[at], ...(await check(cases[at])) }
  }
}
await Promise.all([worker(), worker()])
for (const dir of dirs) Fs.rmSync(dir, { recursive: true, force: true })

const count = (safeCase, behavior) => results.filter((r) => r.safe === safeCase && r.behavior === behavior).length
const bypassCount = results.filter((r) => !r.safe).length
const safeCount = results.filter((r) => r.safe).length
const escaped = (r) => !r.safe && (r.behavior === "allow" || r.behavior.startsWith("error"))
const open = results.filter((r) => r.open && escaped(r))
const failures = results.filter((r) => (r.safe ? r.behavior !== "allow" : escaped(r) && !r.open))
if (verbose) for (const r of results) console.log(JSON.stringify(r))
for (const r of open) console.error(`OPEN ESCAPE (${r.scenario}): ${r.command}  [${r.behavior}] ${r.reason}`)
for (const r of failures) {
  const where = r.scenario === undefined ? "" : ` (${r.scenario})`
  console.error(`${r.safe ? "SAFE NOT ALLOWED" : "BYPASS ALLOWED"}${where}: ${r.command}  [${r.behavior}] ${r.reason}`)
}
console.log(
  JSON.stringify({
    bypassAttempts: bypassCount,
    allowed: results.filter((r) => !r.safe && !r.open && r.behavior === "allow").length,
    openEscapes: open.length,
    asked: count(false, "ask"),
    denied: count(false, "deny"),
    safe: safeCount,
    scenarios: scenarios.length,
    safeAllowed: count(true, "allow"),
    errors: results.filter((r) => r.behavior.startsWith("error")).length,
    failures: failures.length
  })
)
process.exit(failures.length === 0 ? 0 : 1)
