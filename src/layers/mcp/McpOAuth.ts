/**
 * OAuth 2.1 for HTTP MCP servers, on the MCP SDK's client auth (`auth()` in `@modelcontextprotocol/sdk/client/auth`):
 * protected-resource metadata discovery (RFC 9728), authorization-server metadata (RFC 8414 / OIDC), dynamic client
 * registration (RFC 7591) or the client id of the `.mcp.json` entry, PKCE, and refresh.
 *
 * The credentials of each server live in one file under the user's configuration directory
 * (`~/.config/armature/mcp-oauth/`, see `McpOAuth.configDir`), readable by the user only (0600, directory 0700).
 * Connections (`exec`, `run`, `mcp serve`) use them headlessly: they refresh an expired token, but a server that
 * needs a new login fails with a text naming `armature mcp login SERVER`. The login itself (`login` below) prints
 * the authorization URL and waits for the browser's redirect on a loopback listener on 127.0.0.1.
 */
import * as ChildProcess from "node:child_process"
import * as NodeCrypto from "node:crypto"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { auth, type OAuthClientProvider, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens
} from "@modelcontextprotocol/sdk/shared/auth.js"
import { Deferred, Duration, Effect, Either, Schema, type Scope } from "effect"
import type * as McpConfig from "../../domain/McpConfig.js"
import * as McpOAuth from "../../domain/McpOAuth.js"

/** The configuration directory of this process (see `McpOAuth.configDir`). */
const defaultConfigDir = (): string => McpOAuth.configDir(process.env, process.env.HOME ?? Os.homedir())

/** A server's credentials file. */
export const fileOf = (server: string, config: McpConfig.HttpServer, dir: string = defaultConfigDir()): string =>
  McpOAuth.credentialsFile(dir, server, config.url)

/** Reads a credentials file; a missing or unreadable one is an empty record. */
const readStored = (file: string, server: string, url: string): McpOAuth.Stored => {
  let text: string
  try {
    text = Fs.readFileSync(file, "utf8")
  } catch {
    return McpOAuth.empty(server, url)
  }
  return Either.getOrElse(McpOAuth.decodeStored(text), () => McpOAuth.empty(server, url))
}

/**
 * Writes a credentials file readable and writable by the user only: its directory is made (and kept) 0700, the
 * file is written under a temporary name created 0600 and renamed over the old one, so no reader ever sees a
 * partial file and the secrets are never, even briefly, in a file others may read.
 */
const writeStored = (file: string, stored: McpOAuth.Stored): void => {
  const dir = Path.dirname(file)
  Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  Fs.chmodSync(dir, 0o700)
  const temp = `${file}.${process.pid}.${NodeCrypto.randomBytes(4).toString("hex")}.tmp`
  const encoded = Schema.encodeSync(McpOAuth.Stored)(stored)
  try {
    Fs.writeFileSync(temp, `${JSON.stringify(encoded, null, 2)}\n`, { mode: 0o600, flag: "wx" })
    Fs.renameSync(temp, file)
  } finally {
    Fs.rmSync(temp, { force: true })
  }
  Fs.chmodSync(file, 0o600)
}

/** Removes a server's credentials; true when there were some. */
export const removeStored = (file: string): boolean => {
  const existed = Fs.existsSync(file)
  Fs.rmSync(file, { force: true })
  return existed
}

/** A connection needs a login that cannot happen here (no terminal, `exec`, `mcp serve`). */
export class NeedsLogin extends Error {
  constructor(readonly server: string) {
    super(McpOAuth.needsLoginText(server))
    this.name = "NeedsLogin"
  }
}

/** True for the errors that mean "log in first": ours, and the SDK's when the server keeps answering 401. */
export const isNeedsLogin = (e: unknown): boolean =>
  e instanceof NeedsLogin ||
  e instanceof UnauthorizedError ||
  (e instanceof Error && /Server returned 401 after successful authentication/.test(e.message))

/** The interactive part of a login: where the browser comes back to, and what to do with the URL. */
export interface LoginStep {
  readonly redirectUrl: string
  readonly state: string
  readonly open: (authorizationUrl: URL) => void
}

