/**
 * The whole engine from one options object: `Armature.layer(options)` gives the registry with the built-in tools,
 * the streaming executor, settings, the permission policy, an approver, hooks, the large-result store, the shell
 * analyzer, the MCP clients and a language model. Each part can be replaced by a Layer of your own. The MCP SDK and
 * the Anthropic SDK are only loaded when the options ask for them.
 *
 * ```ts
 * const Engine = Armature.layerNode({
 *   cwd,
 *   tools: [Weather],
 *   permissionMode: "default",
 *   approver: Armature.approveWith((name, input) => Effect.succeed({ behavior: "deny", message: "not here" })),
 *   mcpConfig: ".mcp.json"
 * })
 * ```
 *
 * See docs/library.md.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { FileSystem } from "@effect/platform"
import { Effect, Layer, Schema, Stream } from "effect"
import type { DuplicateToolError } from "./domain/Errors.js"
import type * as McpConfig from "./domain/McpConfig.js"
import type { PermissionMode } from "./domain/Permission.js"
import type { SettingSourceKind } from "./domain/Settings.js"
import type * as Tool from "./domain/Tool.js"
import * as TranscriptLive from "./layers/agent/TranscriptLive.js"
import * as StreamingExecutor from "./layers/executor/StreamingExecutor.js"
import * as HooksLive from "./layers/hooks/HooksLive.js"
import * as CallbackApprover from "./layers/permissions/CallbackApprover.js"
import * as ReadGuardLive from "./layers/permissions/ReadGuardLive.js"
import * as RulePermissionPolicy from "./layers/permissions/RulePermissionPolicy.js"
import * as NodePlatform from "./layers/platform/NodePlatform.js"
import * as ProcessGroup from "./layers/process/ProcessGroup.js"
import * as ToolRegistryLive from "./layers/registry/ToolRegistryLive.js"
import * as FsResultStore from "./layers/results/FsResultStore.js"
import * as MemoryResultStore from "./layers/results/MemoryResultStore.js"
import * as SandboxLive from "./layers/sandbox/SandboxLive.js"
import * as SessionLive from "./layers/session/SessionLive.js"
import * as SettingsLoader from "./layers/settings/SettingsLoader.js"
import * as SettingsWatch from "./layers/settings/SettingsWatch.js"
import * as TreeSitterShellAnalyzer from "./layers/shell/TreeSitterShellAnalyzer.js"
import * as BuiltinTools from "./layers/tools/index.js"
import * as SkillTool from "./layers/tools/Skill.js"
import * as ApproverPort from "./services/Approver.js"
import type { Hooks } from "./services/Hooks.js"
import type { InProcessHooks } from "./services/InProcessHooks.js"
import * as InProcessHooksRegistry from "./services/InProcessHooks.js"
import { LanguageModel, ModelError, type RetryPolicy } from "./services/LanguageModel.js"
import * as LiveSettings from "./services/LiveSettings.js"
import { McpClients, type McpOptions as McpClientsOptions } from "./services/McpClients.js"
import type { PermissionPolicy } from "./services/PermissionPolicy.js"
import type { Processes } from "./services/Processes.js"
import type { ReadGuard } from "./services/ReadGuard.js"
import * as ResultCache from "./services/ResultCache.js"
import type { ResultStore } from "./services/ResultStore.js"
import type { Sandbox } from "./services/Sandbox.js"
import type { Session } from "./services/Session.js"
import { Settings } from "./services/Settings.js"
import type { ShellAnalyzer } from "./services/ShellAnalyzer.js"
import type { ToolExecutor } from "./services/ToolExecutor.js"
import type { ToolRegistry } from "./services/ToolRegistry.js"
import type { Transcript } from "./services/Transcript.js"

/**
 * The platform services the engine asks for: only the FileSystem. The other port, `Processes` (starting and
 * killing process groups: Bash, background shells, command hooks), is provided by `layer` itself with the Node
 * implementation (layers/process/ProcessGroup.ts); on a platform without Node's child_process, give your own with
 * `overrides.processes`. Some parts still use Node's modules directly (the OS sandbox, Grep's engine, git worktrees,
 * MCP OAuth). `layerNode` provides the FileSystem (with Path, CommandExecutor and the terminal) with
 * `NodePlatform.layer`.
 */
