/**
 * Settings files in Claude Code's shape (docs/permissions.md): the Schema, decoding with errors that name the file and
 * the JSON path, and the merge of several sources into the effective permission settings.
 */
import * as Path from "node:path"
import { Either, ParseResult, Schema } from "effect"
import { HooksConfig } from "./HookConfig.js"
import type { PermissionMode } from "./Permission.js"
import { permissionModes } from "./Permission.js"
import * as PermissionRule from "./PermissionRule.js"
import { mergeSections, SandboxSection } from "./Sandbox.js"
import * as SecretFiles from "./SecretFiles.js"
import { PoliciesSection } from "./ToolPolicy.js"
import { PinsSection } from "./ToolVersion.js"

/** The `permissions` section. Unknown keys are allowed and kept. */
export const PermissionsSection = Schema.Struct(
  {
    allow: Schema.optional(Schema.Array(Schema.String)),
    ask: Schema.optional(Schema.Array(Schema.String)),
    deny: Schema.optional(Schema.Array(Schema.String)),
    // one issue naming every mode (`Expected one of "default", …, actual "yolo"`), not one per member
    defaultMode: Schema.optional(
      Schema.Literal(...permissionModes).annotations({
        message: (issue) => ({
          message: `Expected one of ${permissionModes.map((m) => JSON.stringify(m)).join(", ")}, actual ${JSON.stringify(issue.actual)}`,
          override: true
        })
      })
    ),
    additionalDirectories: Schema.optional(Schema.Array(Schema.String)),
    /** Built-in Read ask rules for well-known secret files (`.env`, keys, credentials); on unless false. */
    protectSecrets: Schema.optional(Schema.Boolean)
  },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)
export type PermissionsSection = typeof PermissionsSection.Type

/** A whole settings file. Unknown keys are allowed and kept. */
export const SettingsFile = Schema.Struct(
  {
    permissions: Schema.optional(PermissionsSection),
    hooks: Schema.optional(HooksConfig),
    sandbox: Schema.optional(SandboxSection),
    /** The model of `armature run` when neither `--model` nor `ANTHROPIC_MODEL` names one (as in Claude Code). */
    model: Schema.optional(Schema.String),
    /** The input tokens of a turn past which `armature run` compacts the conversation (docs/agents.md). */
    autoCompactThreshold: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.nonNegative())),
    /** The most bytes of one call's output saved under the state directory (default 64 MiB; docs/tools.md). */
    maxSavedOutputBytes: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.positive())),
    /** Retry, timeout, rate limit and circuit breaker per tool, keyed like permission rules (docs/tools.md). */
    toolPolicies: Schema.optional(PoliciesSection),
    /** The version each named tool runs, when several are registered (`"Deploy": "1.x"`; docs/tools.md). */
    toolVersions: Schema.optional(PinsSection)
  },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)
export type SettingsFile = typeof SettingsFile.Type

/** A settings file that is not valid JSON; names the file and the line:column of the problem. */
export class SettingsJsonError extends Schema.TaggedError<SettingsJsonError>()("SettingsJsonError", {
  file: Schema.String,
  line: Schema.Number,
  column: Schema.Number,
  reason: Schema.String
}) {
  override get message(): string {
    return `Invalid settings file ${this.file}:${this.line}:${this.column}: ${this.reason}`
  }
}

/** A settings file with the wrong shape; names the file and the JSON path (e.g. `permissions.allow[2]`). */
export class SettingsShapeError extends Schema.TaggedError<SettingsShapeError>()("SettingsShapeError", {
  file: Schema.String,
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Invalid settings file ${this.file}: at ${this.path === "" ? "the top level" : this.path}: ${this.reason}`
  }
}

/** A settings file that cannot be read (other than missing, which is fine). */
export class SettingsReadError extends Schema.TaggedError<SettingsReadError>()("SettingsReadError", {
  file: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Cannot read settings file ${this.file}: ${this.reason}`
  }
}

/** Every way loading settings can fail. */
export type SettingsError =
  | SettingsJsonError
  | SettingsShapeError
  | SettingsReadError
  | PermissionRule.PermissionRuleError

