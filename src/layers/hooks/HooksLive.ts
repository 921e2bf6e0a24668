/**
 * The Hooks service: command hooks from the settings' `hooks` section and in-process hooks registered
 * by layers, matched against the event, run in parallel and combined into one HookOutcome.
 */
import * as Os from "node:os"
import { Cause, Duration, Effect, Layer, Option } from "effect"
import { emptyOutcome, type HookEvent, type HookInput, type HookOutcome } from "../../domain/Hook.js"
import type { HooksConfig } from "../../domain/HookConfig.js"
import * as HookMatcher from "../../domain/HookMatcher.js"
import * as HookOutput from "../../domain/HookOutput.js"
import { Hooks } from "../../services/Hooks.js"
import * as InProcessHooksRegistry from "../../services/InProcessHooks.js"
import { type InProcessHook, type InProcessHookResult, InProcessHooks } from "../../services/InProcessHooks.js"
import { Processes } from "../../services/Processes.js"
import { Session } from "../../services/Session.js"
import * as Spans from "../observability/Spans.js"
import * as CommandHookRunner from "./CommandHookRunner.js"

/** Seconds a hook may run when its config gives no timeout. */
export const defaultTimeoutSeconds = 600

/** Options of the Hooks layer. */
export interface HooksOptions {
  /** The merged `hooks` section of the settings files. */
  readonly config: HooksConfig
  /**
   * The `hooks` section now, read before every event when given (live settings: an edited hook configuration
   * applies from the next call); `config` is then only the start value.
   */
  readonly current?: Effect.Effect<HooksConfig> | undefined
  /** Where command hooks run, and the value of `CLAUDE_PROJECT_DIR` / `ARMATURE_PROJECT_DIR`. */
  readonly projectDir: string
  /** Bytes kept of each hook's stdout and stderr (default 1 MiB). */
  readonly maxOutputBytes?: number | undefined
  /** Milliseconds between SIGTERM and SIGKILL when a hook's process group is killed (default 1000). */
  readonly killGraceMs?: number | undefined
}

interface CommandTask {
  readonly _tag: "Command"
  readonly command: string
  readonly timeoutSeconds: number
}

interface InProcessTask {
  readonly _tag: "InProcess"
  readonly hook: InProcessHook
}

type Task = CommandTask | InProcessTask

/**
 * The command hooks of `event` whose matcher applies, in config order. A command listed under several matching
 * matchers runs once (its first occurrence), as in Claude Code.
 */
export const matchingCommands = (
  config: HooksConfig,
  event: HookEvent,
  input: HookInput
): ReadonlyArray<{ readonly command: string; readonly timeoutSeconds: number }> => {
  const seen = new Set<string>()
  return (config[event] ?? [])
    .filter((group) => HookMatcher.appliesTo(group.matcher, event, input))
    .flatMap((group) => group.hooks)
    .filter((hook) => {
      if (seen.has(hook.command)) return false
      seen.add(hook.command)
      return true
    })
    .map((hook) => ({ command: hook.command, timeoutSeconds: hook.timeout ?? defaultTimeoutSeconds }))
}

const trimmedOr = (text: string, fallback: string): string => {
  const trimmed = text.trim()
  return trimmed === "" ? fallback : trimmed
}

/** The name of signal `n` (`SIGKILL` for 9), if `n` is one. */
const signalName = (n: number): string | undefined =>
  Object.entries(Os.constants.signals).find(([, value]) => value === n)?.[0]

/** The first line of a hook's stderr, shortened, in parentheses; empty when there is none. */
const stderrNote = (stderr: string): string => {
  const line = stderr.trim().split("\n")[0] ?? ""
  return line === "" ? "" : ` (${line.length > 200 ? `${line.slice(0, 200)}…` : line})`
}

/**
 * Why a hook's exit code means the hook never gave an answer, or undefined for an ordinary code: 126 (not
 * executable), 127 (not found) and 128+n, which a shell reports for a command killed by signal n.
 */
export const brokenExit = (code: number, stderr: string): string | undefined => {
  if (code === 126) return `exit 126: command not executable${stderrNote(stderr)}`
  if (code === 127) return `exit 127: command not found${stderrNote(stderr)}`
  const signal = code > 128 && code < 128 + 65 ? signalName(code - 128) : undefined
  return signal === undefined ? undefined : `exit ${code}: killed by ${signal}`
}

