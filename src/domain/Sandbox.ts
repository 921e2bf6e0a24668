/**
 * The OS sandbox for Bash as data: the `sandbox` settings in Claude Code's shape, their merge across settings files,
 * and the pure decision of how one command runs (inside the sandbox, outside it, or not at all). The runtime that
 * enforces it lives in `src/layers/sandbox`; see docs/sandbox.md.
 */
import { Schema } from "effect"
import * as PermissionRule from "./PermissionRule.js"

const Strings = Schema.Array(Schema.String)
const Rest = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** `sandbox.network`. Unknown keys are kept. */
export const SandboxNetwork = Schema.Struct(
  {
    allowUnixSockets: Schema.optional(Strings),
    allowAllUnixSockets: Schema.optional(Schema.Boolean),
    allowLocalBinding: Schema.optional(Schema.Boolean),
    allowedDomains: Schema.optional(Strings),
    deniedDomains: Schema.optional(Strings)
  },
  Rest
)

/** `sandbox.filesystem`: paths added to what the permission rules give. Unknown keys are kept. */
export const SandboxFilesystem = Schema.Struct(
  {
    allowWrite: Schema.optional(Strings),
    denyWrite: Schema.optional(Strings),
    denyRead: Schema.optional(Strings),
    allowRead: Schema.optional(Strings)
  },
  Rest
)

/** The `sandbox` section of a settings file. Unknown keys are kept. */
export const SandboxSection = Schema.Struct(
  {
    enabled: Schema.optional(Schema.Boolean),
    failIfUnavailable: Schema.optional(Schema.Boolean),
    autoAllowBashIfSandboxed: Schema.optional(Schema.Boolean),
    excludedCommands: Schema.optional(Strings),
    allowUnsandboxedCommands: Schema.optional(Schema.Boolean),
    enableWeakerNestedSandbox: Schema.optional(Schema.Boolean),
    network: Schema.optional(SandboxNetwork),
    filesystem: Schema.optional(SandboxFilesystem)
  },
  Rest
)
export type SandboxSection = typeof SandboxSection.Type

const unique = (items: ReadonlyArray<string>): ReadonlyArray<string> => [...new Set(items)]

