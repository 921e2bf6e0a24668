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

/** A server reached over Streamable HTTP. */
export const HttpServer = Schema.Struct({
  type: Schema.Literal("http"),
  sampling: Schema.optionalWith(SamplingPolicy, { exact: true }),
  url: Schema.String.pipe(Schema.filter((s) => URL.canParse(s) || `Expected an http(s) URL, got ${JSON.stringify(s)}`)),
  headers: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.String }), { default: () => ({}) })
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

/**
 * Decodes an already parsed JSON value. An entry with `type: "http"` is a Streamable HTTP server, anything else
 * a stdio server; errors list every issue as `path: message`, one per line.
 */
export const decode = (file: string, json: unknown): Either.Either<McpConfig, McpConfigError> =>
  Schema.decodeUnknownEither(
    Envelope,
    options
  )(json).pipe(
    Either.mapLeft((error) => issuesOf([], error)),
    Either.flatMap((envelope) => {
      const servers: Record<string, ServerConfig> = {}
      const issues: Array<string> = []
      for (const [name, entry] of Object.entries(envelope.mcpServers)) {
        const http = "type" in entry && entry.type === "http"
        const decoded: Either.Either<ServerConfig, ParseResult.ParseError> = http
          ? Schema.decodeUnknownEither(HttpServer, options)(entry)
          : Schema.decodeUnknownEither(StdioServer, options)(entry)
        if (Either.isRight(decoded)) servers[name] = decoded.right
        else issues.push(...issuesOf(["mcpServers", name], decoded.left))
      }
      return issues.length === 0 ? Either.right({ mcpServers: servers }) : Either.left(issues)
    }),
    Either.mapLeft((issues) => new McpConfigError({ file, reason: issues.join("\n") }))
  )

/**
 * Expands `${VAR}` and `${VAR:-default}` in every string of the file, as Claude Code does; a variable that is not
 * set and has no default is an issue naming its JSON path.
 */
export const expandEnv = (
  json: unknown,
  env: Readonly<Record<string, string | undefined>>
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
  const expanded = walk(json, [])
  return issues.length === 0 ? Either.right(expanded) : Either.left(issues)
}

/** Decodes the text of a `.mcp.json` file, expanding environment variables from `env`. */
export const decodeText = (
  file: string,
  text: string,
  env: Readonly<Record<string, string | undefined>> = {}
): Either.Either<McpConfig, McpConfigError> =>
  Either.try({
    try: () => JSON.parse(text) as unknown,
    catch: (e) => new McpConfigError({ file, reason: `not valid JSON (${e instanceof Error ? e.message : String(e)})` })
  }).pipe(
    Either.flatMap((json) =>
      Either.mapLeft(expandEnv(json, env), (issues) => new McpConfigError({ file, reason: issues.join("\n") }))
    ),
    Either.flatMap((json) => decode(file, json))
  )

/** True for a Streamable HTTP server entry. */
export const isHttp = (config: ServerConfig): config is HttpServer => config.type === "http"

/** Normalises a server or tool name the way Claude Code does for `mcp__{server}__{tool}` names. */
export const normalizeName = (name: string): string => name.replace(/[^a-zA-Z0-9_-]/g, "_")

/** The registry name of an MCP tool. */
export const toolName = (server: string, tool: string): string =>
  `mcp__${normalizeName(server)}__${normalizeName(tool)}`

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
