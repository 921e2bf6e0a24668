/**
 * The `.mcp.json` file: which MCP servers to connect to and how (Claude Code's format).
 */
import { Either, ParseResult, Schema } from "effect"

/**
 * Whether the server may use the language model (`sampling/createMessage`): ask each time (the default), allow
 * or deny. See docs/mcp.md.
 */
export const SamplingPolicy = Schema.Literal("ask", "allow", "deny").annotations({
  message: (issue) => ({
    message: `Expected "ask", "allow" or "deny", actual ${JSON.stringify(issue.actual)}`,
    override: true
  })
})

/** A server started as a child process and spoken to over stdio. */
export const StdioServer = Schema.Struct({
  type: Schema.optional(Schema.Literal("stdio")),
  sampling: Schema.optionalWith(SamplingPolicy, { exact: true }),
  command: Schema.NonEmptyString,
  args: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  env: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.String }), { default: () => ({}) }),
  cwd: Schema.optional(Schema.String),
  /** Run the server inside the OS sandbox for Bash, with the same policy (see docs/sandbox.md). */
  sandbox: Schema.optional(Schema.Boolean)
})
export type StdioServer = typeof StdioServer.Type

/**
 * OAuth settings of an HTTP server (Claude Code's `oauth` key, plus `grant`): a client registered beforehand with the
 * authorization server, for servers without dynamic client registration; the fixed port of the loopback redirect
 * (`http://127.0.0.1:PORT/callback`) such a registration names; the scope to ask for when the server does not say.
 */
export const OAuthSettings = Schema.Struct({
  clientId: Schema.optionalWith(Schema.NonEmptyString, { exact: true }),
  clientSecret: Schema.optionalWith(Schema.String, { exact: true }),
  callbackPort: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 65535)), { exact: true }),
  scope: Schema.optionalWith(Schema.String, { exact: true }),
  /**
   * "client_credentials": a machine client (OAuth client-credentials grant, with `clientId` and `clientSecret`)
   * that gets its tokens itself, with no browser and no login. Default: the authorization-code flow.
   */
  grant: Schema.optionalWith(Schema.Literal("authorization_code", "client_credentials"), { exact: true })
})
export type OAuthSettings = typeof OAuthSettings.Type

/** A server reached over Streamable HTTP. */
export const HttpServer = Schema.Struct({
  type: Schema.Literal("http"),
  sampling: Schema.optionalWith(SamplingPolicy, { exact: true }),
  url: Schema.String.pipe(Schema.filter((s) => URL.canParse(s) || `Expected an http(s) URL, got ${JSON.stringify(s)}`)),
  headers: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.String }), { default: () => ({}) }),
  oauth: Schema.optionalWith(OAuthSettings, { exact: true })
})
export type HttpServer = typeof HttpServer.Type

/** One server's entry. */
export type ServerConfig = HttpServer | StdioServer

/** The whole file, decoded. */
export interface McpConfig {
  readonly mcpServers: Readonly<Record<string, ServerConfig>>
}

const Envelope = Schema.Struct({
  mcpServers: Schema.Record({ key: Schema.String, value: Schema.Object })
})

/** The file cannot be read, is not JSON, or does not fit the Schema; the message names the file and the path. */
export class McpConfigError extends Schema.TaggedError<McpConfigError>()("McpConfigError", {
  file: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Invalid MCP config ${this.file}: ${this.reason}`
  }
}

const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.length === 0
    ? "(root)"
    : path.map((k, i) => (typeof k === "number" ? `[${k}]` : i === 0 ? String(k) : `.${String(k)}`)).join("")

const issuesOf = (prefix: ReadonlyArray<PropertyKey>, error: ParseResult.ParseError): ReadonlyArray<string> =>
  ParseResult.ArrayFormatter.formatErrorSync(error).map((i) => `${formatPath([...prefix, ...i.path])}: ${i.message}`)

const options = { errors: "all", onExcessProperty: "ignore" } as const

/** A server entry left out because it is invalid; the rest of the file still counts. */
export interface SkippedServer {
  readonly server: string
  /** Every issue of the entry, as `path: message`. */
  readonly issues: ReadonlyArray<string>
}

/** A file's valid servers, and the entries left out because they are invalid. */
export interface Lenient {
  readonly config: McpConfig
  readonly skipped: ReadonlyArray<SkippedServer>
}

/**
 * Why a server name cannot be used, or undefined when it can. Tool names are `mcp__{server}__{tool}` and the server
 * ends at the first `__`: a name that holds `__` or ends with `_` once normalised (`a__b`, `a..b`, `a_`) would
 * make the tools of one server look like another's to permission rules (`mcp__a` would cover server `a__b`).
 */
export const serverNameProblem = (name: string): string | undefined => {
  const normal = normalizeName(name)
  if (normal === "") return "a server name may not be empty"
  if (normal.includes("__") || normal.endsWith("_")) {
    return `server name ${JSON.stringify(name)} ${normal === name ? "" : `(as ${JSON.stringify(normal)} in tool names) `}holds "__" or ends with "_": its tools' names mcp__${normal}__TOOL would not say where the server name ends, and permission rules for another server could match them; rename it`
  }
  return undefined
}