/** Formats a parse path as a JSON path: `permissions.allow[2]`. */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path
    .map((key, i) =>
      typeof key === "number"
        ? `[${key}]`
        : /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(String(key))
          ? `${i === 0 ? "" : "."}${String(key)}`
          : `[${JSON.stringify(String(key))}]`
    )
    .join("")

/** Line and column (1-based) of a character offset. */
export const lineColumn = (text: string, offset: number): { readonly line: number; readonly column: number } => {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)))
  const lines = before.split("\n")
  return { line: lines.length, column: lines[lines.length - 1].length + 1 }
}

const stringToken = /"(?:[^"\\]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y
const numberToken = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
const literalToken = /true|false|null/y

/** The offset of the first syntax error in JSON text (its length when the text ends too early). */
export const jsonErrorOffset = (text: string): number => {
  let i = 0
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i])) i++
  }
  const token = (re: RegExp): boolean => {
    re.lastIndex = i
    if (!re.test(text)) return false
    const control = [...text.slice(i, re.lastIndex)].findIndex((ch) => ch.charCodeAt(0) < 0x20)
    if (control !== -1) {
      i += control
      return false
    }
    i = re.lastIndex
    return true
  }
  const value = (): boolean => {
    ws()
    const c = text[i]
    if (c === "{" || c === "[") {
      const close = c === "{" ? "}" : "]"
      i++
      ws()
      if (text[i] === close) {
        i++
        return true
      }
      for (;;) {
        if (c === "{") {
          ws()
          if (!token(stringToken)) return false
          ws()
          if (text[i] !== ":") return false
          i++
        }
        if (!value()) return false
        ws()
        if (text[i] === ",") {
          i++
          continue
        }
        if (text[i] !== close) return false
        i++
        return true
      }
    }
    if (c === '"') return token(stringToken)
    return token(numberToken) || token(literalToken)
  }
  if (value()) ws()
  return i
}

/**
 * Why JSON text does not parse, in one whole line: what stands at the error's offset and the line it is on (Node's
 * own message quotes the text around it, newlines and all, and a first line of it stops mid-quote).
 */
export const jsonErrorReason = (text: string, offset: number, fallback: string): string => {
  if (offset >= text.length) return text.trim() === "" ? "the file is empty" : "the JSON ends too early"
  const start = text.lastIndexOf("\n", offset - 1) + 1
  const end = text.indexOf("\n", offset)
  const lineText = text.slice(start, end === -1 ? text.length : end).trim()
  const found = text[offset]
  if (found === undefined || lineText === "") return fallback.replace(/\s+/g, " ")
  const shown = lineText.length > 80 ? `${lineText.slice(0, 79)}…` : lineText
  return `unexpected ${JSON.stringify(found)} in: ${shown}`
}

const parseJson = (file: string, text: string): Either.Either<unknown, SettingsJsonError> => {
  try {
    return Either.right(JSON.parse(text))
  } catch (e) {
    const offset = jsonErrorOffset(text)
    const { column, line } = lineColumn(text, offset)
    const reason = jsonErrorReason(text, offset, e instanceof Error ? e.message : String(e))
    return Either.left(new SettingsJsonError({ file, line, column, reason }))
  }
}

/** Decodes the text of a settings file, naming the file in every error. */
export const decode = (
  file: string,
  text: string
): Either.Either<SettingsFile, SettingsJsonError | SettingsShapeError> =>
  Either.flatMap(parseJson(file, text), (json) =>
    Either.mapLeft(
      Schema.decodeUnknownEither(SettingsFile, { errors: "first", onExcessProperty: "preserve" })(json),
      (error) => {
        const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
        return new SettingsShapeError({
          file,
          path: issue === undefined ? "" : formatPath(issue.path),
          reason: issue === undefined ? "does not match the settings schema" : issue.message
        })
      }
    )
  )

/** Which of the first three sources are read (`--setting-sources`). */
export type SettingSourceKind = "user" | "project" | "local"

