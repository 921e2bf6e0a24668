import * as Fs from "node:fs"
import * as Path from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Either, Exit, Fiber, Layer, Ref, Schema, Scope } from "effect"
import * as Tool from "../../../src/domain/Tool.js"
import * as ProcessBackgroundShells from "../../../src/layers/process/ProcessBackgroundShells.js"
import * as ProcessGroup from "../../../src/layers/process/ProcessGroup.js"
import * as Bash from "../../../src/layers/tools/Bash.js"
import * as BashOutput from "../../../src/layers/tools/BashOutput.js"
import * as KillShell from "../../../src/layers/tools/KillShell.js"
import * as BackgroundShells from "../../../src/services/BackgroundShells.js"
import { bashServices, groupMembers, isAlive, makeContext, tempDir, waitUntil } from "../../fixtures/ProcessTestKit.js"

const stateDir = tempDir("armature-bash-state-")
const work = tempDir("armature-bash-work-")

const Services = bashServices(stateDir)

let counter = 0
const nextId = () => `toolu_bash_${++counter}`

const run = (input: Bash.Input, cwd = work) =>
  Effect.gen(function* () {
    const bash = yield* Bash.make
    const { ctx, progress } = yield* makeContext(nextId(), cwd)
    const result = yield* Effect.either(bash.call(input, ctx))
    return { result, ctx, progress: yield* Ref.get(progress) }
  })

const succeed = (input: Bash.Input, cwd = work) =>
  Effect.flatMap(run(input, cwd), ({ result }) =>
    result._tag === "Right" ? Effect.succeed(result.right) : Effect.dieMessage(`failed: ${result.left.message}`)
  )

const fail = (input: Bash.Input) =>
  Effect.flatMap(run(input), ({ result }) =>
    result._tag === "Left" && (result.left._tag === "CommandFailed" || result.left._tag === "CommandTimedOut")
      ? Effect.succeed(result.left)
      : Effect.dieMessage(`expected a failed or timed-out command, got ${JSON.stringify(result)}`)
  )

const text = (out: string | Tool.WithModifier<string>): string => (typeof out === "string" ? out : out.output)

