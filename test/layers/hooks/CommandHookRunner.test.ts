import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import * as CommandHookRunner from "../../../src/layers/hooks/CommandHookRunner.js"
import * as ProcessGroup from "../../../src/layers/process/ProcessGroup.js"
import { isGone, script, tempDir, waitForFile } from "../../fixtures/hooks/Processes.js"

const options = (dir: string, command: string, timeoutSeconds = 10): CommandHookRunner.CommandHookOptions => ({
  command,
  cwd: dir,
  env: { CLAUDE_PROJECT_DIR: dir, ARMATURE_PROJECT_DIR: dir },
  input: '{"hook_event_name":"PreToolUse","tool_name":"Bash"}',
  timeoutSeconds,
  killGraceMs: 200
})

/** Runs a hook on the Node processes. */
const run = (hook: CommandHookRunner.CommandHookOptions) =>
  CommandHookRunner.run(hook).pipe(Effect.provide(ProcessGroup.layer))

const pids = (dir: string) =>
  Effect.all([waitForFile(Path.join(dir, "shell.pid")), waitForFile(Path.join(dir, "child.pid"))]).pipe(
    Effect.map(([shell, child]) => [Number(shell), Number(child)] as const)
  )

describe("CommandHookRunner.run", () => {
  it.scopedLive("writes the input and a newline on stdin, in the project directory, with the project variables", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const result = yield* run(options(dir, script("capture.sh", dir)))
      expect(result).toStrictEqual(CommandHookRunner.CommandHookResult.Exited({ code: 0, stdout: "", stderr: "" }))
      expect(Fs.readFileSync(Path.join(dir, "stdin.json"), "utf8")).toBe(
        '{"hook_event_name":"PreToolUse","tool_name":"Bash"}\n'
      )
      expect(Fs.readFileSync(Path.join(dir, "env.txt"), "utf8")).toBe(`${dir}\n${dir}\n`)
      expect(Fs.readFileSync(Path.join(dir, "cwd.txt"), "utf8")).toBe(`${dir}\n`)
    })
  )

  it.scopedLive("reports the exit code, stdout and stderr", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const result = yield* run(options(dir, script("block.sh")))
      expect(result).toStrictEqual(
        CommandHookRunner.CommandHookResult.Exited({
          code: 2,
          stdout: '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}\n',
          stderr: "rm -rf is not allowed here\n"
        })
      )
    })
  )

  it.scopedLive("on timeout kills the shell and its backgrounded child", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const result = yield* run(options(dir, script("hang.sh", dir), 1))
      expect(result).toStrictEqual(CommandHookRunner.CommandHookResult.TimedOut({ seconds: 1, stdout: "", stderr: "" }))
      const [shell, child] = yield* pids(dir)
      expect(yield* isGone(shell)).toBe(true)
      expect(yield* isGone(child)).toBe(true)
    })
  )

  it.scopedLive("escalates to SIGKILL when the group ignores SIGTERM", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const result = yield* run(options(dir, script("stubborn.sh", dir), 1))
      expect(result._tag).toBe("TimedOut")
      const [shell, child] = yield* pids(dir)
      expect(yield* isGone(shell)).toBe(true)
      expect(yield* isGone(child)).toBe(true)
    })
  )

  it.scopedLive("interrupting the run kills the process group", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const fiber = yield* Effect.fork(run(options(dir, script("hang.sh", dir), 600)))
      const [shell, child] = yield* pids(dir)
      yield* Fiber.interrupt(fiber)
      expect(yield* isGone(shell)).toBe(true)
      expect(yield* isGone(child)).toBe(true)
    })
  )

  it.scopedLive("kills what a hook left running after it exited", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const result = yield* run(options(dir, script("straggler.sh", dir)))
      expect(result).toStrictEqual(
        CommandHookRunner.CommandHookResult.Exited({
          code: 0,
          stdout: '{"systemMessage":"left a child"}\n',
          stderr: ""
        })
      )
      const child = Number(yield* waitForFile(Path.join(dir, "child.pid")))
      expect(yield* isGone(child)).toBe(true)
    })
  )

  it.scopedLive("caps stdout and still reads the process to the end", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const result = yield* run({ ...options(dir, script("noisy.sh")), maxOutputBytes: 1000 })
      expect(result).toStrictEqual(
        CommandHookRunner.CommandHookResult.Exited({ code: 0, stdout: "x".repeat(1000), stderr: "" })
      )
    })
  )

  it.scopedLive("reports a hook that cannot be started", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const missing = Path.join(dir, "missing")
      const result = yield* run(options(missing, "true"))
      expect(result).toStrictEqual(
        CommandHookRunner.CommandHookResult.SpawnFailed({ message: `working directory ${missing} does not exist` })
      )
    })
  )
})