/** One decoded settings source, lowest precedence first. */
export interface Source {
  /** The file path, or a flag name such as `--allowed-tools`. */
  readonly name: string
  /** The project root `/p` rules of this source are anchored at. */
  readonly root: string
  /** Relative `additionalDirectories` are resolved against this directory. */
  readonly base: string
  readonly settings: SettingsFile
}

/** The effective permission settings: rules with their sources, the mode and the extra working directories. */
export interface Permissions {
  readonly allow: ReadonlyArray<PermissionRule.Rule>
  readonly ask: ReadonlyArray<PermissionRule.Rule>
  readonly deny: ReadonlyArray<PermissionRule.Rule>
  readonly defaultMode: PermissionMode
  readonly additionalDirectories: ReadonlyArray<string>
}

/** The merge of every source. */
export interface Merged {
  readonly permissions: Permissions
  readonly hooks: HooksConfig
  /** The `sandbox` sections merged key by key (later scalars win, lists are joined). */
  readonly sandbox: SandboxSection | undefined
  /** Every top-level key of every source, later sources overriding earlier ones (permissions and hooks merged). */
  readonly settings: SettingsFile
  readonly sources: ReadonlyArray<string>
}

/**
 * Merges sources, lowest precedence first: rule lists are concatenated (each rule keeps its source), the last
 * `defaultMode` wins, additional directories are joined, hook matchers are concatenated per event, and other keys
 * are overridden by later sources. A malformed rule fails with its text and source.
 */
export const merge = (sources: ReadonlyArray<Source>): Either.Either<Merged, PermissionRule.PermissionRuleError> => {
  const allow: Array<PermissionRule.Rule> = []
  const ask: Array<PermissionRule.Rule> = []
  const deny: Array<PermissionRule.Rule> = []
  const dirs: Array<string> = []
  const hooks: Record<string, Array<HooksConfig[string][number]>> = {}
  let defaultMode: PermissionMode = "default"
  let protectSecrets = true
  let settings: Record<string, unknown> = {}
  let sandbox: SandboxSection | undefined
  for (const source of sources) {
    const p = source.settings.permissions
    for (const [behavior, list, into] of [
      ["allow", p?.allow, allow],
      ["ask", p?.ask, ask],
      ["deny", p?.deny, deny]
    ] as const) {
      const parsed = PermissionRule.parseAll(list ?? [], { behavior, source: source.name, root: source.root })
      if (Either.isLeft(parsed)) return Either.left(parsed.left)
      into.push(...parsed.right)
    }
    if (p?.defaultMode !== undefined) defaultMode = p.defaultMode
    if (p?.protectSecrets !== undefined) protectSecrets = p.protectSecrets
    for (const dir of p?.additionalDirectories ?? []) {
      const resolved = Path.resolve(source.base, dir)
      if (!dirs.includes(resolved)) dirs.push(resolved)
    }
    for (const [event, matchers] of Object.entries(source.settings.hooks ?? {})) {
      hooks[event] = [...(hooks[event] ?? []), ...matchers]
    }
    sandbox = mergeSections(sandbox, source.settings.sandbox)
    settings = { ...settings, ...source.settings }
  }
  // The built-in rules (on unless a settings file sets protectSecrets: false) come last: a rule of the user's is
  // named first when both apply.
  if (protectSecrets) ask.push(...SecretFiles.rules(allow))
  const permissions: Permissions = { allow, ask, deny, defaultMode, additionalDirectories: dirs }
  return Either.right({
    permissions,
    hooks,
    sandbox,
    settings: {
      ...settings,
      permissions: {
        allow: allow.map((r) => r.text),
        ask: ask.filter((r) => r.source !== SecretFiles.source).map((r) => r.text),
        deny: deny.map((r) => r.text),
        defaultMode,
        additionalDirectories: dirs,
        // shown when turned off (on is the default)
        ...(protectSecrets ? {} : { protectSecrets })
      },
      hooks,
      ...(sandbox === undefined ? {} : { sandbox })
    },
    sources: sources.map((s) => s.name)
  })
}