/**
 * The SDK's `OAuthClientProvider` on a credentials file. Without a `LoginStep` it is headless: it uses and
 * refreshes stored tokens, and where the SDK would start an authorization (or register a client first) it throws
 * `NeedsLogin` instead.
 */
export class FileOAuthProvider implements OAuthClientProvider {
  private stored: McpOAuth.Stored
  private verifier: string | undefined
  /** When this provider last saved tokens (epoch ms). */
  private savedAt = 0

  constructor(
    readonly server: string,
    readonly config: McpConfig.HttpServer,
    readonly file: string,
    readonly step?: LoginStep | undefined
  ) {
    this.stored = readStored(file, server, config.url)
  }

  private persist(next: McpOAuth.Stored): void {
    this.stored = next
    writeStored(this.file, next)
  }

  /** Every secret this provider knows of, for redaction. */
  secrets(): ReadonlyArray<string> {
    const own = this.config.oauth?.clientSecret
    return [
      ...McpOAuth.secretsOf(this.stored),
      ...(own !== undefined && own.length >= 4 ? [own] : []),
      ...(this.verifier === undefined ? [] : [this.verifier])
    ]
  }

  /** `text` with this server's secrets replaced. */
  redact(text: string): string {
    return McpOAuth.redact(text, this.secrets())
  }

  /** True for a machine client (client-credentials grant): no browser, no login, no refresh token needed. */
  get machine(): boolean {
    return this.config.oauth?.grant === "client_credentials"
  }

  /** True when the stored access token has expired and can be renewed (a refresh token, or client credentials). */
  refreshDue(now: number): boolean {
    return McpOAuth.isExpired(this.stored, now) && (this.machine || McpOAuth.refreshToken(this.stored) !== undefined)
  }

  /** The client-credentials grant's token request (the SDK takes the authorization-code one when undefined). */
  prepareTokenRequest(scope?: string): URLSearchParams | undefined {
    if (!this.machine) return undefined
    const params = new URLSearchParams({ grant_type: "client_credentials" })
    if (scope !== undefined && scope !== "") params.set("scope", scope)
    return params
  }

  get redirectUrl(): string | undefined {
    // No redirect URL is what tells the SDK to take a non-interactive grant.
    if (this.machine) return undefined
    // Headless, the URL is never visited: the SDK only needs one to take the authorization-code path (whose first
    // step, the redirect, throws NeedsLogin) rather than a client-credentials one.
    return (
      this.step?.redirectUrl ??
      this.stored.redirectUrl ??
      McpOAuth.redirectUrlFor(this.config.oauth?.callbackPort ?? 80)
    )
  }

  get clientMetadata(): OAuthClientMetadata {
    const scope = this.config.oauth?.scope
    return {
      client_name: "Armature",
      redirect_uris: this.redirectUrl === undefined ? [] : [this.redirectUrl],
      grant_types: this.machine ? ["client_credentials"] : ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: this.config.oauth?.clientSecret === undefined ? "none" : "client_secret_post",
      ...(scope === undefined ? {} : { scope })
    }
  }

  state(): string {
    return this.step?.state ?? NodeCrypto.randomBytes(16).toString("base64url")
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    const configured = this.config.oauth?.clientId
    const stored = this.stored.client as OAuthClientInformationMixed | undefined
    if (configured !== undefined) {
      if (stored !== undefined && stored.client_id === configured) return stored
      const secret = this.config.oauth?.clientSecret
      return { client_id: configured, ...(secret === undefined ? {} : { client_secret: secret }) }
    }
    if (stored !== undefined) return stored
    // Registering a client is the first step of a login: headless, it is not taken (each retry would register one).
    if (this.step === undefined) throw new NeedsLogin(this.server)
    return undefined
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.persist({ ...this.stored, client: { ...info } })
  }

  tokens(): OAuthTokens | undefined {
    return this.stored.tokens as OAuthTokens | undefined
  }

  saveTokens(tokens: OAuthTokens): void {
    this.verifier = undefined
    const { codeVerifier: _, ...rest } = this.stored
    this.savedAt = Date.now()
    this.persist({ ...rest, tokens: { ...tokens }, obtainedAt: this.savedAt })
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    if (this.step === undefined) throw new NeedsLogin(this.server)
    this.step.open(authorizationUrl)
  }