/**
 * Reads how a command hook's process ended as a verdict for `event`. A hook that could not run (not started, not
 * found or not executable, killed by a signal, timed out) denies on PreToolUse and PermissionRequest — a guard
 * that is missing or crashed must not let the call through — and is a non-blocking error elsewhere.
 */
export const commandVerdict = (
  event: HookEvent,
  command: string,
  result: CommandHookRunner.CommandHookResult
): HookOutput.HookVerdict =>
  CommandHookRunner.CommandHookResult.$match(result, {
    Exited: ({ code, stderr, stdout }) => {
      if (code === 0) return HookOutput.fromStdout(event, command, stdout)
      if (code === 2) return HookOutput.blockedByExit(command, stderr)
      const broken = brokenExit(code, stderr)
      return broken !== undefined
        ? HookOutput.failed(event, command, broken)
        : HookOutput.nonBlocking(
            command,
            `failed with non-blocking status code ${code}: ${trimmedOr(stderr, "No stderr output")}`
          )
    },
    Signaled: ({ signal }) => HookOutput.failed(event, command, `killed by ${signal}`),
    TimedOut: ({ seconds }) => HookOutput.failed(event, command, `timed out after ${seconds}s`),
    SpawnFailed: ({ message }) => HookOutput.failed(event, command, `could not be started: ${message}`)
  })

const isBlock = (result: InProcessHookResult): result is InProcessHooksRegistry.HookBlockResult =>
  typeof result === "object" && result !== null && "_tag" in result && result._tag === "Block"

/** Reads an in-process hook's result as a verdict for `event`, with the same schema as a command hook's JSON. */
export const inProcessVerdict = (
  event: HookEvent,
  name: string,
  result: InProcessHookResult
): HookOutput.HookVerdict => {
  if (result === undefined || result === null) return { command: name }
  if (isBlock(result)) {
    const reason = `[${name}]: ${result.reason}`
    return { command: name, decision: "deny", reason, block: reason }
  }
  const decoded = HookOutput.decode(event, result)
  return decoded._tag === "Left"
    ? HookOutput.nonBlocking(name, `hook output does not match the schema: ${decoded.left}`)
    : HookOutput.fromOutput(event, name, decoded.right)
}

const causeMessage = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  return error instanceof Error ? error.message : String(error)
}