export type Platform = FileSystem.FileSystem

/** The session-level services every other part may use: session, settings, the shell analyzer and processes. */
export type Base = Session | Settings | ShellAnalyzer | Sandbox | Processes

/** What the stages of the pipeline provide: policy, approver, hooks, result store and result cache. */
export type Stages =
  | PermissionPolicy
  | ReadGuard
  | ApproverPort.Approver
  | Hooks
  | InProcessHooks
  | ResultStore
  | ResultCache.ResultCache

/** What a tool layer (or a tool's own requirements) may use: the registry and everything below it. */
export type ToolContext = ToolRegistry | Stages | Base | Platform

/** Everything `Armature.layer` provides. */
export type Services = ToolExecutor | ToolRegistry | McpClients | LanguageModel | Transcript | Stages | Base

/** Everything `Armature.layerNode` provides: `Services` plus the Node platform. */
export type NodeServices = Services | NodePlatform.NodePlatform

/**
 * A tool given to the preset: a made tool (`Tool.make(...)`), whose `call` may need any of `R` (provided when the
 * engine is built), or a layer that registers tools.
 */
// biome-ignore lint/suspicious/noExplicitAny: a tool of any input, output and failure
export type ToolInput<E, R> = Effect.Effect<Tool.Tool<any, any, any, R>, E, R> | Layer.Layer<never, E, R>

/** Who answers "ask": nobody (every ask is refused with the headless text), or a Layer of your own. */
export type ApproverInput<E> = "headless" | Layer.Layer<ApproverPort.Approver, E, Settings | Session | ShellAnalyzer>

/** How the engine is put together; every field is optional. */
export interface Options<E = never> {
  /** The working directory of the session (default `process.cwd()`). */
  readonly cwd?: string | undefined
  /** The project root, where `.claude/settings.json` is looked for (default: `cwd`). */
  readonly projectDir?: string | undefined
  /** The session id (default: a random UUID). */
  readonly sessionId?: string | undefined
  /** Where Armature keeps its files (default `$ARMATURE_STATE_DIR`, else `<projectDir>/.armature`). */
  readonly stateDir?: string | undefined

  /** Your tools, registered next to the built-in ones. */
  readonly tools?: ReadonlyArray<ToolInput<E, ToolContext>> | undefined
  /** Whether the built-in tools are registered (default true). */
  readonly builtins?: boolean | undefined

  /** Which standard settings files are read (default all three: user, project, local). */
  readonly settingSources?: ReadonlyArray<SettingSourceKind> | undefined
  /** Further settings files in Claude Code's shape, applied over the standard ones. */
  readonly settingsFiles?: ReadonlyArray<string> | undefined
  /** Allow rules, like `--allowed-tools` (e.g. `"Read"`, `"Bash(git status:*)"`). */
  readonly allowedTools?: ReadonlyArray<string> | undefined
  /** Deny rules, like `--disallowed-tools`. */
  readonly disallowedTools?: ReadonlyArray<string> | undefined
  /** The permission mode (default: the settings' `defaultMode`, else `default`). */
  readonly permissionMode?: PermissionMode | undefined
  /**
   * Whether the settings files are watched (default true): an edit applies from the next call (permission rules,
   * hooks, tool policies, version pins); a broken edit keeps the settings in force and warns once. See
   * docs/library.md, "Live configuration".
   */
  readonly watchSettings?: boolean | undefined
  /** The most calls executing at once (default 10, or `ARMATURE_MAX_TOOL_CONCURRENCY`). */
  readonly maxConcurrency?: number | undefined
  /**
   * The OS sandbox for Bash: `true`/`false` override `sandbox.enabled` of the settings (like `--sandbox` and
   * `--no-sandbox`); the other `sandbox.*` settings still apply. Loads @anthropic-ai/sandbox-runtime when on.
   * See docs/sandbox.md.
   */
  readonly sandbox?: boolean | undefined

  /** Who answers "ask" (default `"headless"`). See `approveWith`. */
  readonly approver?: ApproverInput<E> | undefined
  /** In-process hooks (`HooksLive.addHook(...)` layers), run after the command hooks of the settings. */
  readonly hooks?: ReadonlyArray<Layer.Layer<never, E, InProcessHooks | Base | Platform>> | undefined
  /** Where large results go: files under the state directory (default) or memory. */
  readonly resultStore?: "fs" | "memory" | Layer.Layer<ResultStore, E, Base | Platform> | undefined

