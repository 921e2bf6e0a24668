/**
 * What `armature serve` accepts from a request before any route sees it, and how it reads a body. In order: the
 * `Host` must name this server (421 otherwise: DNS rebinding, a request meant elsewhere); a request from a browser
 * page (`Origin`, or `Sec-Fetch-Site` saying another site) is refused (403) unless its origin was allowed with
 * `--allow-origin`, and only then are CORS headers sent; the bearer token must be given (401); a body must be JSON
 * (415) and no larger than `--max-body` (413). Every refusal is one line of JSON, `{"error": …}`.
 */
import type * as HttpApp from "@effect/platform/HttpApp"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Option, ParseResult, Schema } from "effect"
import * as ServeAccess from "../domain/ServeAccess.js"

/** What the guard lets through. */
export interface GuardOptions {
  readonly token: string
  /** The host names a `Host` header may carry (ServeAccess.allowedHostNames). */
  readonly hostNames: ReadonlySet<string>
  /** The origins (`scheme://host[:port]`) whose pages may call the API. */
  readonly allowOrigins: ReadonlySet<string>
}

/** An error reply: one line of JSON, `{ "error": message }`. */
export const failure = (status: number, message: string, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson({ error: message }, { status, headers })

/** Wraps the API: every request passes the guard's checks before `app` sees it. */
export const guard =
  (options: GuardOptions) =>
  <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R | HttpServerRequest.HttpServerRequest> =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const headers = request.headers
      const host = ServeAccess.hostNameOf(headers.host ?? "")
      if (!options.hostNames.has(host)) {
        return failure(421, `host ${host === "" ? "(none)" : host} is not this server's (--allow-host)`)
      }
      const origin = headers.origin
      const site = headers["sec-fetch-site"]
      const allowed = origin !== undefined && options.allowOrigins.has(origin)
      if (origin !== undefined && !allowed) return failure(403, `origin ${origin} is not allowed (--allow-origin)`)
      if (origin === undefined && (site === "cross-site" || site === "same-site")) {
        return failure(403, "a request from another site's page is not allowed (--allow-origin)")
      }
      const cors: Record<string, string> = allowed ? { "access-control-allow-origin": origin, vary: "origin" } : {}
      if (request.method === "OPTIONS") {
        // a browser's preflight, which carries no credentials: answered for an allowed origin only
        if (!allowed) return failure(403, "a preflight needs an origin allowed with --allow-origin")
        return HttpServerResponse.empty({
          status: 204,
          headers: {
            ...cors,
            "access-control-allow-methods": "GET, POST",
            "access-control-allow-headers": "authorization, content-type",
            "access-control-max-age": "600"
          }
        })
      }
      const given = ServeAccess.bearerOf(headers.authorization)
      if (given === undefined || !ServeAccess.tokenMatches(given, options.token)) {
        return failure(401, given === undefined ? "missing bearer token (Authorization: Bearer …)" : "wrong token", {
          ...cors,
          "www-authenticate": "Bearer"
        })
      }
      const type = headers["content-type"]
      if (request.method === "POST" && type !== undefined && ServeAccess.mediaTypeOf(type) !== "application/json") {
        return failure(415, `content-type: expected application/json, got ${ServeAccess.mediaTypeOf(type)}`, cors)
      }
      const response = yield* app
      return allowed ? HttpServerResponse.setHeaders(response, cors) : response
    })

/** The first problem of a body that does not decode, in a few words (the schema is not echoed). */
const problemOf = (error: ParseResult.ParseError): string => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  if (issue === undefined) return "invalid body"
  const path = issue.path.join(".")
  if (issue._tag === "Unexpected") return `unknown field ${path}`
  if (issue._tag === "Missing") return `${path}: missing`
  return path === "" ? issue.message : `${path}: ${issue.message.split("\n")[0]}`
}

/**
 * The JSON body of a request decoded with `schema` (unknown fields refused), read up to `maxBytes`: a 413 reply when
 * it is larger, 415 when it is not JSON, 400 when it does not decode. An empty body is `{}`.
 */
export const jsonBody = <A, I>(schema: Schema.Schema<A, I>, maxBytes: number) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const length = Number(request.headers["content-length"] ?? "0")
    const tooLarge = failure(413, `body larger than ${maxBytes} bytes (--max-body)`, { connection: "close" })
    if (length > maxBytes) return yield* Effect.fail(tooLarge)
    const text = yield* request.text.pipe(
      HttpIncomingMessage.withMaxBodySize(Option.some(maxBytes)),
      Effect.mapError((e) =>
        String(e.cause).includes("maxBytes exceeded") ? tooLarge : failure(400, `invalid body: ${e.message}`)
      )
    )
    if (text.trim() !== "" && request.headers["content-type"] === undefined) {
      return yield* Effect.fail(failure(415, "content-type: expected application/json, got none"))
    }
    const json = yield* Effect.try({
      try: (): unknown => (text.trim() === "" ? {} : JSON.parse(text)),
      catch: () => failure(400, "invalid body: not JSON")
    })
    return yield* Schema.decodeUnknown(schema, { onExcessProperty: "error" })(json).pipe(
      Effect.mapError((e) => failure(400, `invalid body: ${problemOf(e)}`))
    )
  })