const decodeEntry = (
  name: string,
  entry: object,
  env: Readonly<Record<string, string | undefined>>
): Either.Either<ServerConfig, ReadonlyArray<string>> => {
  const problem = serverNameProblem(name)
  if (problem !== undefined) return Either.left([`mcpServers.${name}: ${problem}`])
  return Either.flatMap(expandEnv(entry, env, ["mcpServers", name]), (expanded) => {
    const value = expanded as object
    const http = "type" in value && value.type === "http"
    const decoded: Either.Either<ServerConfig, ParseResult.ParseError> = http
      ? Schema.decodeUnknownEither(HttpServer, options)(value)
      : Schema.decodeUnknownEither(StdioServer, options)(value)
    return Either.mapLeft(decoded, (error) => issuesOf(["mcpServers", name], error))
  })
}

/**
 * Decodes an already parsed JSON value, one server entry at a time: `${VAR}` and `${VAR:-default}` are expanded
 * from `env` in each entry, an entry with `type: "http"` is a Streamable HTTP server, anything else a stdio server.
 * An entry that does not decode (an unset variable, a missing field) is skipped with its issues; only a file
 * whose shape is wrong (no `mcpServers` object) fails.
 */
export const decodeLenient = (
  file: string,
  json: unknown,
  env: Readonly<Record<string, string | undefined>> = {}
): Either.Either<Lenient, McpConfigError> =>
  Schema.decodeUnknownEither(
    Envelope,
    options
  )(json).pipe(
    Either.mapLeft((error) => new McpConfigError({ file, reason: issuesOf([], error).join("\n") })),
    Either.map((envelope) => {
      const servers: Record<string, ServerConfig> = {}
      const skipped: Array<SkippedServer> = []
      for (const [name, entry] of Object.entries(envelope.mcpServers)) {
        const decoded = decodeEntry(name, entry, env)
        if (Either.isRight(decoded)) servers[name] = decoded.right
        else skipped.push({ server: name, issues: decoded.left })
      }
      return { config: { mcpServers: servers }, skipped }
    })
  )

/** Like `decodeLenient`, but any invalid entry fails the whole file (every issue listed, one per line). */
export const decode = (
  file: string,
  json: unknown,
  env: Readonly<Record<string, string | undefined>> = {}
): Either.Either<McpConfig, McpConfigError> =>
  Either.flatMap(decodeLenient(file, json, env), ({ config, skipped }) =>
    skipped.length === 0
      ? Either.right(config)
      : Either.left(new McpConfigError({ file, reason: skipped.flatMap((s) => s.issues).join("\n") }))
  )

/**
 * Expands `${VAR}` and `${VAR:-default}` in every string of `json`, as Claude Code does; a variable that is not
 * set and has no default is an issue naming its JSON path (below `at`).
 */
export const expandEnv = (
  json: unknown,
  env: Readonly<Record<string, string | undefined>>,
  at: ReadonlyArray<PropertyKey> = []
): Either.Either<unknown, ReadonlyArray<string>> => {
  const issues: Array<string> = []
  const walk = (value: unknown, path: ReadonlyArray<PropertyKey>): unknown => {
    if (typeof value === "string") {
      return value.replace(
        /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
        (whole, name: string, fallback?: string) => {
          const found = env[name]
          if (found !== undefined) return found
          if (fallback !== undefined) return fallback
          issues.push(`${formatPath(path)}: environment variable ${name} is not set`)
          return whole
        }
      )
    }
    if (Array.isArray(value)) return value.map((v, i) => walk(v, [...path, i]))
    if (typeof value === "object" && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, [...path, k])]))
    }
    return value
  }
  const expanded = walk(json, at)
  return issues.length === 0 ? Either.right(expanded) : Either.left(issues)
}