const mergeObject = (
  a: Readonly<Record<string, unknown>> | undefined,
  b: Readonly<Record<string, unknown>> | undefined
): Record<string, unknown> | undefined => {
  if (a === undefined) return b === undefined ? undefined : { ...b }
  if (b === undefined) return { ...a }
  const out: Record<string, unknown> = { ...a }
  for (const [key, value] of Object.entries(b)) {
    const before = out[key]
    out[key] =
      Array.isArray(before) && Array.isArray(value)
        ? unique([...before, ...value])
        : isPlainObject(before) && isPlainObject(value)
          ? mergeObject(before, value)
          : value
  }
  return out
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Merges the `sandbox` sections of two settings sources, the second over the first: a later scalar wins, lists
 * are joined (each entry once), sub-objects are merged the same way.
 */
export const mergeSections = (
  a: SandboxSection | undefined,
  b: SandboxSection | undefined
): SandboxSection | undefined => mergeObject(a, b) as SandboxSection | undefined

/** The effective sandbox settings, with Claude Code's defaults filled in. */
export interface Config {
  readonly enabled: boolean
  /** Armature's default is to refuse (true); only an explicit `false` lets Bash run unsandboxed, with a warning. */
  readonly failIfUnavailable: boolean
  readonly autoAllowBashIfSandboxed: boolean
  readonly excludedCommands: ReadonlyArray<string>
  readonly allowUnsandboxedCommands: boolean
  readonly section: SandboxSection
}

/** The effective settings of a merged `sandbox` section; `enabled` (the `--sandbox`/`--no-sandbox` flags) wins. */
export const resolve = (section: SandboxSection | undefined, enabled?: boolean | undefined): Config => ({
  enabled: enabled ?? section?.enabled ?? false,
  failIfUnavailable: section?.failIfUnavailable ?? true,
  autoAllowBashIfSandboxed: section?.autoAllowBashIfSandboxed ?? true,
  excludedCommands: section?.excludedCommands ?? [],
  allowUnsandboxedCommands: section?.allowUnsandboxedCommands ?? true,
  section: section ?? {}
})

/** What the sandbox enforces, as absolute paths (globs only where the runtime expands them) and host patterns. */
export interface Policy {
  readonly allowWrite: ReadonlyArray<string>
  readonly denyWrite: ReadonlyArray<string>
  readonly denyRead: ReadonlyArray<string>
  readonly allowRead: ReadonlyArray<string>
  readonly allowedDomains: ReadonlyArray<string>
  readonly deniedDomains: ReadonlyArray<string>
  readonly allowUnixSockets: ReadonlyArray<string>
  readonly allowAllUnixSockets: boolean
  readonly allowLocalBinding: boolean
  readonly enableWeakerNestedSandbox: boolean
  /** Rules the sandbox cannot express (a glob where a bind mount needs a literal path), named with their source. */
  readonly warnings: ReadonlyArray<string>
}

/** Whether the sandbox can run here. */
export type Availability =
  | { readonly _tag: "Disabled" }
  | { readonly _tag: "Ready" }
  | { readonly _tag: "Unavailable"; readonly reasons: ReadonlyArray<string> }

/** What to install so the sandbox works (Debian/Ubuntu). */
export const installHint = "apt-get install bubblewrap socat ripgrep"

/** How one Bash command runs. */
export type RunPlan =
  | { readonly _tag: "Sandboxed" }
  | {
      readonly _tag: "Unsandboxed"
      readonly why: "disabled" | "excluded" | "requested" | "fallback"
      /** Shown in the result (the fallback of `failIfUnavailable: false`). */
      readonly warning?: string | undefined
    }
  | { readonly _tag: "Refused"; readonly message: string }

/**
 * Whether a command line is excluded from the sandbox: one of its simple commands matches an `excludedCommands`
 * entry. An entry is a command prefix (`docker` covers `docker ps`, by base name too) or a Bash rule specifier
 * (`npm run test:*`, `git * main`).
 */
export const isExcluded = (
  excluded: ReadonlyArray<string>,
  commands: ReadonlyArray<ReadonlyArray<string>>
): string | undefined =>
  excluded.find((entry) =>
    commands.some((argv) => {
      if (argv.length === 0) return false
      const base = argv[0].split("/").pop() ?? argv[0]
      return [argv.join(" "), [base, ...argv.slice(1)].join(" ")].some((line) =>
        entry.includes("*")
          ? PermissionRule.matchesCommand(entry, line)
          : line === entry || line.startsWith(`${entry} `)
      )
    })
  )

/** The text of the refusal when the sandbox is on but cannot run. */
export const unavailableMessage = (reasons: ReadonlyArray<string>): string =>
  `The sandbox is enabled (sandbox.enabled) but cannot run here: ${reasons.join("; ")}. Bash refuses to run commands unsandboxed. On Debian or Ubuntu install what it needs with \`${installHint}\`; elsewhere see docs/sandbox.md. To run without it, turn it off (--no-sandbox or "sandbox": {"enabled": false}).`

/**
 * How a command runs: not sandboxed when the sandbox is off, when the line is excluded, or when the call asked for
 * it (`dangerouslyDisableSandbox`, only if `allowUnsandboxedCommands`); refused when the sandbox is on but
 * unavailable (unless `failIfUnavailable: false`) or when an unsandboxed run was asked for and is not allowed.
 */
export const plan = (
  config: Config,
  availability: Availability,
  commands: ReadonlyArray<ReadonlyArray<string>>,
  disableRequested: boolean
): RunPlan => {
  if (availability._tag === "Disabled" || !config.enabled) return { _tag: "Unsandboxed", why: "disabled" }
  if (isExcluded(config.excludedCommands, commands) !== undefined) return { _tag: "Unsandboxed", why: "excluded" }
  if (disableRequested) {
    return config.allowUnsandboxedCommands
      ? { _tag: "Unsandboxed", why: "requested" }
      : {
          _tag: "Refused",
          message:
            "Running outside the sandbox is turned off (sandbox.allowUnsandboxedCommands is false): run the command without dangerouslyDisableSandbox, or ask the user to change the sandbox settings."
        }
  }
  if (availability._tag === "Ready") return { _tag: "Sandboxed" }
  if (!config.failIfUnavailable) {
    return {
      _tag: "Unsandboxed",
      why: "fallback",
      warning: `Warning: the sandbox is enabled but unavailable (${availability.reasons.join("; ")}); this command ran WITHOUT it because sandbox.failIfUnavailable is false.`
    }
  }
  return { _tag: "Refused", message: unavailableMessage(availability.reasons) }
}
