/**
 * The Sandbox service over @anthropic-ai/sandbox-runtime (bubblewrap, seccomp and a filtering proxy on Linux,
 * Seatbelt on macOS). The runtime is an optional peer dependency, imported only when `sandbox.enabled` (or
 * `--sandbox`) turns the sandbox on. Building the layer starts the runtime's proxies once and runs one test command
 * inside the sandbox; closing the layer's scope stops them. When anything is missing the service is built anyway,
 * with an `Unavailable` status naming what is missing, and Bash refuses to run (fail closed). See docs/sandbox.md.
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Config, type Context, Effect, Either, Layer, Option, Ref, Scope } from "effect"
import * as SandboxDomain from "../../domain/Sandbox.js"
import * as SandboxNotes from "../../domain/SandboxNotes.js"
import * as SandboxPolicy from "../../domain/SandboxPolicy.js"
import { LiveSettings } from "../../services/LiveSettings.js"
import { Sandbox, SandboxError } from "../../services/Sandbox.js"
import { Session } from "../../services/Session.js"
import { Settings } from "../../services/Settings.js"

type Runtime = typeof import("@anthropic-ai/sandbox-runtime")
type RuntimeConfig = import("@anthropic-ai/sandbox-runtime").SandboxRuntimeConfig

/** The package name, as users install it. */
export const runtimePackage = "@anthropic-ai/sandbox-runtime"

/** How the live sandbox is built. */
export interface LiveOptions {
  /** `--sandbox` (true) / `--no-sandbox` (false): overrides `sandbox.enabled` of the settings. */
  readonly enabled?: boolean | undefined
  /** The bubblewrap binary (default: `bwrap` on PATH). A path that does not exist makes the sandbox unavailable. */
  readonly bwrapPath?: string | undefined
}

/** The runtime keeps its state in one module-level manager: only one live sandbox may exist in a process. */
let runtimeInUse = false

const firstLine = (e: unknown): string => (e instanceof Error ? e.message : String(e)).split("\n")[0]

const loadRuntime: Effect.Effect<Runtime, ReadonlyArray<string>> = Effect.tryPromise({
  try: () => import("@anthropic-ai/sandbox-runtime"),
  catch: (e) => [`${runtimePackage} could not be loaded (${firstLine(e)}); install it: npm install ${runtimePackage}`]
})

/** The runtime's configuration for a policy. */
export const runtimeConfig = (policy: SandboxDomain.Policy, options: LiveOptions): RuntimeConfig => ({
  network: {
    allowedDomains: [...policy.allowedDomains],
    deniedDomains: [...policy.deniedDomains],
    allowUnixSockets: [...policy.allowUnixSockets],
    allowAllUnixSockets: policy.allowAllUnixSockets,
    allowLocalBinding: policy.allowLocalBinding
  },
  filesystem: {
    denyRead: [...policy.denyRead],
    allowRead: [...policy.allowRead],
    allowWrite: [...policy.allowWrite],
    denyWrite: [...policy.denyWrite]
  },
  enableWeakerNestedSandbox: policy.enableWeakerNestedSandbox,
  ...(options.bwrapPath === undefined ? {} : { bwrapPath: options.bwrapPath })
})

/** Runs a wrapped command line and returns its exit code and the first line of its stderr. */
const runProbe = (wrapped: string, cwd: string) =>
  Effect.async<{ readonly code: number | null; readonly stderr: string }>((resume) => {
    const child = ChildProcess.execFile("/bin/bash", ["-c", wrapped], { cwd, timeout: 20_000 }, (error, _out, err) =>
      resume(
        Effect.succeed({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, stderr: err })
      )
    )
    return Effect.sync(() => child.kill("SIGKILL"))
  })

/**
 * Starts the runtime (dependency check, proxies) for the layer's scope, then runs `true` inside the sandbox: a
 * kernel without usable user namespaces passes the dependency check but fails there. Fails with the reasons.
 */
const start = (config: RuntimeConfig, cwd: string): Effect.Effect<Runtime, ReadonlyArray<string>, Scope.Scope> =>
  Effect.gen(function* () {
    if (runtimeInUse) return yield* Effect.fail(["another sandbox is already running in this process"])
    const runtime = yield* loadRuntime
    const manager = runtime.SandboxManager
    if (!manager.isSupportedPlatform()) return yield* Effect.fail([`the platform ${process.platform} is not supported`])
    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => {
          runtimeInUse = true
          return manager.initialize(config, undefined, true)
        },
        catch: (e) =>
          firstLine(e)
            .replace(/^Sandbox dependencies not available: /, "")
            .split(", ")
      }).pipe(
        Effect.tapError(() =>
          Effect.promise(() => manager.reset().catch(() => undefined)).pipe(
            Effect.ensuring(Effect.sync(() => (runtimeInUse = false)))
          )
        )
      ),
      () =>
        Effect.promise(() => manager.reset().catch(() => undefined)).pipe(
          Effect.ensuring(Effect.sync(() => (runtimeInUse = false)))
        )
    )
    const probe = yield* Effect.scoped(
      Effect.acquireRelease(
        Effect.tryPromise({ try: () => manager.wrapWithSandbox("true"), catch: (e) => [firstLine(e)] }),
        () => Effect.sync(() => manager.cleanupAfterCommand())
      ).pipe(Effect.flatMap((wrapped) => runProbe(wrapped, cwd)))
    )
    if (probe.code !== 0) {
      const detail = probe.stderr.trim().split("\n")[0] ?? ""
      return yield* Effect.fail([
        `a test command failed inside the sandbox (exit ${probe.code ?? "by signal"}${detail === "" ? "" : `: ${detail}`}); user namespaces may be unavailable`
      ])
    }
    return runtime
  })

