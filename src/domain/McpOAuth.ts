/**
 * OAuth for HTTP MCP servers, the pure part: where a server's credentials are kept, what the stored record holds,
 * when its access token counts as expired, and how secrets are kept out of any text shown or logged.
 */
import * as Path from "node:path"
import { Either, Schema } from "effect"
import { fingerprint, normalizeName } from "./McpConfig.js"

/**
 * The user's Armature configuration directory: `ARMATURE_CONFIG_DIR` when set, else `$XDG_CONFIG_HOME/armature`,
 * else `~/.config/armature`.
 */
export const configDir = (env: Readonly<Record<string, string | undefined>>, home: string): string => {
  const override = env.ARMATURE_CONFIG_DIR
  if (override !== undefined && override !== "") return Path.resolve(override)
  const xdg = env.XDG_CONFIG_HOME
  if (xdg !== undefined && Path.isAbsolute(xdg)) return Path.join(xdg, "armature")
  return Path.join(home, ".config", "armature")
}

/** The directory of the per-server credential files, below the configuration directory. */
const credentialsDirName = "mcp-oauth"

/**
 * The file of one server's credentials: named after the server and a fingerprint of its URL, so that a server
 * whose URL changes (or another project's server of the same name) never gets tokens meant for another resource.
 */
export const credentialsFile = (dir: string, server: string, url: string): string =>
  Path.join(dir, credentialsDirName, `${normalizeName(server)}-${fingerprint(new URL(url).href)}.json`)

const Json = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/**
 * What is stored for one server. `client` and `tokens` are kept exactly as the MCP SDK handed them over (it stamps
 * them with the authorization server they belong to); `obtainedAt` is when the tokens were saved (epoch ms), from
 * which their `expires_in` counts.
 */
export const Stored = Schema.Struct({
  server: Schema.String,
  url: Schema.String,
  /** The loopback redirect URL the client was registered with (and the last login used). */
  redirectUrl: Schema.optionalWith(Schema.String, { exact: true }),
  client: Schema.optionalWith(Json, { exact: true }),
  tokens: Schema.optionalWith(Json, { exact: true }),
  obtainedAt: Schema.optionalWith(Schema.Number, { exact: true }),
  codeVerifier: Schema.optionalWith(Schema.String, { exact: true })
})
export type Stored = typeof Stored.Type

/** An empty record for a server. */
export const empty = (server: string, url: string): Stored => ({ server, url })

/** Decodes a credentials file's text; anything unreadable counts as nothing stored. */
export const decodeStored = (text: string): Either.Either<Stored, string> =>
  Either.try({ try: () => JSON.parse(text) as unknown, catch: () => "not JSON" }).pipe(
    Either.flatMap((json) => Either.mapLeft(Schema.decodeUnknownEither(Stored)(json), (e) => e.message))
  )

const stringField = (record: Readonly<Record<string, unknown>> | undefined, key: string): string | undefined => {
  const value = record?.[key]
  return typeof value === "string" && value !== "" ? value : undefined
}

/** The access token, when one is stored. */
export const accessToken = (stored: Stored): string | undefined => stringField(stored.tokens, "access_token")

/** The refresh token, when one is stored. */
export const refreshToken = (stored: Stored): string | undefined => stringField(stored.tokens, "refresh_token")

/** How long before its stated expiry a token is treated as expired (clocks drift, requests take time). */
export const expirySlackMs = 30_000

/** When the stored access token expires (epoch ms), or undefined when the server did not say. */
export const expiresAt = (stored: Stored): number | undefined => {
  const seconds = stored.tokens?.expires_in
  if (typeof seconds !== "number" || stored.obtainedAt === undefined) return undefined
  return stored.obtainedAt + seconds * 1000
}

/** True when an access token is stored and has expired (or is within `expirySlackMs` of expiring) at `now`. */
export const isExpired = (stored: Stored, now: number): boolean => {
  const at = expiresAt(stored)
  return accessToken(stored) !== undefined && at !== undefined && now >= at - expirySlackMs
}

/** Where a server stands with its credentials, as `mcp list` shows it. */
export type LoginState = "logged-in" | "expired" | "none"

export const loginState = (stored: Stored, now: number): LoginState =>
  accessToken(stored) === undefined
    ? "none"
    : isExpired(stored, now) && refreshToken(stored) === undefined
      ? "expired"
      : "logged-in"

/** The secrets of a record: never to be shown, logged or written anywhere but the credentials file. */
export const secretsOf = (stored: Stored): ReadonlyArray<string> =>
  [
    accessToken(stored),
    refreshToken(stored),
    stringField(stored.tokens, "id_token"),
    stringField(stored.client, "client_secret"),
    stored.codeVerifier
  ].filter((s): s is string => s !== undefined && s.length >= 4)

/** `text` with every occurrence of each secret replaced by `[redacted]`. */
export const redact = (text: string, secrets: ReadonlyArray<string>): string =>
  secrets.reduce((out, secret) => out.split(secret).join("[redacted]"), text)

/** The command that logs in to a server. */
export const loginCommand = (server: string): string =>
  `armature mcp login ${/^[\w@%+=:,./-]+$/.test(server) ? server : `'${server.replace(/'/g, "'\\''")}'`}`

/** Why a server that needs a login where nobody can be asked (no terminal, exec, serve) is not connected. */
export const needsLoginReason = (server: string): string =>
  `needs authorization (OAuth): run \`${loginCommand(server)}\` in a terminal, then try again`

/** The error text of such a server. */
export const needsLoginText = (server: string): string => `MCP server ${server} ${needsLoginReason(server)}`

/** The loopback redirect URL for a port. */
export const redirectUrlFor = (port: number): string => `http://127.0.0.1:${port}/callback`

/** The port of a loopback redirect URL written by `redirectUrlFor`, if it is one. */
export const redirectPort = (url: string | undefined): number | undefined => {
  if (url === undefined) return undefined
  const match = /^http:\/\/127\.0\.0\.1:(\d+)\/callback$/.exec(url)
  return match === null ? undefined : Number(match[1])
}