  /** A `.mcp.json` file, or a decoded config, whose servers' tools join the pool (loads the MCP SDK). */
  readonly mcpConfig?: string | McpConfig.McpConfig | undefined
  /**
   * Whether the project's own `.mcp.json` (in `cwd`) is read, as Claude Code does: its servers start only when the
   * settings approve them (`enableAllProjectMcpServers`, `enabledMcpjsonServers`, `disabledMcpjsonServers`).
   * Default false; the CLI turns it on. With a decoded `mcpConfig` object it is ignored.
   */
  readonly mcpProject?: boolean | undefined
  /** Timeouts, reconnection and stderr handling of the MCP servers. */
  readonly mcp?: McpOptions | undefined

  /**
   * The language model of the agent loop: `"anthropic"` reads `ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL` (loads
   * the Anthropic SDK), or a Layer of your own (e.g. `ScriptedLanguageModel` from `effect-armature/testing`). Without one,
   * every model request fails with a ModelError saying so.
   */
  readonly model?: "anthropic" | Layer.Layer<LanguageModel, E, Platform> | undefined
  /** Retries of the Anthropic model. */
  readonly modelRetry?: RetryPolicy | undefined
  /** Whether the agent loop's transcript is written to `<stateDir>/transcripts/<session>.jsonl` (default false). */
  readonly transcript?: boolean | undefined

  /** Replaces a part of the engine with a Layer of your own. */
  readonly overrides?: Overrides<E> | undefined
}

/** Timeouts, reconnection and stderr of the MCP servers. */
export type McpOptions = McpClientsOptions

/** Layers that replace a part of the engine. */
export interface Overrides<E = never> {
  /** Starts and kills process groups; by default Node's child_process (ProcessGroup). */
  readonly processes?: Layer.Layer<Processes, E, Platform> | undefined
  readonly session?: Layer.Layer<Session, E, Platform> | undefined
  readonly settings?: Layer.Layer<Settings, E, Session | Platform> | undefined
  readonly shellAnalyzer?: Layer.Layer<ShellAnalyzer, E, Platform> | undefined
  readonly sandbox?: Layer.Layer<Sandbox, E, Session | Settings | Platform> | undefined
  readonly policy?: Layer.Layer<PermissionPolicy, E, Base | Platform> | undefined
  /** Which paths the search tools skip; by default the Read deny rules of the settings. */
  readonly readGuard?: Layer.Layer<ReadGuard, E, Base | Platform> | undefined
  /** Replaces the hooks of the settings; in-process hooks (`hooks` above) still get a registry of their own. */
  readonly hooks?: Layer.Layer<Hooks, E, Base | Platform> | undefined
  readonly resultCache?: Layer.Layer<ResultCache.ResultCache, E, Base | Platform> | undefined
  readonly registry?: Layer.Layer<ToolRegistry, E, Stages | Base | Platform> | undefined
  readonly executor?: Layer.Layer<ToolExecutor, E, ToolContext> | undefined
}

/**
 * An approver from a function, like the Agent SDK's `canUseTool`: answer `{ behavior: "allow" }` (optionally with
 * `updatedInput` and `updatedPermissions`) or `{ behavior: "deny", message }`, as an Effect or a Promise. A thrown
 * error or a rejected promise denies. `mcp` optionally answers MCP servers' forms (`onElicitation`) and sampling
 * requests (`onSampling`); see docs/mcp.md.
 */
export const approveWith = (
  canUseTool: CallbackApprover.CanUseTool,
  mcp: CallbackApprover.McpCallbacks = {}
): Layer.Layer<ApproverPort.Approver, never, Settings> => CallbackApprover.layer(canUseTool, mcp)

/** A model that refuses every request: the default when the options name none. */
export const noModel: Layer.Layer<LanguageModel> = Layer.succeed(
  LanguageModel,
  LanguageModel.of({
    stream: () =>
      Stream.fail(
        new ModelError({
          message: 'No language model is configured: pass `model` to Armature.layer (e.g. "anthropic").',
          retryable: false,
          phase: "request"
        })
      )
  })
)

