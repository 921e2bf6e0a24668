import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, TestClock } from "effect"
import { emptyOutcome, type HookEvent, type HookInput, type HookOutcome } from "../../../src/domain/Hook.js"
import type { HooksConfig } from "../../../src/domain/HookConfig.js"
import * as HooksLive from "../../../src/layers/hooks/HooksLive.js"
import * as ProcessGroup from "../../../src/layers/process/ProcessGroup.js"
import { Hooks } from "../../../src/services/Hooks.js"
import * as InProcessHooks from "../../../src/services/InProcessHooks.js"
import { isGone, pause, script, tempDir, waitForFile } from "../../fixtures/hooks/Processes.js"

const input = (event: HookEvent, toolName: string, extra: Partial<HookInput> = {}): HookInput => ({
  session_id: "session-1",
  transcript_path: "/tmp/transcript.jsonl",
  cwd: "/work",
  permission_mode: "default",
  hook_event_name: event,
  tool_name: toolName,
  tool_input: { command: "rm -rf build" },
  tool_use_id: "toolu_1",
  ...extra
})

/** `hooks[event] = [{ matcher, hooks: commands }]`, one group per matcher. */
const config = (
  event: HookEvent,
  groups: ReadonlyArray<readonly [string | undefined, ReadonlyArray<string>, number?]>
): HooksConfig => ({
  [event]: groups.map(([matcher, commands, timeout]) => ({
    ...(matcher === undefined ? {} : { matcher }),
    hooks: commands.map((command) => ({ type: "command" as const, command, ...(timeout ? { timeout } : {}) }))
  }))
})

const layerFor = (dir: string, hooksConfig: HooksConfig) =>
  HooksLive.layer({ config: hooksConfig, projectDir: dir, killGraceMs: 200 }).pipe(Layer.provide(ProcessGroup.layer))

const run = (event: HookEvent, hookInput: HookInput) => Effect.flatMap(Hooks, (hooks) => hooks.run(event, hookInput))

/** Runs one event's hooks from a fresh layer over `hooksConfig`. */
const runWith = (
  dir: string,
  hooksConfig: HooksConfig,
  event: HookEvent,
  toolName = "Bash",
  extra: Partial<HookInput> = {}
): Effect.Effect<HookOutcome> =>
  run(event, input(event, toolName, extra)).pipe(Effect.provide(layerFor(dir, hooksConfig)))

const pre = (dir: string, commands: ReadonlyArray<string>, timeout?: number) =>
  runWith(dir, config("PreToolUse", [["Bash", commands, timeout]]), "PreToolUse")