/**
 * The temporary directory the runtime hands sandboxed commands as `TMPDIR` (writable inside the sandbox): its own
 * default, or `CLAUDE_CODE_TMPDIR` as the runtime reads it. It must exist, or `mktemp` and friends fail inside.
 */
const sandboxTmpDir = Config.string("CLAUDE_CODE_TMPDIR").pipe(
  Config.orElse(() => Config.string("CLAUDE_TMPDIR")),
  Config.withDefault("/tmp/claude")
)

/** The settings the sandbox follows: the `sandbox` section and the permission rules its policy is derived from. */
interface Inputs {
  readonly permissions: Context.Tag.Service<Settings>["permissions"]
  readonly section: SandboxDomain.SandboxSection | undefined
}

/** The sandbox the settings (and the flag) ask for, with the policy derived for this session, or "Off". */
const configured = (options: LiveOptions, inputs?: Inputs) =>
  Effect.gen(function* () {
    const settings = yield* Settings
    const session = yield* Session
    const { permissions, section } = inputs ?? { permissions: settings.permissions, section: settings.settings.sandbox }
    const config = SandboxDomain.resolve(section, options.enabled)
    if (!config.enabled) return { _tag: "Off", config } as const
    const cwd = (yield* Ref.get(session.context)).cwd
    const policy = SandboxPolicy.derive({
      permissions,
      section: config.section,
      cwd,
      home: settings.home,
      protectedDirs: [Path.join(settings.projectDir, ".claude"), session.stateDir],
      isFile: (path) => {
        try {
          return !Fs.statSync(path).isDirectory()
        } catch {
          return false
        }
      }
    })
    return { _tag: "On", config, cwd, policy, stateDir: session.stateDir } as const
  })

/**
 * Shell lines run inside the sandbox before the command: the runtime starts its relays to the proxy (localhost:3128
 * and :1080) in the background and runs the command at once, so on a busy machine the first connection can find
 * nothing listening yet ("Failed to connect to localhost port 3128"). When the proxy variables point there, wait up
 * to 2 s for the listener to appear in /proc/net/tcp (it is the sandbox's own network namespace).
 */
const proxyBridgeWait = [
  'case "$HTTP_PROXY" in *localhost:3128*)',
  "  armature_wait=0",
  "  while [ \"$armature_wait\" -lt 200 ] && ! grep -qs ':0C38 0*:0000 0A' /proc/net/tcp /proc/net/tcp6; do",
  "    armature_wait=$((armature_wait + 1)); sleep 0.01",
  "  done",
  "  unset armature_wait;;",
  "esac"
].join("\n")

type Wanted = Effect.Effect.Success<ReturnType<typeof configured>>
type Manager = Runtime["SandboxManager"]

/** The service over a running runtime. */
const readyService = (wanted: Extract<Wanted, { _tag: "On" }>, manager: Manager): Context.Tag.Service<Sandbox> => {
  const { config, policy } = wanted
  return Sandbox.of({
    config,
    policy,
    warnings: [...policy.warnings, ...manager.checkDependencies().warnings],
    availability: { _tag: "Ready" },
    wrap: (command, wrap) =>
      Effect.acquireRelease(
        Effect.tryPromise({
          try: () =>
            manager.wrapWithSandbox(`${proxyBridgeWait}\n${command}`, undefined, undefined, undefined, {
              commandId: wrap.id,
              commandText: wrap.commandText
            }),
          catch: (e) => new SandboxError({ reason: firstLine(e) })
        }),
        () => Effect.sync(() => manager.cleanupAfterCommand())
      ),
    explain: (id, output, failed) =>
      SandboxNotes.note(
        config,
        policy,
        SandboxNotes.refusals(
          manager
            .getSandboxViolationStore()
            .getViolationsForCommand(id)
            .map((v) => v.line),
          output
        ),
        failed
      )
  })
}

/**
 * The service for what the settings ask now: off; on over the runtime already running (its configuration
 * replaced); or on over a runtime started now in `scope` (unavailable, with the reasons, when it cannot start).
 */