/** The MCP client side with no servers. */
export const noMcp: Layer.Layer<McpClients> = Layer.succeed(
  McpClients,
  McpClients.of({ servers: Effect.succeed([]), ready: Effect.void })
)

/** The settings read at start, and, when watched, the live settings over them. */
const settingsLayer = (options: SettingsLoader.LoadOptions, watch: boolean) =>
  watch
    ? SettingsWatch.layer(options).pipe(Layer.provideMerge(SettingsLoader.layer(options)))
    : SettingsLoader.layer(options)

const defaultParts = (options: Options<never>) => {
  const cwd = options.cwd ?? process.cwd()
  return {
    session: SessionLive.layer({
      cwd,
      id: options.sessionId,
      projectDir: options.projectDir,
      stateDir: options.stateDir
    }),
    settings: settingsLayer(
      {
        projectDir: options.projectDir ?? cwd,
        cwd,
        settingSources: options.settingSources,
        settingsFiles: options.settingsFiles,
        allowedTools: options.allowedTools,
        disallowedTools: options.disallowedTools,
        permissionMode: options.permissionMode,
        // a rule may name a tool of the application's own, whose name is known only once the registry is built
        warnUnknownTools: (options.tools ?? []).length === 0
      },
      options.watchSettings !== false
    ),
    shellAnalyzer: TreeSitterShellAnalyzer.layer
  }
}

const isLayer = <E, R>(tool: ToolInput<E, R>): tool is Layer.Layer<never, E, R> => Layer.isLayer(tool)

const registerTool = <E, R>(tool: ToolInput<E, R>): Layer.Layer<never, E | DuplicateToolError, R | ToolRegistry> =>
  isLayer(tool) ? tool : ToolRegistryLive.register(tool)

const mergeLayers = <E, R>(layers: ReadonlyArray<Layer.Layer<never, E, R>>): Layer.Layer<never, E, R> =>
  layers.reduce<Layer.Layer<never, E, R>>((all, one) => Layer.merge(all, one), Layer.empty)

/** An option needs a package that is not installed (the MCP SDK and the Anthropic SDK are optional peers). */
export class OptionalDependencyError extends Schema.TaggedError<OptionalDependencyError>()("OptionalDependencyError", {
  option: Schema.String,
  dependency: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `The option \`${this.option}\` needs ${this.dependency}, which could not be loaded (${this.reason}). Install it: npm install ${this.dependency}`
  }
}

const loadOptional = <A>(option: string, dependency: string, load: () => Promise<A>) =>
  Effect.tryPromise({
    try: load,
    catch: (error) =>
      new OptionalDependencyError({
        option,
        dependency,
        reason: error instanceof Error ? error.message.split("\n")[0] : String(error)
      })
  })

const mcpLayer = <E>(options: Options<E>) => {
  const config = options.mcpConfig
  const projectDir = options.cwd ?? process.cwd()
  // The MCP SDK is loaded only when there is a server to talk to.
  const project = options.mcpProject === true && NodeFs.existsSync(NodePath.join(projectDir, ".mcp.json"))
  if (config === undefined && !project) return noMcp
  return Layer.unwrapEffect(
    Effect.map(
      loadOptional("mcpConfig", "@modelcontextprotocol/sdk", () => import("./layers/mcp/McpClientsLive.js")),
      (McpClientsLive) =>
        config !== undefined && typeof config !== "string"
          ? McpClientsLive.layer(config, options.mcp ?? {})
          : project
            ? McpClientsLive.layerFromSources(
                { projectDir, mcpConfigFiles: config === undefined ? [] : [config] },
                options.mcp ?? {},
                options.watchSettings !== false
              )
            : McpClientsLive.layerFromFile(config ?? "", options.mcp ?? {})
    )
  )
}

const modelLayer = <E>(options: Options<E>) => {
  const model = options.model
  if (model === undefined) return noModel
  if (model !== "anthropic") return model
  return Layer.unwrapEffect(
    Effect.map(
      loadOptional('model: "anthropic"', "@anthropic-ai/sdk", () => import("./layers/model/AnthropicLanguageModel.js")),
      (AnthropicLanguageModel) => AnthropicLanguageModel.layerFromEnv(options.modelRetry)
    )
  )
}