const parseJson = (file: string, text: string): Either.Either<unknown, McpConfigError> =>
  Either.try({
    try: () => JSON.parse(text) as unknown,
    catch: (e) => new McpConfigError({ file, reason: `not valid JSON (${e instanceof Error ? e.message : String(e)})` })
  })

/** Decodes the text of a `.mcp.json` file, expanding environment variables from `env`; any bad entry fails it. */
export const decodeText = (
  file: string,
  text: string,
  env: Readonly<Record<string, string | undefined>> = {}
): Either.Either<McpConfig, McpConfigError> => Either.flatMap(parseJson(file, text), (json) => decode(file, json, env))

/** Decodes the text of a `.mcp.json` file; a bad entry is skipped (see `decodeLenient`), a bad file fails. */
export const decodeTextLenient = (
  file: string,
  text: string,
  env: Readonly<Record<string, string | undefined>> = {}
): Either.Either<Lenient, McpConfigError> =>
  Either.flatMap(parseJson(file, text), (json) => decodeLenient(file, json, env))

/** The warning line for an entry left out. */
export const skippedNotice = (file: string, skipped: SkippedServer): string =>
  `armature: MCP server ${JSON.stringify(skipped.server)} of ${file} is disabled: ${skipped.issues.join("; ")}`

/** True for a Streamable HTTP server entry. */
export const isHttp = (config: ServerConfig): config is HttpServer => config.type === "http"

/** Normalises a server or tool name the way Claude Code does for `mcp__{server}__{tool}` names. */
export const normalizeName = (name: string): string => name.replace(/[^a-zA-Z0-9_-]/g, "_")

/** The longest tool name the Messages API takes. */
export const maxToolNameLength = 128

/** FNV-1a over the UTF-16 code units of `text`, as 8 hex digits: a short, stable fingerprint. */
export const fingerprint = (text: string): string => {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash.toString(16).padStart(8, "0")
}

/**
 * The registry name of an MCP tool: `mcp__{server}__{tool}`, normalised. A name longer than the API's 128
 * characters keeps its first 119 characters (so `mcp__{server}__` rules still match it) and ends with `_` and a
 * fingerprint of the whole name: the same tool always gets the same name, two long names differing only at the
 * end get different ones.
 */
export const toolName = (server: string, tool: string): string => {
  const full = `mcp__${normalizeName(server)}__${normalizeName(tool)}`
  if (full.length <= maxToolNameLength) return full
  return `${full.slice(0, maxToolNameLength - 9)}_${fingerprint(full)}`
}

/** Client tunables read from the environment, as Claude Code names them; each undefined when unset. */
export interface EnvTunables {
  /** `MCP_TIMEOUT`: how long a server has to start and answer `initialize`, in milliseconds. */
  readonly connectTimeoutMs: number | undefined
  /** `MCP_TOOL_TIMEOUT`: how long a call may go without an answer or progress, in milliseconds. */
  readonly toolTimeoutMs: number | undefined
  /** `MAX_MCP_OUTPUT_TOKENS`: the most tokens of text a tool result may hand the model. */
  readonly maxOutputTokens: number | undefined
  /** One line per variable set to something other than a positive integer (it is then ignored). */
  readonly issues: ReadonlyArray<string>
}

/** The default of `MAX_MCP_OUTPUT_TOKENS` (Claude Code's). */
export const defaultMaxOutputTokens = 25_000

/** Reads `MCP_TIMEOUT`, `MCP_TOOL_TIMEOUT` and `MAX_MCP_OUTPUT_TOKENS` from `env`. */
export const envTunables = (env: Readonly<Record<string, string | undefined>>): EnvTunables => {
  const issues: Array<string> = []
  const read = (name: string): number | undefined => {
    const raw = env[name]?.trim()
    if (raw === undefined || raw === "") return undefined
    if (/^[0-9]+$/.test(raw) && Number(raw) > 0) return Number(raw)
    issues.push(`${name}=${JSON.stringify(env[name])} is not a positive whole number; it is ignored`)
    return undefined
  }
  return {
    connectTimeoutMs: read("MCP_TIMEOUT"),
    toolTimeoutMs: read("MCP_TOOL_TIMEOUT"),
    maxOutputTokens: read("MAX_MCP_OUTPUT_TOKENS"),
    issues
  }
}

/** The settings that approve the servers of a project's `.mcp.json` (Claude Code's keys). */
export interface ProjectApproval {
  /** `enableAllProjectMcpServers`: every server of the project file is approved. */
  readonly enableAll: boolean
  /** `enabledMcpjsonServers`: these are approved. */
  readonly enabled: ReadonlyArray<string>
  /** `disabledMcpjsonServers`: these never start, whatever else says. */
  readonly disabled: ReadonlyArray<string>
}

