/**
 * The kill does not trust a single empty scan of /proc: a descendant in the middle of `exec` has no readable
 * environment for a moment, so its tag cannot be seen. A real tagged process, hidden from the first scan only (the
 * window an exec opens, made deterministic by the scan wrapper), is still found by the second scan and killed.
 */
import * as ChildProcess from "node:child_process"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as ProcessGroup from "../../../src/layers/process/ProcessGroup.js"
import { isAlive, waitUntil } from "../../fixtures/ProcessTestKit.js"

/** A real `sleep` in its own group, tagged as a call's process would be. */
const tagged = () => {
  const tag = `rescan-${Math.random().toString(36).slice(2)}`
  const child = ChildProcess.spawn("sleep", ["1000"], {
    detached: true,
    stdio: "ignore",
    env: { ...process.env, [ProcessGroup.tagVariable]: tag }
  })
  child.on("error", () => {})
  return { pid: child.pid ?? 0, tag, child }
}

describe("ProcessGroup.killAllWith", () => {
  it.effect("a process the first scan misses is found by the second one and killed", () =>
    Effect.gen(function* () {
      const { pid, tag } = tagged()
      // The child is visible once it runs sleep with its tag readable.
      yield* waitUntil("the child to be listed", () => ProcessGroup.findDescendants(-1, tag).includes(pid))
      let scans = 0
      const scan = () => {
        scans++
        return scans === 1 ? [] : ProcessGroup.findDescendants(-1, tag)
      }
      yield* ProcessGroup.killAllWith(scan, pid, 200)
      expect(scans).toBeGreaterThanOrEqual(2)
      yield* waitUntil("the hidden process to be gone", () => !isAlive(pid), 3_000)
      expect(isAlive(pid)).toBe(false)
    })
  )

  it.effect("two empty scans one poll apart end the kill without a signal", () =>
    Effect.gen(function* () {
      const { pid, tag, child } = tagged()
      yield* waitUntil("the child to be listed", () => ProcessGroup.findDescendants(-1, tag).includes(pid))
      let scans = 0
      // The scan never sees the process: nothing is signalled, so it is still alive afterwards.
      yield* ProcessGroup.killAllWith(
        () => {
          scans++
          return []
        },
        -999_999,
        200
      )
      expect({ scans, alive: isAlive(pid) }).toEqual({ scans: 2, alive: true })
      child.kill("SIGKILL")
      yield* waitUntil("the process to be gone", () => !isAlive(pid), 3_000)
    })
  )
  it.effect("a group id of 0 or below is never signalled as a group (kill(0) would hit the caller's own group)", () =>
    Effect.gen(function* () {
      // run in a child in a group of its own, so that a regression kills that child, not the test runner
      const script = [
        `import * as ProcessGroup from ${JSON.stringify(new URL("../../../src/layers/process/ProcessGroup.ts", import.meta.url).href)}`,
        'import { Effect } from "effect"',
        "let scans = 0",
        "const scan = () => (++scans < 3 ? [2147483646] : [])",
        "for (const pgid of [0, -1]) await Effect.runPromise(ProcessGroup.killAllWith(scan, pgid, 50))",
        'process.stdout.write("survived")'
      ].join("\n")
      const result = yield* Effect.promise(
        () =>
          new Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }>((resolve) => {
            const child = ChildProcess.spawn(
              process.execPath,
              ["--import", "tsx", "--input-type=module", "-e", script],
              {
                detached: true,
                stdio: ["ignore", "pipe", "inherit"]
              }
            )
            let out = ""
            child.stdout.on("data", (d: Buffer) => {
              out += d.toString()
            })
            child.on("close", (code, signal) => resolve({ code, signal, out }))
          })
      )
      expect(result).toEqual({ code: 0, signal: null, out: "survived" })
    })
  )
})
