/**
 * The layers the CLI programs run on, composed from options shared by `exec`, `run`, `mcp serve` and
 * `permissions check`: session, settings, shell analyzer, permission policy, hooks, approver, result store, the
 * registry with the built-in tools, and the executor.
 */
import { Options } from "@effect/cli"
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer, Logger, Option } from "effect"
import * as Armature from "../Armature.js"
import { type PermissionDecision, permissionModes } from "../domain/Permission.js"
import type { SettingSourceKind } from "../domain/Settings.js"
import * as FileAccess from "../layers/files/FileAccess.js"
import * as CallLog from "../layers/observability/CallLog.js"
import * as RulePermissionPolicy from "../layers/permissions/RulePermissionPolicy.js"
import * as TerminalApprover from "../layers/permissions/TerminalApprover.js"
import * as ProcessGroup from "../layers/process/ProcessGroup.js"
import * as ToolRegistryLive from "../layers/registry/ToolRegistryLive.js"
import * as FsResultStore from "../layers/results/FsResultStore.js"
import * as ResultCacheLive from "../layers/results/ResultCacheLive.js"
import * as SessionLive from "../layers/session/SessionLive.js"
import * as SettingsLoader from "../layers/settings/SettingsLoader.js"
import * as TreeSitterShellAnalyzer from "../layers/shell/TreeSitterShellAnalyzer.js"
import * as BuiltinTools from "../layers/tools/index.js"
import type { RetryPolicy } from "../services/LanguageModel.js"
import { McpClients } from "../services/McpClients.js"
import type { PermissionRequest } from "../services/PermissionPolicy.js"
import type { Sandbox } from "../services/Sandbox.js"
import * as SandboxPort from "../services/Sandbox.js"
import { Settings } from "../services/Settings.js"
import * as Summarizer from "../services/Summarizer.js"

/** Options shared by every command that runs tools. */
export const engineOptions = {
  cwd: Options.directory("cwd").pipe(
    Options.withDescription("Working directory of the session (default: the current directory)"),
    Options.withDefault(process.cwd())
  ),
  settings: Options.file("settings").pipe(
    Options.withDescription("A settings file in Claude Code's shape, applied over the standard ones (repeatable)"),
    Options.repeated,
    Options.withDefault([])
  ),
  settingSources: Options.text("setting-sources").pipe(
    Options.withDescription("Which standard settings files to read: a comma separated list of user, project, local"),
    Options.optional
  ),
  permissionMode: Options.choice("permission-mode", permissionModes).pipe(
    Options.withDescription("Permission mode: default, acceptEdits, plan, bypassPermissions or dontAsk"),
    Options.optional
  ),
  allowedTools: Options.text("allowed-tools").pipe(
    Options.withDescription('Allow rules, comma or space separated, e.g. "Read,Bash(git status:*)"'),
    Options.repeated,
    Options.withDefault([])
  ),
  disallowedTools: Options.text("disallowed-tools").pipe(
    Options.withDescription("Deny rules, comma or space separated"),
    Options.repeated,
    Options.withDefault([])
  ),
  maxConcurrency: Options.integer("max-concurrency").pipe(
    Options.withDescription("Most calls executing at once (default 10, or ARMATURE_MAX_TOOL_CONCURRENCY)"),
    Options.optional
  ),
  mcpConfig: Options.file("mcp-config").pipe(
    Options.withDescription("An .mcp.json file of MCP servers whose tools join the pool"),
    Options.optional
  ),
  // Two flags rather than one negatable boolean: a boolean option is false when absent, and absent must mean "as the
  // settings say".
  sandbox: Options.boolean("sandbox").pipe(
    Options.withDescription("Run Bash in the OS sandbox, whatever sandbox.enabled says (see docs/sandbox.md)")
  ),
  noSandbox: Options.boolean("no-sandbox").pipe(
    Options.withDescription("Run Bash without the OS sandbox, whatever sandbox.enabled says")
  )
}

/** The strategies for results above a tool's size threshold (the full result is saved to a file either way). */
const resultStrategies = ["preview", "head-tail"] as const

/** The tools whose read-only results `--result-cache` keeps. */
const cachedTools: ReadonlyArray<string> = ["Read", "Glob", "Grep"]

/** Options of `exec` and `run` that reach the library's result handling. */
export const resultOptions = {
  resultStrategy: Options.choice("result-strategy", resultStrategies).pipe(
    Options.withDescription(
      "A result over its tool's threshold becomes: preview (its first 2 KB) or head-tail (first and last 40 % " +
        "around a summary of the middle); the full result is saved to a file either way"
    ),
    Options.withDefault("preview" as const)
  ),
  resultCache: Options.boolean("result-cache").pipe(
    Options.withDescription(
      `Serve a repeated read-only ${cachedTools.join("/")} call from a cache that writes to the same paths invalidate`
    )
  )
}

/** The parsed result options. */
export interface ResultOptions {
  readonly resultStrategy: (typeof resultStrategies)[number]
  readonly resultCache: boolean
}

/** The parsed shared options. */
export interface EngineOptions {
  readonly cwd: string
  readonly settings: ReadonlyArray<string>
  readonly settingSources: Option.Option<string>
  readonly permissionMode: Option.Option<(typeof permissionModes)[number]>
  readonly allowedTools: ReadonlyArray<string>
  readonly disallowedTools: ReadonlyArray<string>
  readonly maxConcurrency: Option.Option<number>
  readonly mcpConfig: Option.Option<string>
  readonly sandbox: boolean
  readonly noSandbox: boolean
}