describe("HooksLive command hooks", () => {
  it.scopedLive("runs nothing when no hook is configured", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      expect(yield* runWith(dir, {}, "PreToolUse")).toStrictEqual(emptyOutcome)
    })
  )

  it.scoped("`has` tells which events have hooks: the settings' events, then in-process hooks while registered", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const layer = layerFor(dir, { ...config("PreToolUse", [["Bash", ["true"]]]), PostToolUse: [] })
      const has = (event: HookEvent) => Effect.flatMap(Hooks, (hooks) => hooks.has?.(event) ?? Effect.succeed(true))
      const outer = yield* Effect.all([has("PreToolUse"), has("PostToolUse"), has("Stop")]).pipe(Effect.provide(layer))
      expect(outer).toStrictEqual([true, false, false])
      const inner = yield* Effect.gen(function* () {
        const registry = yield* InProcessHooks.InProcessHooks
        const before = yield* has("Stop")
        const during = yield* Effect.scoped(
          Effect.zipRight(registry.registerScoped({ name: "s", event: "Stop", run: () => Effect.void }), has("Stop"))
        )
        return [before, during, yield* has("Stop")]
      }).pipe(Effect.provide(layer))
      expect(inner).toStrictEqual([false, true, false])
    })
  )

  it.scopedLive("exit 2 blocks with `[{command}]: {stderr}` and ignores the JSON on stdout", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const command = script("block.sh")
      const outcome = yield* pre(dir, [command])
      expect(outcome).toStrictEqual({
        ...emptyOutcome,
        decision: "deny",
        reason: `[${command}]: rm -rf is not allowed here`,
        blocks: [{ command, reason: `[${command}]: rm -rf is not allowed here` }]
      })
    })
  )

  it.scopedLive("reads JSON allow, deny and ask with their reasons", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const allow = yield* pre(dir, [script("decide.sh", "allow", "trusted")])
      expect([allow.decision, allow.reason, allow.blocks]).toStrictEqual(["allow", "trusted", []])
      const deny = yield* pre(dir, [script("decide.sh", "deny", "forbidden")])
      expect([deny.decision, deny.reason]).toStrictEqual(["deny", "forbidden"])
      const ask = yield* pre(dir, [script("decide.sh", "ask", "check")])
      expect([ask.decision, ask.reason]).toStrictEqual(["ask", "check"])
    })
  )

  it.scopedLive("passes on updatedInput from an allowing hook", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const outcome = yield* pre(dir, [script("update-input.sh")])
      expect(outcome.decision).toBe("allow")
      expect(outcome.updatedInput).toStrictEqual({ command: "echo safe" })
    })
  )

  it.scopedLive("continue:false stops the turn with the stop reason", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const outcome = yield* runWith(dir, config("PostToolUse", [["*", [script("stop.sh")]]]), "PostToolUse")
      expect(outcome).toStrictEqual({
        ...emptyOutcome,
        continue: false,
        stopReason: "Build is broken, fix it first",
        systemMessages: ["stopping"]
      })
    })
  )

  it.scopedLive("a hook exiting 1 is a non-blocking error", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const command = script("fail.sh")
      const outcome = yield* pre(dir, [command, script("decide.sh", "allow", "ok")])
      expect(outcome.decision).toBe("allow")
      expect(outcome.errors).toStrictEqual([
        `[${command}]: failed with non-blocking status code 1: lint config missing`
      ])
    })
  )

  it.scopedLive("on PreToolUse, JSON that fails the schema or names another event denies, naming the problem", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const bad = script("bad-json.sh")
      const wrong = script("wrong-event.sh")
      const outcome = yield* pre(dir, [bad, wrong])
      expect(outcome).toStrictEqual({
        ...emptyOutcome,
        decision: "deny",
        reason:
          `[${bad}]: hook output does not match the schema: continue: Expected boolean, actual "no"; ` +
          `decision: Expected "approve" | "block", actual "maybe"`
      })
    })
  )

  it.scopedLive("a decision cut off half way (exit 0) denies on PreToolUse, and is a non-blocking error after", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const cut = script("cut-off-json.sh")
      expect(yield* pre(dir, [cut])).toStrictEqual({
        ...emptyOutcome,
        decision: "deny",
        reason: `[${cut}]: hook output starts like a JSON decision but does not parse: Unterminated string in JSON at position 76`
      })
      const after = yield* runWith(dir, config("PostToolUse", [["Bash", [cut]]]), "PostToolUse")
      expect(after.decision).toBeUndefined()
      expect(after.errors).toStrictEqual([
        `[${cut}]: hook output starts like a JSON decision but does not parse: Unterminated string in JSON at position 76`
      ])
    })
  )

  it.scopedLive("plain stdout is ignored for tool events and is context for UserPromptSubmit", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      expect(yield* pre(dir, [script("plain.sh")])).toStrictEqual(emptyOutcome)
      const prompt = yield* runWith(
        dir,
        config("UserPromptSubmit", [[undefined, [script("plain.sh")]]]),
        "UserPromptSubmit"
      )
      expect(prompt.additionalContext).toStrictEqual(["remember: tests live in test/"])
    })
  )

  it.scopedLive("a PostToolUse block is reported with its command and reason, beside its context", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const command = script("post-block.sh")
      const outcome = yield* runWith(dir, config("PostToolUse", [["Edit|Write", [command]]]), "PostToolUse", "Write")
      expect(outcome.blocks).toStrictEqual([{ command, reason: "the file has lint errors" }])
      expect(outcome.additionalContext).toStrictEqual(["run the linter"])
    })
  )

  it.scopedLive("a PreToolUse hook that times out denies, and its process group is gone", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const outcome = yield* pre(dir, [script("hang.sh", dir)], 1)
      const command = script("hang.sh", dir)
      expect(outcome).toStrictEqual({ ...emptyOutcome, decision: "deny", reason: `[${command}]: timed out after 1s` })
      expect(yield* isGone(Number(yield* waitForFile(Path.join(dir, "shell.pid"))))).toBe(true)
      expect(yield* isGone(Number(yield* waitForFile(Path.join(dir, "child.pid"))))).toBe(true)
    })
  )

  it.scopedLive("a PostToolUse hook that times out is a non-blocking error", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const command = script("hang.sh", dir)
      const outcome = yield* runWith(dir, config("PostToolUse", [[undefined, [command], 1.5]]), "PostToolUse")
      expect(outcome).toStrictEqual({ ...emptyOutcome, errors: [`[${command}]: timed out after 1.5s`] })
      expect(yield* isGone(Number(yield* waitForFile(Path.join(dir, "child.pid"))))).toBe(true)
    })
  )

  it.scoped("the default time limit is 600 s, measured with the Clock", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const fiber = yield* Effect.fork(pre(dir, [script("hang.sh", dir)]))
      const child = Number(yield* waitForFile(Path.join(dir, "child.pid")))
      while ((yield* TestClock.sleeps()).length === 0) yield* pause(10)
      yield* TestClock.adjust("599 seconds")
      expect(fiber.unsafePoll()).toBe(null)
      yield* TestClock.adjust("1 second")
      const outcome = yield* Fiber.join(fiber)
      expect(outcome).toStrictEqual({
        ...emptyOutcome,
        decision: "deny",
        reason: `[${script("hang.sh", dir)}]: timed out after 600s`
      })
      expect(yield* isGone(child)).toBe(true)
    })
  )

  it.scopedLive("a PreToolUse hook that cannot be started denies; elsewhere it is a non-blocking error", () =>
    Effect.gen(function* () {
      const dir = Path.join(yield* tempDir, "missing")
      const outcome = yield* pre(dir, ["true"])
      expect(outcome).toStrictEqual({
        ...emptyOutcome,
        decision: "deny",
        reason: `[true]: could not be started: working directory ${dir} does not exist`
      })
      const post = yield* runWith(dir, config("PostToolUse", [["Bash", ["true"]]]), "PostToolUse")
      expect(post.errors).toStrictEqual([`[true]: could not be started: working directory ${dir} does not exist`])
    })
  )

  describe("a guard that cannot run denies (fail closed)", () => {
    const missing = "armature-no-such-hook-command"
    const cases: ReadonlyArray<readonly [string, (dir: string) => string, (command: string) => string]> = [
      ["command not found", () => missing, () => `exit 127: command not found (/bin/sh: 1: ${missing}: not found)`],
      [
        "not executable",
        (dir) => {
          Fs.writeFileSync(Path.join(dir, "guard.sh"), "#!/bin/sh\nexit 0\n", { mode: 0o644 })
          return Path.join(dir, "guard.sh")
        },
        (command) => `exit 126: command not executable (/bin/sh: 1: ${command}: Permission denied)`
      ],
      ["killed by a signal", () => `exec ${script("die.sh", "KILL")}`, () => "killed by SIGKILL"],
      [
        "a shell reporting its child's signal",
        () => `${script("die.sh", "SEGV")}; exit $?`,
        () => "exit 139: killed by SIGSEGV"
      ]
    ]
    for (const [name, makeCommand, why] of cases) {
      it.scopedLive(`${name}: PreToolUse and PermissionRequest deny naming the hook; PostToolUse reports`, () =>
        Effect.gen(function* () {
          const dir = yield* tempDir
          const command = makeCommand(dir)
          const reason = `[${command}]: ${why(command)}`
          expect(yield* pre(dir, [command])).toStrictEqual({ ...emptyOutcome, decision: "deny", reason })
          const asked = yield* runWith(dir, config("PermissionRequest", [["Bash", [command]]]), "PermissionRequest")
          expect(asked).toStrictEqual({ ...emptyOutcome, decision: "deny", reason })
          const post = yield* runWith(dir, config("PostToolUse", [["Bash", [command]]]), "PostToolUse")
          expect(post).toStrictEqual({ ...emptyOutcome, errors: [reason] })
        })
      )
    }

    it.scopedLive("a broken guard beside an allowing one still denies", () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const outcome = yield* pre(dir, [script("decide.sh", "allow", "ok"), missing])
        expect(outcome.decision).toBe("deny")
        expect(outcome.reason).toContain(`[${missing}]: exit 127: command not found`)
      })
    )

    it.scopedLive("an ordinary failure (exit 1, exit 3) is still a non-blocking error", () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const outcome = yield* pre(dir, ["exit 3"])
        expect(outcome).toStrictEqual({
          ...emptyOutcome,
          errors: ["[exit 3]: failed with non-blocking status code 3: No stderr output"]
        })
      })
    )
  })

  it.scopedLive("interrupting the run kills the hook's process group", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const fiber = yield* Effect.fork(pre(dir, [script("hang.sh", dir)]))
      const shell = Number(yield* waitForFile(Path.join(dir, "shell.pid")))
      const child = Number(yield* waitForFile(Path.join(dir, "child.pid")))
      yield* Fiber.interrupt(fiber)
      expect(yield* isGone(shell)).toBe(true)
      expect(yield* isGone(child)).toBe(true)
    })
  )

  it.scopedLive("PostToolUse hooks get the hook input as one JSON line, in the project dir, with its variables", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const outcome = yield* runWith(
        dir,
        config("PostToolUse", [["Bash", [script("capture.sh", dir)]]]),
        "PostToolUse",
        "Bash",
        {
          tool_response: { stdout: "done", exitCode: 0 }
        }
      )
      expect(outcome).toStrictEqual(emptyOutcome)
      const stdin = Fs.readFileSync(Path.join(dir, "stdin.json"), "utf8")
      expect(stdin.endsWith("}\n")).toBe(true)
      expect(stdin.split("\n").length).toBe(2)
      expect(JSON.parse(stdin)).toStrictEqual({
        session_id: "session-1",
        transcript_path: "/tmp/transcript.jsonl",
        cwd: "/work",
        permission_mode: "default",
        hook_event_name: "PostToolUse",
        tool_name: "Bash",
        tool_input: { command: "rm -rf build" },
        tool_use_id: "toolu_1",
        tool_response: { stdout: "done", exitCode: 0 }
      })
      expect(Fs.readFileSync(Path.join(dir, "env.txt"), "utf8")).toBe(`${dir}\n${dir}\n`)
      expect(Fs.readFileSync(Path.join(dir, "cwd.txt"), "utf8")).toBe(`${dir}\n`)
    })
  )

  it.scopedLive("matchers select hooks by tool name; a command under several matchers runs once", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const matchers: HooksConfig = config("PreToolUse", [
        ["Bash", [script("say.sh", "exact")]],
        ["Edit|Write", [script("say.sh", "list")]],
        ["mcp__.*", [script("say.sh", "regex")]],
        ["(invalid", [script("say.sh", "invalid")]],
        ["*", [script("say.sh", "star")]],
        ["", [script("say.sh", "empty")]],
        [undefined, [script("say.sh", "star")]]
      ])
      const said = (toolName: string) =>
        runWith(dir, matchers, "PreToolUse", toolName).pipe(Effect.map((o) => o.systemMessages))
      expect(yield* said("Bash")).toStrictEqual(["exact", "star", "empty"])
      expect(yield* said("Write")).toStrictEqual(["list", "star", "empty"])
      expect(yield* said("mcp__github__create_issue")).toStrictEqual(["regex", "star", "empty"])
      expect(yield* said("bash")).toStrictEqual(["star", "empty"])
    })
  )
})

