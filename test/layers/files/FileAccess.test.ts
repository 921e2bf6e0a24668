import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as FileAccess from "../../../src/layers/files/FileAccess.js"
import { tempDir, waitUntil } from "../../fixtures/ProcessTestKit.js"

const writer = Path.resolve(import.meta.dirname, "../../fixtures/files/write-big.ts")
const root = Path.resolve(import.meta.dirname, "../../..")

const temps = (dir: string) => Fs.readdirSync(dir).filter((name) => name.endsWith(".armature.tmp"))

/** A process that has exited and been reaped: its pid is free. */
const deadPid = Effect.async<number>((resume) => {
  const child = ChildProcess.spawn("/bin/true")
  child.once("exit", () => resume(Effect.succeed(child.pid ?? 0)))
})

describe("FileAccess temp files", () => {
  it.live("a write killed mid-way leaves its temp file; the next process's first write there removes it", () =>
    Effect.gen(function* () {
      const dir = tempDir("armature-temp-")
      const target = Path.join(dir, "big.bin")
      const child = ChildProcess.spawn(
        process.execPath,
        ["--import", "tsx", writer, target, String(256 * 1024 * 1024)],
        {
          cwd: root,
          stdio: "ignore"
        }
      )
      const exited = Effect.async<void>((resume) => {
        if (child.exitCode !== null || child.signalCode !== null) resume(Effect.void)
        else child.once("exit", () => resume(Effect.void))
      })
      yield* waitUntil(
        "the temp file to grow",
        () => temps(dir).some((n) => Fs.statSync(Path.join(dir, n)).size > 0),
        30_000
      )
      child.kill("SIGKILL")
      yield* exited
      expect(child.signalCode).toBe("SIGKILL")
      const [left] = temps(dir)
      expect(left).toMatch(new RegExp(`^\\.big\\.bin\\.${child.pid}-[0-9a-f]{12}\\.armature\\.tmp$`))
      expect(Fs.existsSync(target)).toBe(false)
      yield* FileAccess.writeAtomic(Path.join(dir, "other.txt"), Buffer.from("hello"), undefined)
      expect(temps(dir)).toEqual([])
      expect(Fs.readFileSync(Path.join(dir, "other.txt"), "utf8")).toBe("hello")
    })
  )

  it.live("a live writer's temp file and other files stay; dead writers' and very old ones go", () =>
    Effect.gen(function* () {
      const dir = tempDir("armature-temp-")
      const dead = yield* deadPid
      const live = Path.join(dir, `.a.txt.${process.ppid}-0123456789ab.armature.tmp`)
      const ours = Path.join(dir, `.b.txt.${process.pid}-0123456789ab.armature.tmp`)
      const crashed = Path.join(dir, `.c.txt.${dead}-0123456789ab.armature.tmp`)
      const old = Path.join(dir, `.d.txt.${process.ppid}-0123456789ab.armature.tmp`)
      const legacy = Path.join(dir, ".e.txt.0123456789ab.armature.tmp")
      const legacyOld = Path.join(dir, ".f.txt.0123456789ab.armature.tmp")
      const unrelated = Path.join(dir, "notes.armature.tmp")
      for (const file of [live, ours, crashed, old, legacy, legacyOld, unrelated]) Fs.writeFileSync(file, "x")
      const hoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000)
      for (const file of [old, legacyOld]) Fs.utimesSync(file, hoursAgo, hoursAgo)
      const removed = yield* FileAccess.removeStaleTemps(dir)
      expect([...removed].sort()).toEqual([crashed, old, legacyOld].sort())
      expect(temps(dir).sort()).toEqual([live, ours, legacy, unrelated].map((f) => Path.basename(f)).sort())
    })
  )

  it("temp names carry the writer's pid and are recognised", () => {
    const name = Path.basename(FileAccess.tempNameFor("/x/y/file.ts", 4242))
    expect(name).toMatch(/^\.file\.ts\.4242-[0-9a-f]{12}\.armature\.tmp$/)
    expect(FileAccess.isStaleTemp(name, Date.now(), Date.now())).toBe(process.pid !== 4242 && !isRunning(4242))
  })
})

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}