  saveCodeVerifier(codeVerifier: string): void {
    // Kept in memory only: the login that made it is the one that uses it.
    this.verifier = codeVerifier
  }

  codeVerifier(): string {
    if (this.verifier === undefined) throw new Error("no PKCE code verifier: the login was not started here")
    return this.verifier
  }

  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): void {
    // Two requests that got a 401 at once (a POST and the event stream's GET) refresh at once: with a server that
    // rotates refresh tokens the second is refused, though the first just saved good tokens. Those are kept (the
    // SDK then retries with them) rather than dropped for a new login.
    if (scope === "tokens" && Date.now() - this.savedAt < 10_000) return
    const { tokens: _t, obtainedAt: _o, client, ...rest } = this.stored
    if (scope === "verifier" || scope === "all") this.verifier = undefined
    if (scope === "tokens") this.persist({ ...rest, ...(client === undefined ? {} : { client }) })
    else if (scope === "client") {
      const { client: _c, ...others } = this.stored
      this.persist(others)
    } else if (scope === "all") this.persist(rest)
  }
}

/** True when the entry sets its own `Authorization` header: then it is not OAuth's business. */
const hasOwnAuthorization = (config: McpConfig.HttpServer): boolean =>
  Object.keys(config.headers).some((k) => k.toLowerCase() === "authorization")

/** The headless provider of a connection (none when the entry brings its own `Authorization` header). */
export const headlessProvider = (
  server: string,
  config: McpConfig.HttpServer,
  dir: string = defaultConfigDir()
): FileOAuthProvider | undefined =>
  hasOwnAuthorization(config) ? undefined : new FileOAuthProvider(server, config, fileOf(server, config, dir))

/**
 * Renews an expired access token before connecting (a server would answer 401 and the SDK would refresh then, but
 * this spares the round trip and a server that answers 403 instead). Fails with `NeedsLogin` when the refresh
 * token is no good any more.
 */
export const refreshIfDue = (provider: FileOAuthProvider, url: string): Promise<void> =>
  provider.refreshDue(Date.now())
    ? auth(provider, { serverUrl: url }).then((result) => {
        if (result !== "AUTHORIZED") throw new NeedsLogin(provider.server)
      })
    : Promise.resolve()

// ---------------------------------------------------------------------------------------------------------------
// The login.

/** A login failed; the message names why (never a secret). */
export class LoginFailed extends Schema.TaggedError<LoginFailed>()("LoginFailed", { message: Schema.String }) {}

/** How a login talks to the user. */
export interface LoginOptions {
  /** Where the lines for the user go (the authorization URL among them). */
  readonly print: (line: string) => void
  /** How long to wait for the browser's redirect. */
  readonly timeout: Duration.DurationInput
  /** The configuration directory (default: `defaultConfigDir()`). */
  readonly configDir?: string | undefined
  /**
   * A command that opens a URL (`$BROWSER`, e.g. `firefox` or `open`): run with the authorization URL as its last
   * argument, besides printing it. Words are split at spaces; no shell is involved.
   */
  readonly browser?: string | undefined
}

/** Runs `browser URL` in the background; false when it could not be started. */
const openWith = (browser: string, url: string): boolean => {
  const [command, ...args] = browser.trim().split(/\s+/)
  if (command === undefined || command === "") return false
  try {
    const child = ChildProcess.spawn(command, [...args, url], { stdio: "ignore", detached: true })
    child.on("error", () => undefined)
    child.unref()
    return child.pid !== undefined
  } catch {
    return false
  }
}

/** What a login did. */
export interface LoginResult {
  readonly file: string
  /** How many tools the server offers once logged in. */
  readonly tools: number
  /** False when the server let us in without any authorization. */
  readonly authorized: boolean
}