const ApprovalSettings = Schema.Struct({
  enableAllProjectMcpServers: Schema.optionalWith(Schema.Boolean, { exact: true, default: () => false }),
  enabledMcpjsonServers: Schema.optionalWith(Schema.Array(Schema.String), { exact: true, default: () => [] }),
  disabledMcpjsonServers: Schema.optionalWith(Schema.Array(Schema.String), { exact: true, default: () => [] })
})

/** Reads the approval keys from merged settings; a key of the wrong type is an error naming it. */
export const approvalOf = (settings: Readonly<Record<string, unknown>>): Either.Either<ProjectApproval, string> =>
  Schema.decodeUnknownEither(
    ApprovalSettings,
    options
  )(settings).pipe(
    Either.map((s) => ({
      enableAll: s.enableAllProjectMcpServers,
      enabled: s.enabledMcpjsonServers,
      disabled: s.disabledMcpjsonServers
    })),
    Either.mapLeft((error) => `Invalid settings: ${issuesOf([], error).join("; ")}`)
  )

/** Whether one server of the project's `.mcp.json` may start: disabled wins, then enabled or enable-all. */
export const projectDecision = (name: string, approval: ProjectApproval): "approved" | "disabled" | "unapproved" =>
  approval.disabled.includes(name)
    ? "disabled"
    : approval.enableAll || approval.enabled.includes(name)
      ? "approved"
      : "unapproved"

/** The servers of `project` that are approved, and the names of those that are waiting for an approval. */
export const approvedProjectServers = (
  project: McpConfig,
  approval: ProjectApproval
): { readonly approved: McpConfig; readonly unapproved: ReadonlyArray<string> } => {
  const approved: Record<string, ServerConfig> = {}
  const unapproved: Array<string> = []
  for (const [name, server] of Object.entries(project.mcpServers)) {
    const decision = projectDecision(name, approval)
    if (decision === "approved") approved[name] = server
    else if (decision === "unapproved") unapproved.push(name)
  }
  return { approved: { mcpServers: approved }, unapproved }
}

/** Servers of several configs, later ones replacing earlier ones of the same name. */
export const mergeConfigs = (configs: ReadonlyArray<McpConfig>): McpConfig => ({
  mcpServers: Object.assign({}, ...configs.map((c) => c.mcpServers)) as Record<string, ServerConfig>
})

/** The one-line notice for project servers left unstarted because nobody approved them. */
export const unapprovedNotice = (file: string, names: ReadonlyArray<string>): string =>
  `armature: not starting MCP server${names.length === 1 ? "" : "s"} ${names.map((n) => JSON.stringify(n)).join(", ")} of ${file}: not approved (add to enabledMcpjsonServers or set enableAllProjectMcpServers in settings)`

const SamplingSettings = Schema.Struct({
  mcpSampling: Schema.optionalWith(Schema.Record({ key: Schema.String, value: SamplingPolicy }), {
    exact: true,
    default: () => ({})
  })
})

/** Reads `mcpSampling` (server name → "ask" | "allow" | "deny") from merged settings; a bad value names it. */
export const samplingPoliciesOf = (
  settings: Readonly<Record<string, unknown>>
): Either.Either<Readonly<Record<string, typeof SamplingPolicy.Type>>, string> =>
  Schema.decodeUnknownEither(
    SamplingSettings,
    options
  )(settings).pipe(
    Either.map((s) => s.mcpSampling),
    Either.mapLeft((error) => `Invalid settings: ${issuesOf([], error).join("; ")}`)
  )

/**
 * Sets each server's sampling policy: the settings' `mcpSampling` entry wins; else the server's own `sampling`,
 * except that a server of the project's `.mcp.json` (`fromProject`) cannot allow itself (its "allow" counts as
 * "ask"), since that file comes with the repository rather than from the user.
 */
export const applySamplingPolicies = (
  config: McpConfig,
  policies: Readonly<Record<string, typeof SamplingPolicy.Type>>,
  fromProject: ReadonlySet<string>
): McpConfig => ({
  mcpServers: Object.fromEntries(
    Object.entries(config.mcpServers).map(([name, server]) => {
      const own = server.sampling === "allow" && fromProject.has(name) ? "ask" : server.sampling
      const sampling = policies[name] ?? own
      return [name, sampling === undefined ? server : { ...server, sampling }]
    })
  )
})
