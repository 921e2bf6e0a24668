/**
 * No process survives its call: descendants that left the process group (setsid, setsid -f, nohup, a double-fork
 * daemon with every descriptor closed) are found by their environment tag and killed when a Bash call times out
 * or is interrupted, when a background shell is killed or its service ends, and when a hook times out.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Scope } from "effect"
import * as CommandHookRunner from "../../../src/layers/hooks/CommandHookRunner.js"
import * as ProcessBackgroundShells from "../../../src/layers/process/ProcessBackgroundShells.js"
import * as ProcessGroup from "../../../src/layers/process/ProcessGroup.js"
import * as Bash from "../../../src/layers/tools/Bash.js"
import { bashServices, isAlive, makeContext, tempDir, waitUntil } from "../../fixtures/ProcessTestKit.js"

const escapeScript = Path.resolve(import.meta.dirname, "../../fixtures/process/escape.sh")
const ways = ["setsid", "setsid-f", "nohup", "daemon"] as const

const stateDir = tempDir("armature-descendants-state-")

const Services = bashServices(stateDir)

/** The command a process runs now ("" once it is gone). */
const commandOf = (pid: number): string => {
  try {
    return Fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim()
  } catch {
    return ""
  }
}

/**
 * Waits until every escapee has written its pid and become `sleep`, and returns the pids. (Each writes its pid and
 * then execs: while the exec replaces its memory, its environment cannot be read, so one scan of /proc may miss it —
 * the kill re-scans in rounds for that reason; a test of a single scan waits for the exec to finish.)
 */
const escapees = (dir: string) =>
  Effect.gen(function* () {
    const files = ways.map((way) => Path.join(dir, `${way}.pid`))
    yield* waitUntil("every escapee's pid", () =>
      files.every((file) => Fs.existsSync(file) && Fs.readFileSync(file, "utf8").endsWith("\n"))
    )
    const pids = files.map((file) => Number(Fs.readFileSync(file, "utf8").trim()))
    yield* waitUntil("every escapee to run sleep", () => pids.every((pid) => commandOf(pid) === "sleep"))
    return pids
  })

/** Every pid is gone (or a zombie) within 3 s, polled on /proc. */
const goneWithin3s = (pids: ReadonlyArray<number>) =>
  waitUntil("every escapee to be gone", () => pids.every((pid) => !isAlive(pid)), 3_000)

layer(Services, { excludeTestServices: true })("descendants outside the group", (it) => {
  const call = (command: string, timeout?: number) =>
    Effect.gen(function* () {
      const bash = yield* Bash.make
      const { ctx } = yield* makeContext(`toolu_escape_${Math.random().toString(36).slice(2)}`, stateDir)
      return yield* Effect.either(bash.call(timeout === undefined ? { command } : { command, timeout }, ctx))
    })

  it.effect("a Bash call that times out leaves none of them", () =>
    Effect.gen(function* () {
      const dir = tempDir("armature-escapeScript-")
      const fiber = yield* Effect.fork(call(`sh ${escapeScript} ${dir}`, 2_500))
      const pids = yield* escapees(dir)
      expect(pids.every(isAlive)).toBe(true)
      const result = yield* Fiber.join(fiber)
      expect(result._tag === "Left" ? result.left.message : "").toMatch(/^Command timed out after 2500 ms/)
      yield* goneWithin3s(pids)
    })
  )

  it.effect("an interrupted Bash call leaves none of them", () =>
    Effect.gen(function* () {
      const dir = tempDir("armature-escapeScript-")
      const fiber = yield* Effect.fork(call(`sh ${escapeScript} ${dir}`))
      const pids = yield* escapees(dir)
      expect(pids.every(isAlive)).toBe(true)
      expect(Exit.isInterrupted(yield* Fiber.interrupt(fiber))).toBe(true)
      yield* goneWithin3s(pids)
    })
  )

  it.effect("a Bash call that ends while they hold its pipes leaves none of them", () =>
    Effect.gen(function* () {
      const dir = tempDir("armature-escapeScript-")
      const waitAll = `for w in ${ways.join(" ")}; do while [ ! -s ${dir}/$w.pid ]; do sleep 0.05; done; done`
      const result = yield* call(`sh ${escapeScript} ${dir} exit; ${waitAll}`)
      expect(result._tag).toBe("Right")
      yield* goneWithin3s(yield* escapees(dir))
    })
  )

  it.effect("KillShell and the end of the background-shell service leave none of them", () =>
    Effect.gen(function* () {
      const killed = tempDir("armature-escapeScript-")
      const ended = tempDir("armature-escapeScript-")
      const scope = yield* Scope.make()
      const shells = yield* ProcessBackgroundShells.make(stateDir).pipe(Scope.extend(scope))
      const first = yield* shells.start(`sh ${escapeScript} ${killed}`, stateDir)
      yield* shells.start(`sh ${escapeScript} ${ended} exit`, stateDir)
      const killedPids = yield* escapees(killed)
      const endedPids = yield* escapees(ended)
      expect([...killedPids, ...endedPids].every(isAlive)).toBe(true)
      yield* shells.kill(first.id)
      yield* goneWithin3s(killedPids)
      expect(endedPids.every(isAlive)).toBe(true)
      yield* Scope.close(scope, Exit.void)
      yield* goneWithin3s(endedPids)
    })
  )
})

describe("hooks", () => {
  layer(ProcessGroup.layer, { excludeTestServices: true })((it) => {
    it.effect("a hook that times out leaves none of them", () =>
      Effect.gen(function* () {
        const dir = tempDir("armature-escapeScript-")
        const result = yield* CommandHookRunner.run({
          command: `sh ${escapeScript} ${dir}`,
          cwd: dir,
          env: {},
          input: "{}",
          timeoutSeconds: 2,
          killGraceMs: 200
        })
        expect(result._tag).toBe("TimedOut")
        yield* goneWithin3s(yield* escapees(dir))
      })
    )
  })
})

describe("ProcessGroup.findDescendants", () => {
  layer(Layer.empty, { excludeTestServices: true })((it) => {
    it.scoped("finds the tagged processes, and nothing of a call that ended cleanly", () =>
      Effect.gen(function* () {
        const dir = tempDir("armature-escapeScript-")
        const handle = yield* ProcessGroup.spawn({
          file: "/bin/sh",
          args: [escapeScript, dir],
          cwd: dir,
          stdio: "ignore"
        })
        const pids = yield* escapees(dir)
        const found = ProcessGroup.findDescendants(handle.pid, handle.tag)
        expect(found).toEqual(expect.arrayContaining([handle.pid, ...pids]))
        yield* handle.kill
        expect(ProcessGroup.findDescendants(handle.pid, handle.tag)).toEqual([])
        const quiet = yield* ProcessGroup.spawn({ file: "/bin/true", args: [], cwd: dir, stdio: "ignore" })
        yield* quiet.exited
        yield* quiet.closed
        expect(quiet.endedCleanly()).toBe(true)
      })
    )
  })
})