/** Builds the Hooks service over a registry of in-process hooks. */
export const make = (options: HooksOptions) =>
  Effect.gen(function* () {
    const registry = yield* InProcessHooks
    const processes = yield* Processes
    const env = { CLAUDE_PROJECT_DIR: options.projectDir, ARMATURE_PROJECT_DIR: options.projectDir }

    const runCommand = (event: HookEvent, stdin: string, task: CommandTask) =>
      CommandHookRunner.run({
        command: task.command,
        cwd: options.projectDir,
        env,
        input: stdin,
        timeoutSeconds: task.timeoutSeconds,
        maxOutputBytes: options.maxOutputBytes,
        killGraceMs: options.killGraceMs
      }).pipe(
        Effect.provideService(Processes, processes),
        Effect.map((result) => commandVerdict(event, task.command, result)),
        Spans.span(Spans.names.hook(event), { "armature.hook.command": task.command })
      )

    const runInProcess = (event: HookEvent, input: HookInput, hook: InProcessHook) => {
      const seconds = hook.timeoutSeconds ?? defaultTimeoutSeconds
      return Effect.suspend(() => hook.run(input)).pipe(
        Effect.timeout(Duration.seconds(seconds)),
        Effect.exit,
        Effect.map((exit): HookOutput.HookVerdict => {
          if (exit._tag === "Success") return inProcessVerdict(event, hook.name, exit.value)
          const timedOut = Option.exists(Cause.failureOption(exit.cause), Cause.isTimeoutException)
          return HookOutput.failed(
            event,
            hook.name,
            timedOut ? `timed out after ${seconds}s` : `failed: ${causeMessage(exit.cause)}`
          )
        }),
        Spans.span(Spans.names.hook(event), { "armature.hook.name": hook.name })
      )
    }

    const run = (event: HookEvent, input: HookInput): Effect.Effect<HookOutcome> =>
      Effect.gen(function* () {
        const inProcess = (yield* registry.all).filter(
          (hook) => hook.event === event && HookMatcher.appliesTo(hook.matcher, event, input)
        )
        const config = options.current === undefined ? options.config : yield* options.current
        const tasks: ReadonlyArray<Task> = [
          ...matchingCommands(config, event, input).map((c): Task => ({ _tag: "Command", ...c })),
          ...inProcess.map((hook): Task => ({ _tag: "InProcess", hook }))
        ]
        // No hook for this event: nothing to serialize or run (the executor asks twice per call).
        if (tasks.length === 0) return emptyOutcome
        const hookInput: HookInput = { ...input, hook_event_name: event }
        const stdin = JSON.stringify(hookInput)
        const verdicts = yield* Effect.forEach(
          tasks,
          (task) =>
            task._tag === "Command" ? runCommand(event, stdin, task) : runInProcess(event, hookInput, task.hook),
          { concurrency: "unbounded" }
        )
        return HookOutput.aggregate(verdicts)
      })

    // without live settings, whether the settings name an event is fixed for the layer's life; in-process hooks
    // come and go with scopes
    const configured = new Set(
      (Object.keys(options.config) as Array<HookEvent>).filter((e) => (options.config[e] ?? []).length > 0)
    )
    const yes = Effect.succeed(true)
    const inProcess = (event: HookEvent) =>
      Effect.map(registry.all, (hooks) => hooks.some((hook) => hook.event === event))
    const live = options.current
    const has = (event: HookEvent): Effect.Effect<boolean> =>
      live !== undefined
        ? Effect.flatMap(live, (config) => ((config[event] ?? []).length > 0 ? yes : inProcess(event)))
        : configured.has(event)
          ? yes
          : inProcess(event)

    return Hooks.of({ run, has })
  })

/**
 * Command hooks from `options.config` plus an empty registry of in-process hooks; provides both, so that
 * `addHook` layers can be composed over it (`Layer.provideMerge`).
 */
export const layer = (options: HooksOptions): Layer.Layer<Hooks | InProcessHooks, never, Processes> =>
  Layer.effect(Hooks, make(options)).pipe(Layer.provideMerge(InProcessHooksRegistry.layer))

/** Like `layer`, with the project directory taken from the Session. */
export const layerFromSession = (
  options: Omit<HooksOptions, "projectDir">
): Layer.Layer<Hooks | InProcessHooks, never, Session | Processes> =>
  Layer.unwrapEffect(Effect.map(Session, (session) => layer({ ...options, projectDir: session.projectDir })))

/** Options of an in-process hook. */
export interface AddHookOptions {
  /** Names the hook in reasons and errors (default `in-process {event} hook`). */
  readonly name?: string | undefined
  /** Seconds (default 600). */
  readonly timeoutSeconds?: number | undefined
}

/**
 * Registers an in-process hook for the life of the layer. Its requirements are resolved when the layer is built,
 * so the hook itself runs with none. Hooks run after the command hooks in aggregation order, e.g.
 *
 * ```ts
 * const guard = HooksLive.addHook("PreToolUse", "Bash", (input) =>
 *   Effect.succeed(JSON.stringify(input.tool_input).includes("sudo") ? InProcessHooks.block("no sudo") : undefined)
 * )
 * const hooks = guard.pipe(Layer.provideMerge(HooksLive.layer({ config, projectDir })))
 * ```
 */
export const addHook = <E, R>(
  event: HookEvent,
  matcher: string | undefined,
  run: (input: HookInput) => Effect.Effect<InProcessHookResult, E, R>,
  options: AddHookOptions = {}
): Layer.Layer<never, never, InProcessHooks | R> =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const registry = yield* InProcessHooks
      const context = yield* Effect.context<R>()
      yield* registry.registerScoped({
        name: options.name ?? `in-process ${event} hook`,
        event,
        matcher,
        timeoutSeconds: options.timeoutSeconds,
        run: (input) => Effect.provide(run(input), context)
      })
    })
  )
