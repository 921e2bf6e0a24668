/**
 * The MCP client side as a layer: every server of a `.mcp.json` supervised in parallel, its tools in the registry.
 */
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { FileSystem } from "@effect/platform"
import { Duration, Effect, Either, ExecutionStrategy, Exit, Layer, Option, Scope, Stream } from "effect"
import * as McpConfig from "../../domain/McpConfig.js"
import { Approver } from "../../services/Approver.js"
import { reader } from "../../services/LiveSettings.js"
import { McpClients, type ServerStatus } from "../../services/McpClients.js"
import type { Settings } from "../../services/Settings.js"
import { ToolRegistry } from "../../services/ToolRegistry.js"
import * as McpProjectApproval from "./McpProjectApproval.js"
import * as McpResourceTools from "./McpResourceTools.js"
import * as McpSupervisor from "./McpSupervisor.js"

/** Tunables (timeouts, reconnection backoff, stderr of stdio servers). */
export type Options = McpSupervisor.Options

/** A decoded configuration and the entries it disabled as invalid. */
export interface Resolved {
  readonly config: McpConfig.McpConfig
  readonly skipped: ReadonlyArray<McpConfig.SkippedServer>
}

interface Running {
  readonly server: McpConfig.ServerConfig
  readonly scope: Scope.CloseableScope
  readonly supervisor: McpSupervisor.Supervisor
}

const disabledOf = (invalid: ReadonlyArray<McpConfig.SkippedServer>) =>
  invalid.map(
    (skipped): ServerStatus => ({
      name: skipped.server,
      state: "invalid",
      tools: [],
      connections: 0,
      lastError: skipped.issues.join("; ")
    })
  )

/** The servers of a config whose names are usable, and the others as disabled entries. */
const withoutMisnamed = (config: McpConfig.McpConfig) => {
  const servers: Record<string, McpConfig.ServerConfig> = {}
  const misnamed: Array<McpConfig.SkippedServer> = []
  for (const [name, server] of Object.entries(config.mcpServers)) {
    const problem = McpConfig.serverNameProblem(name)
    if (problem === undefined) servers[name] = server
    else misnamed.push({ server: name, issues: [`mcpServers.${name}: ${problem}`] })
  }
  return { config: { mcpServers: servers }, misnamed }
}

/**
 * Connects to every server of `config` in parallel without waiting: a slow server does not block the layer nor
 * the others, its tools appear when it is ready. Needs a ToolRegistry and a Session. Each configuration from
 * `updates` (an edited `.mcp.json`) is applied by name: a server no longer there is stopped, a new one started, one
 * whose entry changed restarted; the others are not touched.
 */
export const make = (
  given: McpConfig.McpConfig,
  options: Options = {},
  invalidGiven: ReadonlyArray<McpConfig.SkippedServer> = [],
  updates?: Stream.Stream<Resolved>
) =>
  Effect.gen(function* () {
    for (const issue of McpConfig.envTunables(process.env).issues) yield* Effect.logWarning(issue)
    // A config given in code did not go through decoding: a server name that would make tool names ambiguous is
    // left out here too (McpConfig.serverNameProblem).
    const { config, misnamed } = withoutMisnamed(given)
    for (const entry of misnamed) {
      yield* Effect.logWarning(`MCP server ${JSON.stringify(entry.server)} is disabled: ${entry.issues[0]}`)
    }
    const invalid = [...invalidGiven, ...misnamed]
    const scope = yield* Effect.scope
    // owned by this fiber and the one applying updates, one change at a time
    let running = new Map<string, Running>()
    let disabled = disabledOf(invalid)
    const startOne = (name: string, server: McpConfig.ServerConfig) =>
      Effect.gen(function* () {
        const own = yield* Scope.fork(scope, ExecutionStrategy.sequential)
        const supervisor = yield* McpSupervisor.start(name, server, options).pipe(Scope.extend(own))
        return { server, scope: own, supervisor } satisfies Running
      })
    for (const [name, server] of Object.entries(config.mcpServers)) running.set(name, yield* startOne(name, server))

    const apply = (next: Resolved) =>
      Effect.gen(function* () {
        const after = new Map<string, Running>()
        for (const [name, entry] of running) {
          if (!Object.hasOwn(next.config.mcpServers, name)) {
            yield* Scope.close(entry.scope, Exit.void)
            yield* Effect.logInfo(`MCP server ${name}: removed from the configuration, stopped`)
          }
        }
        for (const [name, server] of Object.entries(next.config.mcpServers)) {
          const entry = running.get(name)
          if (entry !== undefined && JSON.stringify(entry.server) === JSON.stringify(server)) {
            after.set(name, entry)
            continue
          }
          if (entry !== undefined) yield* Scope.close(entry.scope, Exit.void)
          after.set(name, yield* startOne(name, server))
          yield* Effect.logInfo(
            `MCP server ${name}: ${entry === undefined ? "added to the configuration, started" : "its entry changed, restarted"}`
          )
        }
        running = after
        disabled = disabledOf(next.skipped)
      })

    const registry = yield* ToolRegistry
    if (running.size > 0 || updates !== undefined) {
      const tools = yield* McpResourceTools.make({
        get names() {
          return [...running.keys()]
        },
        withClient: (server, f) => running.get(server)?.supervisor.withClient(f) ?? Effect.die(`no server ${server}`)
      }).pipe(Effect.orDie)
      yield* Effect.forEach(tools, (tool) => registry.registerScoped(tool).pipe(Effect.orDie), { discard: true })
    }
    if (updates !== undefined) yield* Effect.forkScoped(Stream.runForEach(updates, apply))
    return McpClients.of({
      servers: Effect.suspend(() =>
        Effect.map(
          Effect.forEach([...running.values()], (r) => r.supervisor.status),
          (statuses) => [...statuses, ...disabled]
        )
      ),
      ready: Effect.suspend(() =>
        Effect.forEach([...running.values()], (r) => r.supervisor.ready, { concurrency: "unbounded", discard: true })
      )
    })
  })