const page = (title: string, text: string): string =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><p>${text.replace(/[<&>]/g, (c) => `&#${c.charCodeAt(0)};`)}</p>\n`

/**
 * The loopback listener the browser is sent back to: on 127.0.0.1 at `port` (0: any free port; a busy fixed port
 * falls back to any when `fixed` is false). `code` completes with the authorization code of the first redirect
 * whose `state` matches, or fails with the error the authorization server sent back.
 */
const loopbackListener = (server: string, port: number, fixed: boolean, state: string) =>
  Effect.gen(function* () {
    const code = yield* Deferred.make<string, LoginFailed>()
    const listen = (at: number) =>
      Effect.async<Http.Server, Error>((resume) => {
        const http = Http.createServer((req, res) => {
          const url = new URL(req.url ?? "/", "http://127.0.0.1")
          if (url.pathname !== "/callback") {
            res.writeHead(404, { "content-type": "text/plain" }).end("not found\n")
            return
          }
          const send = (status: number, title: string, text: string) =>
            res
              .writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" })
              .end(page(title, text))
          if (url.searchParams.get("state") !== state) {
            send(400, "Armature", "This redirect does not belong to the login in progress (its state does not match).")
            return
          }
          const error = url.searchParams.get("error")
          const got = url.searchParams.get("code")
          if (error !== null || got === null) {
            const description = url.searchParams.get("error_description")
            const why =
              error === null ? "no authorization code" : `${error}${description === null ? "" : `: ${description}`}`
            send(400, "Armature", `Logging in to ${server} failed (${why}).`)
            Deferred.unsafeDone(
              code,
              Effect.fail(new LoginFailed({ message: `the authorization server answered ${why}` }))
            )
            return
          }
          send(200, "Armature", `Logged in to ${server}. You can close this tab and go back to the terminal.`)
          Deferred.unsafeDone(code, Effect.succeed(got))
        })
        http.once("error", (e) => resume(Effect.fail(e)))
        http.listen(at, "127.0.0.1", () => resume(Effect.succeed(http)))
      })
    const http = yield* listen(port).pipe(
      Effect.catchAll((e) => (fixed || port === 0 ? Effect.fail(e) : listen(0))),
      Effect.mapError(
        (e) =>
          new LoginFailed({ message: `cannot listen on 127.0.0.1:${port} for the browser's redirect (${e.message})` })
      )
    )
    yield* Effect.addFinalizer(() =>
      Effect.async<void>((resume) => {
        http.closeAllConnections()
        http.close(() => resume(Effect.void))
      })
    )
    return { port: (http.address() as AddressInfo).port, code: Deferred.await(code) }
  })

const clientInfo = { name: "armature", version: "0.1.0" }

/** Connects with `provider`, counts the tools, and closes. */
const countTools = (config: McpConfig.HttpServer, provider: FileOAuthProvider) =>
  Effect.acquireUseRelease(
    Effect.sync(() => ({
      client: new Client(clientInfo),
      transport: new StreamableHTTPClientTransport(new URL(config.url), {
        authProvider: provider,
        requestInit: { headers: { ...config.headers } }
      })
    })),
    ({ client, transport }) =>
      Effect.tryPromise({
        try: async () => {
          await client.connect(transport)
          return (await client.listTools()).tools.length
        },
        catch: (e) => e
      }),
    ({ client }) => Effect.promise(() => client.close().catch(() => undefined))
  )

/**
 * Logs in to one HTTP server: a fresh authorization (stored tokens are dropped first), with the client registered
 * before if it was registered for the same redirect URL, else registered anew (or the entry's `oauth.clientId`).
 * The authorization URL goes to `print`; the browser's redirect is awaited on 127.0.0.1. Then the server is
 * connected to with the new tokens and its tools counted.
 */