const resultStoreLayer = <E>(store: Options<E>["resultStore"]) =>
  store === undefined || store === "fs" ? FsResultStore.layer : store === "memory" ? MemoryResultStore.layer : store

const approverLayer = <E>(approver: ApproverInput<E> | undefined) =>
  approver === undefined || approver === "headless" ? ApproverPort.headless : approver

const compose = <E>(options: Options<E>) => {
  const overrides: Overrides<E> = options.overrides ?? {}
  const defaults = defaultParts(options as Options<never>)
  const session = overrides.session ?? defaults.session
  const base = (overrides.sandbox ?? SandboxLive.layer({ enabled: options.sandbox })).pipe(
    Layer.provideMerge(
      Layer.mergeAll(overrides.settings ?? defaults.settings, overrides.shellAnalyzer ?? defaults.shellAnalyzer)
    ),
    Layer.provideMerge(session),
    Layer.provideMerge(overrides.processes ?? ProcessGroup.layer)
  )
  const commandHooks =
    overrides.hooks === undefined
      ? Layer.unwrapEffect(
          Effect.zipWith(Settings, LiveSettings.reader, (s, current) =>
            HooksLive.layerFromSession({ config: s.hooks, current: Effect.map(current, (now) => now.hooks) })
          )
        )
      : Layer.merge(overrides.hooks, InProcessHooksRegistry.layer)
  const hooks = mergeLayers(options.hooks ?? []).pipe(Layer.provideMerge(commandHooks))
  const stages = Layer.mergeAll(
    overrides.policy ?? RulePermissionPolicy.layer,
    overrides.readGuard ?? ReadGuardLive.layer,
    approverLayer(options.approver),
    hooks,
    resultStoreLayer(options.resultStore),
    overrides.resultCache ?? ResultCache.disabled
  )
  // One model layer (layers are shared by reference), given to the MCP servers too when configured: their
  // sampling requests run on it.
  const model: Layer.Layer<LanguageModel, E | Layer.Layer.Error<ReturnType<typeof modelLayer<never>>>, Platform> =
    modelLayer(options)
  const mcp = options.model === undefined ? mcpLayer(options) : mcpLayer(options).pipe(Layer.provide(model))
  const tools = Layer.mergeAll(
    options.builtins === false ? Layer.empty : Layer.merge(BuiltinTools.layer, SkillTool.layer),
    mergeLayers((options.tools ?? []).map(registerTool)),
    mcp
  )
  const executor =
    overrides.executor ??
    StreamingExecutor.layer(options.maxConcurrency === undefined ? {} : { maxConcurrency: options.maxConcurrency })
  const agent = Layer.mergeAll(model, options.transcript === true ? TranscriptLive.layer : TranscriptLive.none)
  return Layer.mergeAll(executor, agent).pipe(
    Layer.provideMerge(tools),
    Layer.provideMerge(overrides.registry ?? ToolRegistryLive.layer),
    Layer.provideMerge(stages),
    Layer.provideMerge(base)
  )
}

/**
 * The errors building the engine can fail with: a settings or `.mcp.json` file that cannot be read or decoded, a
 * rule that does not parse, a tool whose Schema has no JSON Schema form or whose name is taken, a shell grammar
 * that does not load, a missing `ANTHROPIC_API_KEY`.
 */
export type EngineError = Layer.Layer.Error<ReturnType<typeof compose<never>>>

/**
 * The whole engine, over any FileSystem (test/layers/tools/ReadFakeDisk.test.ts serves Read from a fake one) on a
 * Node-compatible runtime (processes and some file tools still use Node's modules). Building it reads the
 * settings files, loads the shell grammar and starts the MCP servers (without waiting for them).
 */
export const layer = <E = never>(options: Options<E> = {}): Layer.Layer<Services, E | EngineError, Platform> =>
  compose(options)

/** The whole engine on Node: `layer(options)` with `NodePlatform.layer` (file system, path, processes, terminal). */
export const layerNode = <E = never>(options: Options<E> = {}): Layer.Layer<NodeServices, E | EngineError> =>
  layer(options).pipe(Layer.provideMerge(NodePlatform.layer))
