/**
 * `armature permissions check`: decides one call with the same settings files and flags as the other commands and
 * prints the decision with the trace of the steps that made it (docs/cli.md, docs/permissions.md). It runs
 * nothing, not even hooks.
 */
import * as Path from "node:path"
import { Command, Options } from "@effect/cli"
import { NodeFileSystem } from "@effect/platform-node"
import { Console, Effect, Either, Layer, Option, ParseResult, Schema } from "effect"
import { type PermissionMode, passthrough } from "../domain/Permission.js"
import * as Tool from "../domain/Tool.js"
import * as RulePermissionPolicy from "../layers/permissions/RulePermissionPolicy.js"
import * as SandboxLive from "../layers/sandbox/SandboxLive.js"
import * as SessionLive from "../layers/session/SessionLive.js"
import * as SettingsLoader from "../layers/settings/SettingsLoader.js"
import * as TreeSitterShellAnalyzer from "../layers/shell/TreeSitterShellAnalyzer.js"
import { PermissionPolicy } from "../services/PermissionPolicy.js"
import { Settings } from "../services/Settings.js"
import { ToolRegistry } from "../services/ToolRegistry.js"
import { engineOptions, toolsLayer } from "./Runtime.js"

/** A usage problem: printed on stderr, exit status 2. */
class UsageError extends Schema.TaggedError<UsageError>()("UsageError", { message: Schema.String }) {}

/** A tool that stands in for a name the registry does not know: no flags, so fail-closed defaults. */
export const standIn = (name: string) =>
  Tool.make({
    name,
    description: `Stand-in for the unknown tool ${name}`,
    input: Schema.Struct({ input: Schema.optional(Schema.Unknown) }),
    output: Schema.Unknown,
    checkPermissions: () => Effect.succeed(passthrough),
    call: () => Effect.void
  })

/** The options of `check`. */
export interface CheckOptions {
  readonly tool: string
  readonly input: string
  readonly settings: ReadonlyArray<string>
  readonly settingSources: Option.Option<string>
  readonly permissionMode: Option.Option<PermissionMode>
  readonly allowedTools: ReadonlyArray<string>
  readonly disallowedTools: ReadonlyArray<string>
  readonly cwd: string
}

/** Decides one call and returns the printed object. */
export const check = (options: CheckOptions) =>
  Effect.gen(function* () {
    const cwd = Path.resolve(options.cwd)
    const rawInput = yield* Either.try({
      try: () => JSON.parse(options.input) as unknown,
      catch: (e) => new UsageError({ message: `Invalid --input JSON: ${e instanceof Error ? e.message : String(e)}` })
    })
    const settingSources = Option.isSome(options.settingSources)
      ? yield* Either.mapLeft(
          SettingsLoader.parseSettingSources(options.settingSources.value),
          (e) => new UsageError({ message: e.message })
        )
      : undefined
    // Loaded before any layer is built, so that a malformed file is reported as itself (not as an interruption).
    const settings = yield* SettingsLoader.make({
      projectDir: cwd,
      cwd,
      settingSources,
      settingsFiles: options.settings,
      allowedTools: options.allowedTools,
      disallowedTools: options.disallowedTools,
      permissionMode: Option.getOrUndefined(options.permissionMode)
    })
    // The sandbox's settings and availability, without starting it: a sandboxed Bash call is decided as `exec` would.
    const sandboxLayer = SandboxLive.layerStatic().pipe(
      Layer.provide(Layer.merge(Layer.succeed(Settings, settings), SessionLive.layer({ cwd })))
    )
    const policyLayer = RulePermissionPolicy.layer.pipe(
      Layer.provide(
        Layer.mergeAll(
          Layer.succeed(Settings, settings),
          TreeSitterShellAnalyzer.layer,
          NodeFileSystem.layer,
          sandboxLayer
        )
      )
    )
    return yield* Effect.gen(function* () {
      const registry = yield* ToolRegistry
      const policy = yield* PermissionPolicy
      const found = yield* registry.lookup(options.tool)
      const known = Option.isSome(found)
      const tool = Option.isSome(found) ? found.value : yield* standIn(options.tool)
      const input = known
        ? yield* Schema.decodeUnknown(tool.input)(rawInput).pipe(
            Effect.mapError(
              (e) =>
                new UsageError({
                  message: `--input does not match ${tool.name}'s input schema:\n${ParseResult.TreeFormatter.formatErrorSync(e)}`
                })
            )
          )
        : rawInput
      const decision = yield* policy.decide({
        tool,
        input,
        toolUseId: "permissions-check",
        context: {
          toolUseId: "permissions-check",
          cwd,
          permissionMode: policy.mode,
          progress: () => Effect.void,
          interrupted: Effect.never,
          state: yield* Tool.makeSessionState
        }
      })
      const note = known
        ? ""
        : `${options.tool} is not a known tool, so it was decided by rules alone with a stand-in that is not read-only. `
      return {
        behavior: decision.behavior,
        reason: `${note}${decision.reason}`,
        rule: decision.rule,
        source: decision.source,
        trace: decision.trace
      }
    }).pipe(Effect.provide(policyLayer), Effect.provide(toolsLayer(cwd, sandboxLayer)))
  })