describe("HooksLive aggregation across hooks", () => {
  const ordered = (dir: string, waitFor: string, touch: string, decision: string) =>
    script("ordered.sh", waitFor === "-" ? "-" : Path.join(dir, waitFor), Path.join(dir, touch), decision)

  it.scopedLive("deny wins when the allowing hook finishes last", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const outcome = yield* pre(dir, [
        ordered(dir, "deny.done", "allow.done", "allow"),
        ordered(dir, "-", "deny.done", "deny")
      ])
      expect([outcome.decision, outcome.reason]).toStrictEqual(["deny", "deny by ordered hook"])
    })
  )

  it.scopedLive("deny wins when the allowing hook finishes first", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const outcome = yield* pre(dir, [
        ordered(dir, "-", "allow.done", "allow"),
        ordered(dir, "allow.done", "ask.done", "ask"),
        ordered(dir, "ask.done", "deny.done", "deny")
      ])
      expect([outcome.decision, outcome.reason]).toStrictEqual(["deny", "deny by ordered hook"])
    })
  )

  it.scopedLive("an exit-2 block is not overridden by an allow that finishes later", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const blocker = ordered(dir, "-", "block.done", "block")
      const outcome = yield* pre(dir, [blocker, ordered(dir, "block.done", "allow.done", "allow")])
      expect(outcome.decision).toBe("deny")
      expect(outcome.reason).toBe(`[${blocker}]: blocked by ordered hook`)
      expect(outcome.updatedInput).toBe(undefined)
    })
  )

  it.scopedLive("ask beats allow whatever the order", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const outcome = yield* pre(dir, [
        ordered(dir, "ask.done", "allow.done", "allow"),
        ordered(dir, "-", "ask.done", "ask")
      ])
      expect([outcome.decision, outcome.reason]).toStrictEqual(["ask", "ask by ordered hook"])
    })
  )
})

