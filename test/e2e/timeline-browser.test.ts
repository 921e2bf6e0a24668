/**
 * The timeline page in a real headless browser: `armature exec --transcript --timeline` over a batch with an
 * allowed, a denied, a failed and a cancelled call, then `armature timeline` on the saved transcript; Debian's
 * chromium (through playwright-core) loads each page with no console error and no request, finds one row per call
 * with the outcome's colour, opens a row's details on click, and writes a screenshot as an artifact
 * (test-artifacts/timeline-exec.png).
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { chromium } from "playwright-core"

const bin = Path.resolve(import.meta.dirname, "../../bin/armature.mjs")
const artifacts = Path.resolve(import.meta.dirname, "../../test-artifacts")
const browserPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"

const armature = (cwd: string, args: ReadonlyArray<string>) =>
  spawnSync(process.execPath, [bin, ...args], {
    cwd,
    env: { ...process.env, ARMATURE_STATE_DIR: Path.join(cwd, ".state"), HOME: cwd },
    encoding: "utf8",
    timeout: 60_000
  })

const calls = [
  { type: "tool_use", id: "sleep_a", name: "Sleep", input: { duration_ms: 150 } },
  { type: "tool_use", id: "sleep_b", name: "Sleep", input: { duration_ms: 80 } },
  { type: "tool_use", id: "rm", name: "Bash", input: { command: "rm -f nothing.txt" } },
  { type: "tool_use", id: "fails", name: "Bash", input: { command: "exit 3" } },
  { type: "tool_use", id: "after", name: "Sleep", input: { duration_ms: 10 } }
]

/** Loads a page from a file, with every console message, page error and network request recorded. */
const inspect = async (file: string, screenshot: string) => {
  const browser = await chromium.launch({
    executablePath: browserPath,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })
  try {
    const page = await browser.newPage({ viewport: { width: 1100, height: 420 } })
    const problems: Array<string> = []
    const requests: Array<string> = []
    page.on("console", (m) => {
      if (m.type() === "error" || m.type() === "warning") problems.push(`${m.type()}: ${m.text()}`)
    })
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`))
    page.on("request", (r) => {
      if (!r.url().startsWith("file:")) requests.push(r.url())
    })
    await page.goto(`file://${file}`, { waitUntil: "load" })
    const rows = await page.$$eval(".row.call", (els) =>
      els.map((el) => ({ id: el.getAttribute("data-id"), cls: el.className }))
    )
    const closedBefore = await page.$$eval(".details.open", (els) => els.length)
    await page.click('.row.call[data-id="rm"]')
    const opened = await page.$eval(".details.open", (el) => el.textContent ?? "")
    await page.click('.row.call[data-id="rm"]')
    Fs.mkdirSync(Path.dirname(screenshot), { recursive: true })
    await page.screenshot({ path: screenshot, fullPage: true })
    return { problems, requests, rows, closedBefore, opened }
  } finally {
    await browser.close()
  }
}

describe("timeline page in headless chromium", () => {
  it("exec --timeline and armature timeline: one row per call, outcome colours, details on click", async () => {
    const cwd = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-timeline-"))
    Fs.writeFileSync(Path.join(cwd, "calls.json"), JSON.stringify(calls))
    const exec = armature(cwd, [
      "exec",
      "calls.json",
      "--disallowed-tools",
      "Bash(rm:*)",
      "--allowed-tools",
      "Bash(exit:*)",
      "--transcript",
      "audit.jsonl",
      "--timeline",
      "exec.html"
    ])
    expect(exec.status).toBe(0)
    // the audit trail: every call's decision with its trace, the calls and results as run records them
    const lines = Fs.readFileSync(Path.join(cwd, "audit.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    const decisions = lines.filter((l) => l.type === "permission_decision")
    // every call that started was decided; "after", cancelled in the queue when "fails" failed, may have been decided
    // before the cancellation reached it (the executor decides a queued call while it waits for its turn)
    const decided = decisions.map((d) => String(d.tool_use_id)).sort()
    expect(decided.filter((id) => id !== "after")).toEqual(["fails", "rm", "sleep_a", "sleep_b"])
    expect(decisions.find((d) => d.tool_use_id === "rm")).toMatchObject({ behavior: "deny", rule: "Bash(rm:*)" })
    expect((decisions[0].trace as ReadonlyArray<unknown>).length).toBeGreaterThan(0)
    expect(lines.filter((l) => l.type === "assistant")).toHaveLength(1)
    expect(lines.filter((l) => l.type === "user")).toHaveLength(1)
    expect(lines.at(-1)).toMatchObject({ type: "summary", calls: 5 })

    const rendered = armature(cwd, ["timeline", "audit.jsonl", "-o", "from-transcript.html"])
    expect(rendered.status).toBe(0)

    for (const [page, shot] of [
      ["exec.html", "timeline-exec.png"],
      ["from-transcript.html", "timeline-transcript.png"]
    ] as const) {
      const html = Fs.readFileSync(Path.join(cwd, page), "utf8")
      expect(html).not.toMatch(/(src|href)=["']?https?:/)
      const seen = await inspect(Path.join(cwd, page), Path.join(artifacts, shot))
      expect(seen.problems).toEqual([])
      expect(seen.requests).toEqual([])
      expect(seen.rows.map((r) => r.id)).toEqual(["sleep_a", "sleep_b", "rm", "fails", "after"])
      const kind = (id: string) => seen.rows.find((r) => r.id === id)?.cls.match(/(\w+)-row/)?.[1]
      expect(["sleep_a", "sleep_b", "rm", "fails", "after"].map(kind)).toEqual([
        "ok",
        "ok",
        "denied",
        "error",
        "cancelled"
      ])
      expect(seen.closedBefore).toBe(0)
      expect(seen.opened).toContain("decision: deny rule Bash(rm:*)")
      expect(Fs.statSync(Path.join(artifacts, shot)).size).toBeGreaterThan(1000)
    }
  }, 240_000)
})