/**
 * The registry with every built-in tool registered, for a session in `cwd` (no permissions needed); with a Sandbox
 * layer, Bash is made as the sandbox makes it (its input then has `dangerouslyDisableSandbox`).
 */
export const toolsLayer = (cwd: string, sandbox: Layer.Layer<Sandbox> = SandboxPort.none) =>
  BuiltinTools.layer.pipe(
    Layer.provide(sandbox),
    Layer.provideMerge(ToolRegistryLive.layer),
    Layer.provideMerge(TreeSitterShellAnalyzer.layer),
    Layer.provideMerge(SessionLive.layer({ cwd })),
    Layer.provideMerge(Layer.merge(NodeContext.layer, ProcessGroup.layer))
  )

/** How the engine is put together beyond the shared options. */
export interface EngineExtras {
  /** Who answers "ask": the terminal on a TTY by default, or always headless (e.g. when stdin is a protocol). */
  readonly approver?: "auto" | "headless" | undefined
  /** A session id, for resumed sessions. */
  readonly sessionId?: string | undefined
  /** What happens to MCP stdio servers' stderr. */
  readonly mcpStderr?: "inherit" | "ignore" | undefined
  /** The Anthropic model from the environment (`run`); without it, model requests fail. */
  readonly model?: "anthropic" | undefined
  /** Whether the agent loop's transcript is written (`run`). */
  readonly transcript?: boolean | undefined
  /** Retries of the Anthropic model (`run --max-retries`). */
  readonly modelRetry?: RetryPolicy | undefined
  /** The model name MCP servers' sampling requests run with (`run --model`). */
  readonly samplingModel?: string | undefined
  /** How large results are shown and whether read-only results are cached (`--result-strategy`, `--result-cache`). */
  readonly results?: ResultOptions | undefined
  /** Told every permission decision (`--transcript`, `--timeline`); the decisions themselves are unchanged. */
  readonly onDecision?: ((request: PermissionRequest, decision: PermissionDecision) => Effect.Effect<void>) | undefined
}

/** The result store of a strategy: files with a preview, or files with head, tail and a statistics summary. */
const resultStoreOf = (strategy: ResultOptions["resultStrategy"] | undefined) =>
  strategy === "head-tail" ? FsResultStore.layerHeadTail.pipe(Layer.provide(Summarizer.layerStatistics)) : "fs"

/** Effect's pretty logger writing to stderr (one instance, so a command can replace it). */
export const stderrPrettyLogger = Logger.prettyLogger({ stderr: true })

/** Effect's logger on stderr, so logs never mix with machine-readable stdout. */
export const stderrLogger = Logger.replace(Logger.defaultLogger, stderrPrettyLogger)

/**
 * Everything `exec`, `run` and `mcp serve` need: the `Armature.layerNode` preset from the shared options —
 * session, settings, shell analyzer, rule policy, hooks from settings, approver (the terminal on a TTY), the
 * large-result store, the registry with the built-in tools (plus the MCP servers of `--mcp-config`), and the
 * executor.
 */
export const engineLayer = (options: EngineOptions, extras: EngineExtras = {}) => {
  const interactive = process.stdin.isTTY === true && process.stderr.isTTY === true
  const sources = Option.match(options.settingSources, {
    onNone: () => Effect.succeed(undefined),
    onSome: SettingsLoader.parseSettingSources
  })
  return Layer.unwrapEffect(
    Effect.map(sources, (settingSources: ReadonlyArray<SettingSourceKind> | undefined) =>
      Layer.provideMerge(
        sweepLayer(options.cwd),
        Armature.layerNode({
          cwd: options.cwd,
          sessionId: extras.sessionId,
          settingSources,
          settingsFiles: options.settings,
          allowedTools: options.allowedTools,
          disallowedTools: options.disallowedTools,
          permissionMode: Option.getOrUndefined(options.permissionMode),
          maxConcurrency: Option.getOrUndefined(options.maxConcurrency),
          sandbox: options.noSandbox ? false : options.sandbox ? true : undefined,
          approver: extras.approver !== "headless" && interactive ? TerminalApprover.layer : "headless",
          mcpConfig: Option.getOrUndefined(options.mcpConfig),
          mcpProject: true,
          mcp: { stderr: extras.mcpStderr ?? "ignore", samplingModel: extras.samplingModel },
          model: extras.model,
          transcript: extras.transcript,
          modelRetry: extras.modelRetry,
          resultStore: resultStoreOf(extras.results?.resultStrategy),
          overrides: {
            ...(extras.results?.resultCache === true
              ? { resultCache: ResultCacheLive.layer({ tools: cachedTools }) }
              : {}),
            ...(extras.onDecision === undefined
              ? {}
              : { policy: CallLog.recordingPolicy(RulePermissionPolicy.layer, extras.onDecision) })
          }
        })
      )
    )
  )
}

/**
 * At start, the temp files that writes killed outright (SIGKILL) left in the working directories (the cwd and the
 * settings' additionalDirectories) are removed; a subdirectory is cleaned when this process first writes into it.
 */
const sweepLayer = (cwd: string) =>
  Layer.effectDiscard(
    Effect.flatMap(Settings, (settings) =>
      FileAccess.sweepStaleTemps([cwd, ...settings.permissions.additionalDirectories])
    )
  )

/** Waits until every configured MCP server has made its first connection attempt (no-op without MCP). */
export const mcpReady = Effect.flatMap(
  Effect.serviceOption(McpClients),
  Option.match({ onNone: () => Effect.void, onSome: (clients) => clients.ready })
)