/** The client side for a decoded config. */
export const layer = (config: McpConfig.McpConfig, options: Options = {}) =>
  Layer.scoped(McpClients, make(config, options))

/**
 * Reads and decodes a `.mcp.json` file, expanding `${VAR}` from the environment. An invalid server entry is left
 * out (and returned among `skipped`) so the others still start; a file that cannot be read or is not a
 * `{"mcpServers": {...}}` object fails, naming the file and path.
 */
export const readConfig = (path: string) =>
  Effect.tryPromise({
    try: () => Fs.readFile(path, "utf8"),
    catch: (e) =>
      new McpConfig.McpConfigError({ file: path, reason: `cannot be read (${e instanceof Error ? e.message : e})` })
  }).pipe(Effect.flatMap((text) => McpConfig.decodeTextLenient(path, text, process.env)))

const stderrNotice = (line: string) => {
  process.stderr.write(`${line}\n`)
}

/** Reads a file and says on `notice` which of its entries are disabled as invalid. */
const readAndReport = (path: string, notice: (line: string) => void) =>
  Effect.tap(readConfig(path), ({ skipped }) =>
    Effect.sync(() => {
      for (const entry of skipped) notice(McpConfig.skippedNotice(path, entry))
    })
  )

/**
 * The client side for the servers of a `.mcp.json` file (`--mcp-config FILE`); an invalid entry disables that
 * server only, with one line on `notice` (default: stderr).
 */
export const layerFromFile = (path: string, options: Options = {}, notice: (line: string) => void = stderrNotice) =>
  Layer.scoped(
    McpClients,
    Effect.flatMap(readAndReport(path, notice), ({ config, skipped }) => make(config, options, skipped))
  )

/** Where the client side finds its servers. */
export interface Sources {
  /** The project directory: its `.mcp.json` is read, and its servers start only when approved in settings. */
  readonly projectDir: string
  /** `--mcp-config` files: their servers are added (and replace project servers of the same name). */
  readonly mcpConfigFiles?: ReadonlyArray<string> | undefined
  /** Where the one-line notices (unapproved project servers, invalid entries) go. Default: stderr. */
  readonly notice?: ((line: string) => void) | undefined
}

/** The name of a project's MCP server file. */
export const projectFileName = ".mcp.json"

/**
 * The configured servers: the approved ones of the project's `.mcp.json` (absent file: none), then those of every
 * `--mcp-config` file. A project server the settings leave open is put to the Approver when it can ask (the
 * terminal), and the answer remembered; otherwise it is not started, and one line on stderr says which and how
 * to approve them. An invalid entry (e.g. an unset `${VAR}`) disables that server only, with one line on stderr
 * (not for a project server the settings disable); the disabled ones are returned as `skipped`.
 */