layer(Services, { excludeTestServices: true })("Bash", (it) => {
  describe("foreground", () => {
    it.effect("returns stdout without the trailing newline", () =>
      Effect.gen(function* () {
        expect(yield* succeed({ command: "echo hello; echo world" })).toBe("hello\nworld")
      })
    )

    it.effect("interleaves stdout and stderr in arrival order", () =>
      Effect.gen(function* () {
        const out = yield* succeed({ command: "echo one; sleep 0.1; echo two >&2; sleep 0.1; echo three" })
        expect(out).toBe("one\ntwo\nthree")
      })
    )

    it.effect("runs in the given cwd", () =>
      Effect.gen(function* () {
        expect(yield* succeed({ command: "pwd" })).toBe(work)
      })
    )

    it.effect("fails a non-zero exit with the code, stderr and stdout", () =>
      Effect.gen(function* () {
        const failure = yield* fail({ command: "echo out; echo err >&2; exit 3" })
        expect(failure).toBeInstanceOf(Bash.CommandFailed)
        expect(failure.message).toBe("Exit code 3")
        expect(failure.stderr).toBe("err")
        expect(failure.stdout).toBe("out")
      })
    )

    it.effect("exit 1 of grep, find, diff and test is not an error", () =>
      Effect.gen(function* () {
        expect(yield* succeed({ command: "echo abc | grep zzz" })).toBe("Exit code 1")
        expect(yield* succeed({ command: "test -f /nonexistent/file" })).toBe("Exit code 1")
        expect(yield* succeed({ command: "[ 1 = 2 ]" })).toBe("Exit code 1")
        expect(yield* succeed({ command: "printf 'a\\n' > a.txt; printf 'b\\n' > b.txt; diff a.txt b.txt" })).toBe(
          "1c1\n< a\n---\n> b\nExit code 1"
        )
        expect(yield* succeed({ command: "LC_ALL=C timeout 5 /usr/bin/grep zzz a.txt" })).toBe("Exit code 1")
      })
    )

    it.effect("exit 1 of other commands, and exit 2 of grep, are errors", () =>
      Effect.gen(function* () {
        expect((yield* fail({ command: "false" })).message).toBe("Exit code 1")
        expect((yield* fail({ command: "grep zzz | false" })).message).toBe("Exit code 1")
        const missing = yield* fail({ command: "grep zzz /nonexistent/file" })
        expect(missing.message).toBe("Exit code 2")
        expect(missing.stderr).toBe("grep: /nonexistent/file: No such file or directory")
      })
    )

    it.effect("reports a failing spawn (missing cwd) as a SpawnError", () =>
      Effect.gen(function* () {
        const missing = Path.join(work, "does-not-exist")
        const { result } = yield* run({ command: "echo hi" }, missing)
        expect(result._tag).toBe("Left")
        if (result._tag === "Left") {
          expect(result.left._tag).toBe("SpawnError")
          expect(result.left.message).toBe(`Could not start /bin/bash: working directory ${missing} does not exist`)
        }
      })
    )
  })

  describe("cd persistence", () => {
    it.effect("returns a context modifier when the final directory differs", () =>
      Effect.gen(function* () {
        const out = yield* succeed({ command: "mkdir -p sub/deeper && cd sub/deeper && echo moved" })
        expect(Tool.isWithModifier(out)).toBe(true)
        if (!Tool.isWithModifier(out)) return
        expect(out.output).toBe("moved")
        expect(out.modifier({ cwd: work })).toEqual({ cwd: Path.join(work, "sub", "deeper") })
        // The next call runs in the new directory.
        expect(yield* succeed({ command: "pwd" }, out.modifier({ cwd: work }).cwd)).toBe(
          Path.join(work, "sub", "deeper")
        )
      })
    )

    it.effect("returns the plain output when the directory is unchanged, even after an explicit exit", () =>
      Effect.gen(function* () {
        expect(yield* succeed({ command: "cd . && echo same" })).toBe("same")
        const out = yield* succeed({ command: "mkdir -p other && cd other && exit 0" })
        expect(Tool.isWithModifier(out) ? out.modifier({ cwd: work }).cwd : "").toBe(Path.join(work, "other"))
      })
    )
  })

  describe("large output", () => {
    it.effect("output over 30,000 characters is saved whole and shown as a 2 KB <persisted-output> preview", () =>
      Effect.gen(function* () {
        const bash = yield* Bash.make
        const { ctx } = yield* makeContext("toolu_big_seq", work)
        // 200,000 characters: lines of 99 digits and a newline.
        const out = text(yield* bash.call({ command: "yes $(printf '7%.0s' $(seq 99)) | head -n 2000" }, ctx))
        const full = `${"7".repeat(99)}\n`.repeat(2000)
        expect(full.length).toBe(200_000)
        const path = Path.join(stateDir, "tool-results", "toolu_big_seq.txt")
        expect(Fs.readFileSync(path, "utf8")).toBe(full)
        const preview = `${"7".repeat(99)}\n`.repeat(20).replace(/\n$/, "")
        expect(out).toBe(
          `<persisted-output>\nOutput too large (195.3KB). Full output saved to: ${path}\n\nPreview (first 2KB):\n${preview}\n...\n</persisted-output>`
        )
        expect(out.length).toBeLessThan(2_300)
      })
    )

    it.effect("output of exactly 30,000 characters is shown whole, one more is persisted", () =>
      Effect.gen(function* () {
        const bash = yield* Bash.make
        const fits = yield* makeContext("toolu_fits", work)
        const exact = text(yield* bash.call({ command: "head -c 30000 /dev/zero | tr '\\0' x" }, fits.ctx))
        expect(exact).toBe("x".repeat(30_000))
        const over = yield* makeContext("toolu_over", work)
        const more = text(yield* bash.call({ command: "head -c 30001 /dev/zero | tr '\\0' x" }, over.ctx))
        expect(more).toMatch(/^<persisted-output>\nOutput too large \(29\.3KB\)/)
        expect(Fs.readFileSync(Path.join(stateDir, "tool-results", "toolu_over.txt"), "utf8")).toBe("x".repeat(30_001))
      })
    )

    it.effect("does not persist output under the cap", () =>
      Effect.gen(function* () {
        const bash = yield* Bash.make
        const { ctx } = yield* makeContext("toolu_small_seq", work)
        expect(text(yield* bash.call({ command: "seq 1 3" }, ctx))).toBe("1\n2\n3")
        expect(Fs.existsSync(Path.join(stateDir, "tool-results", "toolu_small_seq.txt"))).toBe(false)
      })
    )
  })

  describe("process group", () => {
    it.effect("a timeout kills the whole group and reports the output so far", () =>
      Effect.gen(function* () {
        const pidFile = Path.join(work, "timeout.pids")
        const startedAt = Date.now()
        const failure = yield* fail({
          command: `echo started; sleep 1000 & echo $! > ${pidFile}; echo $$ >> ${pidFile}; wait`,
          timeout: 300
        })
        const elapsed = Date.now() - startedAt
        expect(failure.message).toBe(
          "Command timed out after 300 ms and was killed. Use run_in_background: true for long-running commands, or a larger timeout (at most 600000 ms)."
        )
        expect(failure.stdout).toBe("started")
        const [sleepPid, bashPid] = Fs.readFileSync(pidFile, "utf8").trim().split("\n").map(Number)
        expect(isAlive(sleepPid)).toBe(false)
        expect(groupMembers(bashPid)).toEqual([])
        expect(elapsed).toBeLessThan(2_000)
      })
    )

    it.effect("interrupting the call leaves no descendant", () =>
      Effect.gen(function* () {
        const pidFile = Path.join(work, "interrupt.pid")
        const bash = yield* Bash.make
        const { ctx } = yield* makeContext(nextId(), work)
        const fiber = yield* Effect.fork(
          bash.call({ command: `echo $$ > ${pidFile}; sleep 1000 & sleep 1000; wait` }, ctx)
        )
        yield* waitUntil(
          "the pid file",
          () => Fs.existsSync(pidFile) && Fs.readFileSync(pidFile, "utf8").endsWith("\n")
        )
        const pgid = Number(Fs.readFileSync(pidFile, "utf8").trim())
        yield* waitUntil("both sleeps", () => groupMembers(pgid).length === 3)
        const members = groupMembers(pgid)
        const exit = yield* Fiber.interrupt(fiber)
        expect(Exit.isInterrupted(exit)).toBe(true)
        expect(members.filter(isAlive)).toEqual([])
        expect(groupMembers(pgid)).toEqual([])
      })
    )

    it.effect("processes left running when the command ends are killed", () =>
      Effect.gen(function* () {
        const out = yield* succeed({ command: "sleep 1000 & echo $!" })
        expect(isAlive(Number(out))).toBe(false)
      })
    )
  })

  describe("progress", () => {
    it.effect("reports the latest lines about every second on long runs", () =>
      Effect.gen(function* () {
        const { result, progress } = yield* run({ command: "echo first; echo second; sleep 1.3; echo third" })
        expect(Either.getOrThrow(result)).toBe("first\nsecond\nthird")
        expect(progress.length).toBe(1)
        const event = progress[0] as { elapsed_ms: number; total_chars: number; output: string }
        expect(event.output).toBe("first\nsecond")
        expect(event.total_chars).toBe(13)
        expect(event.elapsed_ms).toBeGreaterThanOrEqual(1000)
      })
    )
  })

  describe("flags", () => {
    it.effect("read-only and concurrency-safe follow the analyzer; Bash cancels siblings and on interrupt", () =>
      Effect.gen(function* () {
        const bash = yield* Bash.make
        expect(bash.isReadOnly({ command: "ls -la | grep foo" })).toBe(true)
        expect(bash.isConcurrencySafe({ command: "ls -la | grep foo" })).toBe(true)
        expect(bash.isReadOnly({ command: "rm -rf build" })).toBe(false)
        expect(bash.isConcurrencySafe({ command: "ls > out.txt" })).toBe(false)
        expect(bash.cancelsSiblingsOnError).toBe(true)
        expect(bash.interruptBehavior).toBe("cancel")
        expect(bash.summarize({ command: "npm test" })).toBe("npm test")
        expect(bash.inputJsonSchema.properties.timeout).toMatchObject({
          type: "integer",
          minimum: 1,
          maximum: 600000,
          description: "Time limit in milliseconds (default 120000, at most 600000)."
        })
      })
    )
  })

  describe("background", () => {
    const startBackground = (command: string) =>
      Effect.gen(function* () {
        const out = text(yield* succeed({ command, run_in_background: true }))
        const match = /^Command running in background with ID: (bash_[0-9a-f]{8})\n/.exec(out)
        expect(match).not.toBeNull()
        const id = match?.[1] ?? ""
        expect(out).toBe(
          `Command running in background with ID: ${id}\nOutput is written to ${Path.join(stateDir, "bash", `${id}.log`)}. Read it with BashOutput (bash_id "${id}"); stop the command with KillShell (shell_id "${id}").`
        )
        return id
      })

    const readOutput = (bash_id: string, filter?: string) =>
      Effect.gen(function* () {
        const tool = yield* BashOutput.make
        const { ctx } = yield* makeContext(nextId(), work)
        return text(yield* tool.call(filter === undefined ? { bash_id } : { bash_id, filter }, ctx))
      })

    const kill = (shell_id: string) =>
      Effect.gen(function* () {
        const tool = yield* KillShell.make
        const { ctx } = yield* makeContext(nextId(), work)
        return yield* Effect.either(tool.call({ shell_id }, ctx))
      })

    const waitForRead = (id: string, until: (s: string) => boolean) =>
      Effect.gen(function* () {
        const deadline = Date.now() + 5_000
        let seen = ""
        while (Date.now() < deadline) {
          seen = yield* readOutput(id)
          if (until(seen)) return seen
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
        }
        return seen
      })

    it.effect("starts, reads new output incrementally, and is killed with its group", () =>
      Effect.gen(function* () {
        const id = yield* startBackground("echo hi; sleep 1000")
        expect(yield* waitForRead(id, (s) => s.includes("hi"))).toBe("Status: running\nhi")
        expect(yield* readOutput(id)).toBe("Status: running\n(no new output)")
        const killed = yield* kill(id)
        expect(Either.getOrThrow(killed)).toBe(`Killed background shell ${id}: echo hi; sleep 1000`)
        expect(yield* readOutput(id)).toBe("Status: killed\n(no new output)")
        const again = yield* kill(id)
        expect(again._tag === "Left" ? again.left.message : "").toBe(
          `Shell ${id} is not running (it had already finished: already killed), so there was nothing to kill.`
        )
        expect(Fs.readFileSync(Path.join(stateDir, "bash", `${id}.log`), "utf8")).toBe("hi\n")
      })
    )

    it.effect("reports completion with the exit code, and filters lines", () =>
      Effect.gen(function* () {
        const id = yield* startBackground("printf 'error a\\nok\\nerror b\\n'; exit 4")
        yield* waitForRead(id, (s) => s.startsWith("Status: completed")).pipe(
          Effect.flatMap((first) =>
            Effect.sync(() =>
              expect(first).toMatch(/^Status: completed with exit code 4\n(error a\nok\nerror b|\(no new output\))$/)
            )
          )
        )
        const filtered = yield* startBackground("printf 'error a\\nok\\nerror b\\n'")
        const seen = yield* Effect.gen(function* () {
          const deadline = Date.now() + 5_000
          while (Date.now() < deadline) {
            const tool = yield* BashOutput.make
            const shells = yield* tool.call(
              { bash_id: filtered, filter: "^error" },
              (yield* makeContext(nextId(), work)).ctx
            )
            const out = text(shells)
            if (out !== "Status: running\n(no new output)") return out
            yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
          }
          return ""
        })
        expect(seen).toMatch(
          /^Status: (running|completed with exit code 0)\n\[1 lines did not match the filter\]\nerror a\nerror b$/
        )
        const done = yield* kill(filtered)
        expect(done._tag === "Left" ? done.left.message : "").toBe(
          `Shell ${filtered} is not running (it had already finished: exit code 0), so there was nothing to kill.`
        )
      })
    )

    it.effect("unknown ids and bad filters fail with a message", () =>
      Effect.gen(function* () {
        const unknown = yield* kill("bash_nope")
        expect(unknown._tag === "Left" ? unknown.left.message : "").toBe(
          "No background shell with ID: bash_nope. Use the ID returned by Bash with run_in_background."
        )
        const tool = yield* BashOutput.make
        const { ctx } = yield* makeContext(nextId(), work)
        const bad = yield* Effect.either(tool.call({ bash_id: "bash_nope", filter: "(" }, ctx))
        expect(bad._tag === "Left" ? bad.left.message : "").toBe(
          "Invalid filter regular expression: Invalid regular expression: /(/: Unterminated group"
        )
      })
    )

    it.effect("an unknown shell id is a typed UnknownShell for BashOutput and KillShell, declared by both", () =>
      Effect.gen(function* () {
        const { ctx } = yield* makeContext(nextId(), work)
        const read = yield* Effect.flip((yield* BashOutput.make).call({ bash_id: "bash_gone" }, ctx))
        const killed = yield* Effect.flip((yield* KillShell.make).call({ shell_id: "bash_gone" }, ctx))
        const expected = new BackgroundShells.UnknownShell({
          id: "bash_gone",
          message: "No background shell with ID: bash_gone. Use the ID returned by Bash with run_in_background."
        })
        expect([read, killed]).toEqual([expected, expected])
        expect([Schema.is(BashOutput.Failure)(read), Schema.is(KillShell.Failure)(killed)]).toEqual([true, true])
        expect(Tool.isTransient(read)).toBe(false)
      })
    )
  })
})

