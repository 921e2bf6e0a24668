/**
 * `mcp serve --http PORT`: the MCP server over Streamable HTTP, one session (and one SDK Server) per client.
 *
 * It listens on 127.0.0.1 unless told otherwise, and refuses (403) any request whose `Host` or `Origin` names
 * another host than the loopback names or the one it listens on: a web page that rebinds its own domain to
 * 127.0.0.1 cannot reach it.
 */
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { Deferred, Effect, FiberSet, type Scope } from "effect"
import type { PermissionPolicy } from "../../services/PermissionPolicy.js"
import type { ToolExecutor } from "../../services/ToolExecutor.js"
import type { ToolRegistry } from "../../services/ToolRegistry.js"
import * as McpServer from "./McpServer.js"

/** Where to listen. */
export interface HttpOptions {
  readonly port: number
  /** Default 127.0.0.1. */
  readonly host?: string | undefined
  /** Called once listening, with the actual port (useful with port 0). */
  readonly onListening?: ((address: { readonly host: string; readonly port: number }) => void) | undefined
}

/** The endpoint path. */
export const endpoint = "/mcp"

const loopbackNames = ["127.0.0.1", "localhost", "[::1]"]

const hostnameOf = (value: string, withScheme: boolean): string | undefined => {
  try {
    return new URL(withScheme ? value : `http://${value}`).hostname.toLowerCase()
  } catch {
    return undefined
  }
}

/**
 * Why a request must be refused to defend against DNS rebinding, or undefined when it may go on: its `Host` must
 * name an allowed host, and its `Origin`, when present, too.
 */
const rebindingCheck = (headers: Http.IncomingHttpHeaders, allowedHosts: ReadonlyArray<string>): string | undefined => {
  const allowed = new Set(allowedHosts.map((h) => hostnameOf(h, false) ?? h))
  const host = headers.host === undefined ? undefined : hostnameOf(headers.host, false)
  if (host === undefined || !allowed.has(host)) return `Host ${JSON.stringify(headers.host ?? "")} is not allowed`
  const origin = headers.origin
  if (origin !== undefined) {
    const name = hostnameOf(origin, true)
    if (name === undefined || !allowed.has(name)) return `Origin ${JSON.stringify(origin)} is not allowed`
  }
  return undefined
}

const refuse = (res: Http.ServerResponse, status: number, message: string): void => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message } }))
}

/** Serves until the scope closes (SIGINT/SIGTERM for the CLI); closing ends every session and its calls. */
export const serveHttp = (
  options: HttpOptions
): Effect.Effect<void, Error, ToolRegistry | ToolExecutor | PermissionPolicy | Scope.Scope> =>
  Effect.gen(function* () {
    const host = options.host ?? "127.0.0.1"
    const allowedHosts = [...loopbackNames, host]
    const run = yield* FiberSet.makeRuntime<ToolRegistry | ToolExecutor | PermissionPolicy>()
    const sessions = new Map<string, StreamableHTTPServerTransport>()

    /** A new session's transport, connected to its own Server in a fiber of the FiberSet. */
    const open = async (): Promise<StreamableHTTPServerTransport> => {
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, transport)
        }
      })
      transport.onclose = () => {
        if (transport.sessionId !== undefined) sessions.delete(transport.sessionId)
      }
      const connected = Deferred.unsafeMake<void>(undefined as never)
      run(
        Effect.scoped(McpServer.connect(transport, { onConnected: () => Deferred.unsafeDone(connected, Effect.void) }))
      )
      await Effect.runPromise(Deferred.await(connected))
      return transport
    }

    const handle = async (req: Http.IncomingMessage, res: Http.ServerResponse): Promise<void> => {
      const refused = rebindingCheck(req.headers, allowedHosts)
      if (refused !== undefined) return refuse(res, 403, `Forbidden: ${refused}`)
      const path = (req.url ?? "/").split("?")[0]
      if (path !== endpoint) return refuse(res, 404, `Not found: the MCP endpoint is ${endpoint}`)
      const id = req.headers["mcp-session-id"]
      if (typeof id === "string") {
        const transport = sessions.get(id)
        if (transport === undefined) return refuse(res, 404, "Session not found")
        return transport.handleRequest(req, res)
      }
      if (req.method !== "POST") return refuse(res, 400, "Bad Request: no session; initialize with a POST first")
      const transport = await open()
      await transport.handleRequest(req, res)
      // Anything but an initialize request leaves the transport without a session: drop it.
      if (transport.sessionId === undefined) await transport.close()
    }

    const server = Http.createServer((req, res) => {
      handle(req, res).catch((e: unknown) => {
        if (!res.headersSent) refuse(res, 500, `Internal error: ${e instanceof Error ? e.message : String(e)}`)
        else res.end()
      })
    })
    yield* Effect.acquireRelease(
      Effect.async<AddressInfo, Error>((resume) => {
        server.once("error", (e) =>
          resume(Effect.fail(new Error(`Cannot listen on ${host}:${options.port}: ${e.message}`)))
        )
        server.listen(options.port, host, () => resume(Effect.succeed(server.address() as AddressInfo)))
      }).pipe(Effect.tap((address) => Effect.sync(() => options.onListening?.({ host, port: address.port })))),
      () =>
        Effect.async<void>((resume) => {
          server.close(() => resume(Effect.void))
          server.closeAllConnections()
        })
    )
    return yield* Effect.never
  })