export const resolveConfig = (sources: Sources) =>
  Effect.gen(function* () {
    // the settings now (live settings: an approval given since the start counts)
    const settings = yield* Effect.flatten(reader)
    const approver = yield* Effect.serviceOption(Approver)
    const projectFile = Path.join(sources.projectDir, projectFileName)
    const exists = yield* Effect.promise(() =>
      Fs.access(projectFile).then(
        () => true,
        () => false
      )
    )
    const notice = sources.notice ?? stderrNotice
    const configs: Array<McpConfig.McpConfig> = []
    const skipped: Array<McpConfig.SkippedServer> = []
    const fromProject = new Set<string>()
    const files = sources.mcpConfigFiles ?? []
    const given = yield* Effect.forEach(files, (file) => readAndReport(file, notice))
    // A project server that a --mcp-config file replaces is neither asked about nor reported.
    const replaced = new Set(given.flatMap(({ config }) => Object.keys(config.mcpServers)))
    if (exists) {
      const read = yield* readConfig(projectFile)
      const project = read.config
      const approval = yield* Either.match(McpConfig.approvalOf(settings.settings), {
        onLeft: (reason) => Effect.fail(new McpConfig.McpConfigError({ file: projectFile, reason })),
        onRight: Effect.succeed
      })
      for (const entry of read.skipped) {
        if (replaced.has(entry.server) || McpConfig.projectDecision(entry.server, approval) === "disabled") continue
        notice(McpConfig.skippedNotice(projectFile, entry))
        skipped.push(entry)
      }
      const all = McpConfig.approvedProjectServers(project, approval)
      const decided = { ...all, unapproved: all.unapproved.filter((name) => !replaced.has(name)) }
      // On a terminal the user is asked about the servers the settings leave open; the answers are remembered.
      const answers = yield* McpProjectApproval.ask(approver, projectFile, project, decided.unapproved)
      const problem = yield* McpProjectApproval.remember(sources.projectDir, answers)
      const approved = McpConfig.mergeConfigs([
        decided.approved,
        {
          mcpServers: Object.fromEntries(
            [...answers].filter(([, a]) => a !== "reject").map(([name]) => [name, project.mcpServers[name]])
          )
        }
      ])
      const unapproved = decided.unapproved.filter((name) => !answers.has(name))
      for (const line of [
        ...Option.toArray(problem),
        ...(unapproved.length > 0 ? [McpConfig.unapprovedNotice(projectFile, unapproved)] : [])
      ]) {
        notice(line)
      }
      configs.push(approved)
      for (const name of Object.keys(approved.mcpServers)) fromProject.add(name)
    }
    for (const { config, skipped: invalid } of given) {
      for (const name of Object.keys(config.mcpServers)) fromProject.delete(name)
      configs.push(config)
      skipped.push(...invalid)
    }
    const policies = yield* Either.match(McpConfig.samplingPoliciesOf(settings.settings), {
      onLeft: (reason) => Effect.fail(new McpConfig.McpConfigError({ file: "settings (mcpSampling)", reason })),
      onRight: Effect.succeed
    })
    const config = McpConfig.applySamplingPolicies(McpConfig.mergeConfigs(configs), policies, fromProject)
    // A server that a later file configures validly is not disabled by an earlier invalid entry.
    return { config, skipped: skipped.filter((s) => !Object.hasOwn(config.mcpServers, s.server)) }
  })

/**
 * The configurations of `sources` after each edit of the project's `.mcp.json` or of a `--mcp-config` file (after
 * 100 ms without a further change). A file that no longer decodes is refused with one warning, and the servers
 * keep running as they are.
 */
export const followSources = (sources: Sources): Stream.Stream<Resolved, never, FileSystem.FileSystem | Settings> =>
  Stream.unwrap(
    Effect.gen(function* () {
      const fs = yield* FileSystem.FileSystem
      const context = yield* Effect.context<Settings>()
      const files = [Path.join(sources.projectDir, projectFileName), ...(sources.mcpConfigFiles ?? [])].map((f) =>
        Path.resolve(f)
      )
      const dirs = [...new Set(files.map((f) => Path.dirname(f)))]
      const names = new Set(files.map((f) => Path.basename(f)))
      let refused: string | undefined
      const watched = dirs.map((dir) =>
        fs.watch(dir).pipe(
          Stream.filter((event) => names.has(Path.basename(event.path))),
          Stream.catchAll(() => Stream.empty)
        )
      )
      return Stream.mergeAll(watched, { concurrency: "unbounded" }).pipe(
        Stream.debounce(Duration.millis(100)),
        Stream.mapEffect(() =>
          resolveConfig(sources).pipe(
            Effect.provide(context),
            Effect.matchEffect({
              onFailure: (error) =>
                Effect.gen(function* () {
                  if (error.message !== refused) {
                    refused = error.message
                    yield* Effect.logWarning(`${error.message} (the MCP servers keep running as they are)`)
                  }
                  return Option.none<Resolved>()
                }),
              onSuccess: (resolved) =>
                Effect.sync(() => {
                  refused = undefined
                  return Option.some<Resolved>(resolved)
                })
            })
          )
        ),
        Stream.filterMap((resolved) => resolved)
      )
    })
  )

/**
 * The client side for the project's approved servers plus those of `--mcp-config` files, following edits of those
 * files when `watch` is true (servers added, removed or changed are started, stopped or restarted). Needs Settings.
 */
export const layerFromSources = (sources: Sources, options: Options = {}, watch = false) =>
  Layer.scoped(
    McpClients,
    Effect.gen(function* () {
      const { config, skipped } = yield* resolveConfig(sources)
      const updates = watch
        ? yield* Effect.map(Effect.context<FileSystem.FileSystem | Settings>(), (c) =>
            Stream.provideContext(followSources(sources), c)
          )
        : undefined
      return yield* make(config, options, skipped, updates)
    })
  )