/** The printed decision. */
export type CheckResult = Effect.Effect.Success<ReturnType<typeof check>>

/** The exit status of a decision, for scripts and hooks: 0 allow, 1 ask, 3 deny. */
export const exitStatus = (behavior: CheckResult["behavior"]): number =>
  behavior === "allow" ? 0 : behavior === "ask" ? 1 : 3

/** The decision for a person: behaviour, reason, rule and source, then the trace as a short list. */
export const checkText = (result: CheckResult): string => {
  const lines = [
    `${result.behavior.toUpperCase()}  ${result.reason}`,
    `  rule:   ${result.rule ?? "-"}`,
    `  source: ${result.source ?? "-"}`,
    "  trace:"
  ]
  for (const step of result.trace) {
    const rule =
      step.rule === undefined ? "" : ` [${step.rule}${step.source === undefined ? "" : ` from ${step.source}`}]`
    lines.push(`    ${step.step}: ${step.outcome}${rule}${step.reason === "" ? "" : ` — ${step.reason}`}`)
  }
  return lines.join("\n")
}

const checkCommand = Command.make(
  "check",
  {
    tool: Options.text("tool").pipe(Options.withDescription("The tool's name, e.g. Bash")),
    input: Options.text("input").pipe(Options.withDescription("The call's input as a JSON object")),
    settings: engineOptions.settings,
    settingSources: engineOptions.settingSources,
    permissionMode: engineOptions.permissionMode,
    allowedTools: engineOptions.allowedTools,
    disallowedTools: engineOptions.disallowedTools,
    cwd: engineOptions.cwd,
    output: Options.choice("output", ["text", "json"]).pipe(
      Options.withDescription("text (default on a terminal) or json (one line; default otherwise)"),
      Options.optional
    )
  },
  (options) =>
    check(options).pipe(
      Effect.flatMap((result) => {
        const format = Option.getOrElse(options.output, () => (process.stdout.isTTY === true ? "text" : "json"))
        return Effect.zipRight(
          Console.log(format === "json" ? JSON.stringify(result) : checkText(result)),
          Effect.sync(() => {
            process.exitCode = exitStatus(result.behavior)
          })
        )
      }),
      Effect.catchAll((error) =>
        Effect.zipRight(
          Console.error(`armature permissions check: ${error.message}`),
          Effect.sync(() => {
            process.exitCode = 2
          })
        )
      )
    )
).pipe(
  Command.withDescription(
    "Decide one call and print the decision with its trace (exit 0 allow, 1 ask, 3 deny); runs nothing, no hooks"
  )
)

/** `armature permissions`. */
export const command = Command.make("permissions").pipe(
  Command.withDescription("Inspect permission decisions"),
  Command.withSubcommands([checkCommand])
)
