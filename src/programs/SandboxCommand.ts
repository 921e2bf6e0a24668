/**
 * `armature sandbox check`: whether the OS sandbox for Bash works on this machine with these settings, and the
 * policy it would enforce (writable paths, unreadable paths, allowed hosts). It starts the sandbox for real (the
 * runtime's dependency check, its proxies, one test command inside) and stops it again. Exit 0 when it works, 1
 * when it cannot run. See docs/sandbox.md.
 */
import { Command, Options } from "@effect/cli"
import { NodeContext } from "@effect/platform-node"
import { Console, Effect, Layer, Option } from "effect"
import { installHint } from "../domain/Sandbox.js"
import * as SandboxLive from "../layers/sandbox/SandboxLive.js"
import * as SessionLive from "../layers/session/SessionLive.js"
import * as SettingsLoader from "../layers/settings/SettingsLoader.js"
import { Sandbox } from "../services/Sandbox.js"
import { Settings } from "../services/Settings.js"
import { engineOptions } from "./Runtime.js"

/** The report, as printed with `--output json`. */
export interface Report {
  readonly available: boolean
  /** `sandbox.enabled` of the settings (the check itself always starts the sandbox). */
  readonly enabledInSettings: boolean
  readonly reasons: ReadonlyArray<string>
  readonly warnings: ReadonlyArray<string>
  readonly policy: {
    readonly writable: ReadonlyArray<string>
    readonly readOnly: ReadonlyArray<string>
    readonly unreadable: ReadonlyArray<string>
    readonly allowedHosts: ReadonlyArray<string>
    readonly deniedHosts: ReadonlyArray<string>
  } | null
}

const report = Effect.gen(function* () {
  const sandbox = yield* Sandbox
  const settings = yield* Settings
  const policy = sandbox.policy
  return {
    available: sandbox.availability._tag === "Ready",
    enabledInSettings: settings.settings.sandbox?.enabled === true,
    reasons: sandbox.availability._tag === "Unavailable" ? sandbox.availability.reasons : [],
    warnings: sandbox.warnings,
    policy:
      policy === undefined
        ? null
        : {
            writable: policy.allowWrite,
            readOnly: policy.denyWrite,
            unreadable: policy.denyRead,
            allowedHosts: policy.allowedDomains,
            deniedHosts: policy.deniedDomains
          }
  } satisfies Report
})

const list = (items: ReadonlyArray<string>) => (items.length === 0 ? "(none)" : items.join(", "))

/** The report as text. */
export const reportText = (r: Report): string => {
  const lines = [
    r.available
      ? "sandbox: works (bubblewrap, the network proxy and a test command inside the sandbox)"
      : "sandbox: cannot run",
    ...r.reasons.map((reason) => `  missing: ${reason}`),
    ...(r.available ? [] : [`  install: ${installHint} (Debian/Ubuntu; see docs/sandbox.md)`]),
    `settings: sandbox.enabled is ${r.enabledInSettings ? "on" : "off"}${r.enabledInSettings ? "" : " (turn it on with --sandbox or in the settings)"}`
  ]
  if (r.policy !== null) {
    lines.push(
      `writable: ${list(r.policy.writable)}`,
      `read-only even there: ${list(r.policy.readOnly)}`,
      `unreadable: ${list(r.policy.unreadable)}`,
      `allowed hosts: ${list(r.policy.allowedHosts)}`,
      `denied hosts: ${list(r.policy.deniedHosts)}`
    )
  }
  lines.push(...r.warnings.map((w) => `warning: ${w}`))
  return lines.join("\n")
}

const checkOptions = {
  cwd: engineOptions.cwd,
  settings: engineOptions.settings,
  settingSources: engineOptions.settingSources,
  allowedTools: engineOptions.allowedTools,
  disallowedTools: engineOptions.disallowedTools,
  output: Options.choice("output", ["text", "json"]).pipe(
    Options.withDescription("text (default) or json (one line)"),
    Options.withDefault("text")
  )
}

const check = Command.make("check", checkOptions, (options) =>
  Effect.gen(function* () {
    const settingSources = yield* Option.match(options.settingSources, {
      onNone: () => Effect.succeed(undefined),
      onSome: SettingsLoader.parseSettingSources
    })
    const result = yield* report.pipe(
      Effect.provide(
        SandboxLive.layer({ enabled: true }).pipe(
          Layer.provideMerge(
            SettingsLoader.layer({
              projectDir: options.cwd,
              cwd: options.cwd,
              settingSources,
              settingsFiles: options.settings,
              allowedTools: options.allowedTools,
              disallowedTools: options.disallowedTools
            })
          ),
          Layer.provideMerge(SessionLive.layer({ cwd: options.cwd })),
          Layer.provide(NodeContext.layer)
        )
      )
    )
    yield* Console.log(options.output === "json" ? JSON.stringify(result) : reportText(result))
    if (!result.available) process.exitCode = 1
  }).pipe(
    Effect.catchAll((error) =>
      Effect.zipRight(
        Console.error(`armature sandbox check: ${error.message}`),
        Effect.sync(() => {
          process.exitCode = 2
        })
      )
    )
  )
).pipe(
  Command.withDescription(
    "Start the OS sandbox for Bash once and report whether it works here and the policy it enforces (exit 0 works, 1 cannot run)"
  )
)

/** `armature sandbox`. */
export const command = Command.make("sandbox").pipe(
  Command.withDescription("The OS sandbox Bash runs in (settings sandbox.*, flags --sandbox/--no-sandbox)"),
  Command.withSubcommands([check])
)