describe("BackgroundShells scope", () => {
  layer(Layer.merge(NodeFileSystem.layer, ProcessGroup.layer), { excludeTestServices: true })((it) => {
    it.effect("a log folder that cannot be made fails the start with a typed ShellLogFailed naming it", () =>
      Effect.gen(function* () {
        // the state directory is a file: <state dir>/bash cannot be created under it
        const blocked = Path.join(tempDir("armature-bash-blocked-"), "file")
        Fs.writeFileSync(blocked, "")
        const failure = yield* Effect.scoped(
          Effect.flatMap(ProcessBackgroundShells.make(blocked), (shells) => Effect.flip(shells.start("true", work)))
        )
        expect(failure._tag).toBe("ShellLogFailed")
        expect(failure).toMatchObject({ path: Path.join(blocked, "bash") })
        expect(failure.message).toContain(`Could not create ${Path.join(blocked, "bash")}: `)
        // Bash declares it: the model sees its message
        expect(Schema.is(Bash.Failure)(failure)).toBe(true)
      })
    )

    it.effect("closing the service's scope kills every background shell", () =>
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        const shells = yield* ProcessBackgroundShells.make(stateDir).pipe(Scope.extend(scope))
        const a = yield* shells.start("sleep 1000", work)
        const b = yield* shells.start("sleep 1000 & sleep 1000; wait", work)
        yield* waitUntil("the second group", () => groupMembers(b.pid).length === 3)
        yield* Scope.close(scope, Exit.void)
        expect(groupMembers(a.pid)).toEqual([])
        expect(groupMembers(b.pid)).toEqual([])
      })
    )
  })
})