export const login = (
  server: string,
  config: McpConfig.HttpServer,
  options: LoginOptions
): Effect.Effect<LoginResult, LoginFailed, Scope.Scope> =>
  Effect.gen(function* () {
    const file = fileOf(server, config, options.configDir)
    if (config.oauth?.grant === "client_credentials") {
      // A machine client needs no browser: getting its token is the login.
      const machine = new FileOAuthProvider(server, config, file)
      machine.invalidateCredentials("tokens")
      const tools = yield* countTools(config, machine).pipe(
        Effect.mapError(
          (e) =>
            new LoginFailed({
              message: machine.redact(
                `MCP server ${server} refused the client credentials: ${e instanceof Error ? e.message : String(e)}`
              )
            })
        )
      )
      return { file, tools, authorized: true }
    }
    const before = readStored(file, server, config.url)
    const fixed = config.oauth?.callbackPort
    const state = NodeCrypto.randomBytes(16).toString("base64url")
    const listener = yield* loopbackListener(
      server,
      fixed ?? McpOAuth.redirectPort(before.redirectUrl) ?? 0,
      fixed !== undefined,
      state
    )
    const redirectUrl = McpOAuth.redirectUrlFor(listener.port)
    const registeredFor = before.client?.redirect_uris
    const keepClient = Array.isArray(registeredFor) && registeredFor.includes(redirectUrl)
    yield* Effect.try({
      try: () =>
        writeStored(file, {
          server,
          url: config.url,
          redirectUrl,
          ...(keepClient && before.client !== undefined ? { client: before.client } : {})
        }),
      catch: (e) => new LoginFailed({ message: `cannot write ${file} (${e instanceof Error ? e.message : String(e)})` })
    })
    let opened = false
    const provider = new FileOAuthProvider(server, config, file, {
      redirectUrl,
      state,
      open: (url) => {
        opened = true
        options.print(`To log in to MCP server ${server}, open this URL in a browser:`)
        options.print("")
        options.print(`  ${url.href}`)
        options.print("")
        if (options.browser !== undefined && options.browser.trim() !== "" && !openWith(options.browser, url.href)) {
          options.print(`(could not start ${options.browser.trim().split(/\s+/)[0]} to open it)`)
        }
        options.print(`Waiting for the browser to come back to ${redirectUrl} …`)
      }
    })
    const failed = (what: string) => (e: unknown) =>
      new LoginFailed({ message: provider.redact(`${what}: ${e instanceof Error ? e.message : String(e)}`) })
    // The login's connection opens no server-sent-event stream (a GET of the endpoint): a server that lets
    // `initialize` through would answer that GET with a 401 too, and the SDK would start a second authorization
    // (another registration, another verifier) racing the first. A 405 tells the SDK the server has no such stream.
    const endpoint = new URL(config.url).href
    const transport = new StreamableHTTPClientTransport(new URL(config.url), {
      authProvider: provider,
      requestInit: { headers: { ...config.headers } },
      fetch: (url, init) =>
        (init?.method ?? "GET") === "GET" && new URL(url).href === endpoint
          ? Promise.resolve(new Response(null, { status: 405 }))
          : fetch(url, init)
    })
    const client = new Client(clientInfo)
    yield* Effect.addFinalizer(() => Effect.promise(() => client.close().catch(() => undefined)))
    // Some servers let `initialize` through and want a token from the next request on: the tools are listed too.
    const first = yield* Effect.either(
      Effect.tryPromise({
        try: async () => {
          await client.connect(transport)
          return (await client.listTools()).tools.length
        },
        catch: (e) => e
      })
    )
    if (Either.isRight(first)) return { file, tools: first.right, authorized: false }
    if (!opened || !(first.left instanceof UnauthorizedError)) {
      return yield* Effect.fail(failed(`cannot start the authorization with MCP server ${server}`)(first.left))
    }
    const code = yield* listener.code.pipe(
      Effect.timeoutFail({
        duration: options.timeout,
        onTimeout: () =>
          new LoginFailed({
            message: `the browser did not come back to ${redirectUrl} within ${Duration.format(Duration.decode(options.timeout))}`
          })
      })
    )
    yield* Effect.tryPromise({
      try: () => transport.finishAuth(code),
      catch: failed(`the authorization server did not hand out tokens for ${server}`)
    })
    const tools = yield* countTools(config, new FileOAuthProvider(server, config, file)).pipe(
      Effect.mapError(failed(`logged in, but MCP server ${server} still refuses the connection`))
    )
    return { file, tools, authorized: true }
  })

/** Forgets a server's credentials (the local file; the tokens are not revoked at the server). */
export const logout = (server: string, config: McpConfig.HttpServer, dir: string = defaultConfigDir()) =>
  Effect.sync(() => {
    const file = fileOf(server, config, dir)
    return { file, removed: removeStored(file) }
  })