const serviceFor = (wanted: Wanted, options: LiveOptions, running: Manager | undefined, scope: Scope.Scope) =>
  Effect.gen(function* () {
    if (wanted._tag === "Off") return { service: Sandbox.of({ ...disabledService, config: wanted.config }), running }
    const { config, cwd, policy } = wanted
    if (running !== undefined) {
      running.updateConfig(runtimeConfig(policy, options))
      return { service: readyService(wanted, running), running }
    }
    // The state directory is made read-only inside the sandbox; it must exist as a directory first, or the runtime
    // would put an empty file in its place while a command runs.
    yield* Effect.sync(() => Fs.mkdirSync(wanted.stateDir, { recursive: true })).pipe(Effect.ignore)
    const tmp = yield* sandboxTmpDir.pipe(Effect.orElseSucceed(() => "/tmp/claude"))
    yield* Effect.sync(() => Fs.mkdirSync(tmp, { recursive: true })).pipe(Effect.ignore)
    const started = yield* Effect.either(start(runtimeConfig(policy, options), cwd).pipe(Scope.extend(scope)))
    if (Either.isLeft(started)) {
      const service = Sandbox.of({
        ...disabledService,
        config,
        policy,
        warnings: policy.warnings,
        availability: { _tag: "Unavailable", reasons: started.left }
      })
      return { service, running }
    }
    const manager = started.right.SandboxManager
    return { service: readyService(wanted, manager), running: manager }
  })

/** The part of the settings the sandbox follows, as one comparable text. */
const fingerprint = (inputs: Inputs): string => JSON.stringify([inputs.permissions, inputs.section ?? null])

/**
 * Builds the service from the settings (and the `--sandbox`/`--no-sandbox` override). With live settings it follows
 * them: an edit of `sandbox.*` (or of the permission rules its policy comes from) applies from the next Bash call —
 * the runtime is started when the sandbox is turned on mid-session, reconfigured when its policy changes, and left
 * running (unused) when it is turned off, until the layer closes.
 */
export const make = (options: LiveOptions = {}) =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    const settings = yield* Settings
    const first = yield* serviceFor(yield* configured(options), options, undefined, scope)
    const live = yield* Effect.serviceOption(LiveSettings)
    if (Option.isNone(live)) return first.service
    let current = first
    let followed = fingerprint({ permissions: settings.permissions, section: settings.settings.sandbox })
    const context = yield* Effect.context<Settings | Session>()
    // runs before the reloaded settings are in force, so the next Bash call sees the sandbox they ask for
    yield* live.value.beforeApply((next) =>
      Effect.gen(function* () {
        const inputs: Inputs = { permissions: next.permissions, section: next.settings.sandbox }
        const key = fingerprint(inputs)
        if (key === followed) return
        followed = key
        const wanted = yield* configured(options, inputs)
        current = yield* serviceFor(wanted, options, current.running, scope)
        const availability = current.service.availability
        if (availability._tag === "Unavailable") {
          yield* Effect.logWarning(
            `The sandbox the settings now ask for cannot run: ${availability.reasons.join("; ")}`
          )
        }
      }).pipe(Effect.provide(context))
    )
    return Sandbox.of({
      get config() {
        return current.service.config
      },
      get availability() {
        return current.service.availability
      },
      get policy() {
        return current.service.policy
      },
      get warnings() {
        return current.service.warnings
      },
      wrap: (command, wrap) => current.service.wrap(command, wrap),
      explain: (id, output, failed) => current.service.explain(id, output, failed)
    })
  })

const disabledService = {
  availability: { _tag: "Disabled" } as SandboxDomain.Availability,
  policy: undefined as SandboxDomain.Policy | undefined,
  warnings: [] as ReadonlyArray<string>,
  wrap: () => Effect.fail(new SandboxError({ reason: "the sandbox is not running" })),
  explain: () => undefined
}

/**
 * The sandbox as far as decisions need it, without starting it: the settings, the policy, and availability from the
 * runtime's dependency check alone (no proxies, no test command); `wrap` fails. For `armature permissions check`,
 * which runs nothing.
 */
export const makeStatic = (options: LiveOptions = {}) =>
  Effect.gen(function* () {
    const wanted = yield* configured(options)
    if (wanted._tag === "Off") return Sandbox.of({ ...disabledService, config: wanted.config })
    const { config, policy } = wanted
    const reasons = yield* loadRuntime.pipe(
      Effect.map((runtime) =>
        runtime.SandboxManager.isSupportedPlatform()
          ? runtime.SandboxManager.checkDependencies().errors
          : [`the platform ${process.platform} is not supported`]
      ),
      Effect.merge
    )
    return Sandbox.of({
      ...disabledService,
      config,
      policy,
      warnings: policy.warnings,
      availability: reasons.length === 0 ? { _tag: "Ready" } : { _tag: "Unavailable", reasons }
    })
  })

/** `makeStatic` as a layer. Requires Settings and Session. */
export const layerStatic = (options: LiveOptions = {}) => Layer.effect(Sandbox, makeStatic(options))

/** The sandbox from the settings; `enabled` overrides `sandbox.enabled`. Requires Settings and Session. */
export const layer = (options: LiveOptions = {}) => Layer.scoped(Sandbox, make(options))