class Policy extends Context.Tag("test/Policy")<Policy, { readonly forbidden: string }>() {}

describe("HooksLive in-process hooks", () => {
  const guard = HooksLive.addHook(
    "PreToolUse",
    "Bash",
    (hookInput) =>
      Effect.map(Policy, (policy) =>
        JSON.stringify(hookInput.tool_input).includes(policy.forbidden)
          ? InProcessHooks.block(`${policy.forbidden} is forbidden`)
          : { hookSpecificOutput: { hookEventName: "PreToolUse" as const, permissionDecision: "ask" as const } }
      ),
    { name: "guard" }
  ).pipe(Layer.provide(Layer.succeed(Policy, { forbidden: "rm -rf" })))

  const withHooks = (
    dir: string,
    hooksConfig: HooksConfig,
    ...added: ReadonlyArray<Layer.Layer<never, never, InProcessHooks.InProcessHooks>>
  ) => Layer.mergeAll(Layer.empty, ...added).pipe(Layer.provideMerge(layerFor(dir, hooksConfig)))

  it.scopedLive("compose by layers, capture their requirements and aggregate with command hooks", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const layer = withHooks(dir, config("PreToolUse", [["Bash", [script("decide.sh", "allow", "trusted")]]]), guard)
      const blocked = yield* run("PreToolUse", input("PreToolUse", "Bash")).pipe(Effect.provide(layer))
      expect(blocked).toStrictEqual({
        ...emptyOutcome,
        decision: "deny",
        reason: "[guard]: rm -rf is forbidden",
        blocks: [{ command: "guard", reason: "[guard]: rm -rf is forbidden" }]
      })
      const asked = yield* run("PreToolUse", input("PreToolUse", "Bash", { tool_input: { command: "ls" } })).pipe(
        Effect.provide(layer)
      )
      expect([asked.decision, asked.reason]).toStrictEqual(["ask", undefined])
      const other = yield* run("PreToolUse", input("PreToolUse", "Read")).pipe(Effect.provide(layer))
      expect(other).toStrictEqual(emptyOutcome)
    })
  )

  it.scoped("deny wins whichever in-process hook finishes first (TestClock)", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const decideAfter = (seconds: number, decision: "allow" | "deny") =>
        HooksLive.addHook("PreToolUse", undefined, () =>
          Effect.as(Effect.sleep(`${seconds} seconds`), {
            hookSpecificOutput: { hookEventName: "PreToolUse" as const, permissionDecision: decision }
          })
        )
      for (const [allowAt, denyAt] of [
        [1, 2],
        [2, 1]
      ]) {
        const layer = withHooks(dir, {}, decideAfter(allowAt, "allow"), decideAfter(denyAt, "deny"))
        const fiber = yield* Effect.fork(run("PreToolUse", input("PreToolUse", "Bash")).pipe(Effect.provide(layer)))
        yield* TestClock.adjust("1 second")
        expect(fiber.unsafePoll()).toBe(null)
        yield* TestClock.adjust("1 second")
        expect((yield* Fiber.join(fiber)).decision).toBe("deny")
      }
    })
  )

  it.scoped("a defect or a timeout denies on PreToolUse and is a non-blocking error elsewhere", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const layer = withHooks(
        dir,
        {},
        HooksLive.addHook("PreToolUse", undefined, () => Effect.dieMessage("boom"), { name: "crash" }),
        HooksLive.addHook("PostToolUse", undefined, () => Effect.dieMessage("boom"), { name: "crash" }),
        HooksLive.addHook("PostToolUse", undefined, () => Effect.never, { name: "slow", timeoutSeconds: 5 })
      )
      const preOutcome = yield* run("PreToolUse", input("PreToolUse", "Bash")).pipe(Effect.provide(layer))
      expect(preOutcome).toStrictEqual({ ...emptyOutcome, decision: "deny", reason: "[crash]: failed: boom" })
      const fiber = yield* Effect.fork(run("PostToolUse", input("PostToolUse", "Bash")).pipe(Effect.provide(layer)))
      yield* TestClock.adjust("5 seconds")
      expect(yield* Fiber.join(fiber)).toStrictEqual({
        ...emptyOutcome,
        errors: ["[crash]: failed: boom", "[slow]: timed out after 5s"]
      })
    })
  )

  it.scoped("an in-process hook's output is checked against the schema", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const layer = withHooks(
        dir,
        {},
        HooksLive.addHook(
          "PreToolUse",
          undefined,
          () => Effect.succeed({ hookSpecificOutput: { hookEventName: "PostToolUse" as const } }),
          { name: "confused" }
        ),
        HooksLive.addHook("PreToolUse", undefined, () => Effect.void, { name: "quiet" })
      )
      expect(yield* run("PreToolUse", input("PreToolUse", "Bash")).pipe(Effect.provide(layer))).toStrictEqual({
        ...emptyOutcome,
        errors: [
          '[confused]: hook output does not match the schema: hookSpecificOutput.hookEventName is "PostToolUse", expected "PreToolUse"'
        ]
      })
    })
  )
})
