/**
 * WebFetch: HTTP(S) GET of one URL, HTML turned into Markdown (docs/tools.md). Redirects are followed by hand so a
 * redirect to another host is reported to the model instead of followed; the body is capped and the whole
 * fetch is under a timeout.
 */
import { STATUS_CODES } from "node:http"
import { HttpClient, type HttpClientError, HttpClientRequest } from "@effect/platform"
import { Chunk, Context, Duration, Effect, Layer, Schema, Stream } from "effect"
import type TurndownService from "turndown"
import { ToolValidationError } from "../../domain/Errors.js"
import * as Tool from "../../domain/Tool.js"
import * as Vendored from "../platform/Vendored.js"
import * as ToolRegistryLive from "../registry/ToolRegistryLive.js"

/** The most redirects followed for one fetch. */
const maxRedirects = 10

/** The most bytes of a body read (10 MiB); the rest is not downloaded. */
export const maxBodyBytes = 10 * 1024 * 1024

/** The time limit of one fetch, redirects and body included. */
const defaultTimeout = Duration.seconds(30)

/** The longest URL accepted. */
const maxUrlLength = 2000

const Input = Schema.Struct({
  url: Schema.String.annotations({
    description: "The absolute http:// or https:// URL to fetch."
  }),
  prompt: Schema.optional(
    Schema.String.annotations({
      description: "What you want to learn from the page; it is repeated at the top of the result."
    })
  )
})
type Input = typeof Input.Type

const Page = Schema.TaggedStruct("Page", {
  url: Schema.String,
  final_url: Schema.String,
  status: Schema.Number,
  status_text: Schema.String,
  content_type: Schema.String,
  bytes: Schema.Number,
  truncated: Schema.Boolean,
  content: Schema.String,
  prompt: Schema.optional(Schema.String)
})

const Redirect = Schema.TaggedStruct("Redirect", {
  original_url: Schema.String,
  redirect_url: Schema.String,
  status: Schema.Number,
  status_text: Schema.String
})

/** The output: a page's content, or a cross-host redirect that was not followed. */
const Output = Schema.Union(Page, Redirect)
type Output = typeof Output.Type

/** Options of the tool. */
export interface Options {
  /** Time limit of one fetch (default 30 s). */
  readonly timeout?: Duration.DurationInput | undefined
  /** Body cap in bytes (default 10 MiB). */
  readonly maxBodyBytes?: number | undefined
}

const description = `Fetches a URL over HTTP(S) and returns its content, with HTML converted to Markdown.

Plain text and JSON are returned as they are.

When to use it: to read documentation, an issue, an API response or any page whose URL you know (from the user,
from a file, or from an earlier result). When not to use it: for local files (use the file tools), for pages
that need a login or cookies (they will not work), or to guess URLs you have not seen. If an MCP tool offers
web access with better authentication, prefer it.

Parameters:
- url: an absolute http:// or https:// URL (at most ${maxUrlLength} characters, no user:password part).
- prompt: optional; what you are looking for in the page. It is shown at the top of the result so long pages
  stay focused; the whole content is still returned.

Behaviour: redirects on the same host are followed (at most ${maxRedirects}). A redirect to a different host is NOT
followed: the result says "REDIRECT DETECTED" and gives the redirect URL; call WebFetch again with that URL if
you still want it. Bodies above 10 MiB are cut; the fetch gives up after 30 seconds. Non-2xx statuses are
errors that give the status. Binary content (images, PDFs, archives) is refused.

Result: a short header (URL, status, content type, and your prompt) and the content. Large pages may be saved to
a file and previewed. This tool is read-only and may run beside other read-only calls.

Misuse: fetching the same URL repeatedly in a loop, or fetching URLs built from secrets or private data.`

const statusText = (status: number): string => STATUS_CODES[status] ?? ""

const isRedirect = (status: number): boolean => [301, 302, 303, 307, 308].includes(status)

const withoutWww = (hostname: string): string => (hostname.startsWith("www.") ? hostname.slice(4) : hostname)

/** A redirect is followed only to the same protocol, port and host (ignoring a leading `www.`). */
export const isPermittedRedirect = (from: URL, to: URL): boolean =>
  from.protocol === to.protocol &&
  from.port === to.port &&
  to.username === "" &&
  to.password === "" &&
  withoutWww(from.hostname) === withoutWww(to.hostname)

const parseUrl = (url: string): URL | undefined => (URL.canParse(url) ? new URL(url) : undefined)

/** Checks the URL before anything is fetched. */
const checkUrl = (url: string): Effect.Effect<URL, ToolValidationError> => {
  if (url.length > maxUrlLength) {
    return Effect.fail(
      new ToolValidationError({ message: `URL is too long (${url.length} characters; the limit is ${maxUrlLength})` })
    )
  }
  const parsed = parseUrl(url)
  if (parsed === undefined) return Effect.fail(new ToolValidationError({ message: `Invalid URL: ${url}` }))
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return Effect.fail(
      new ToolValidationError({
        message: `Unsupported URL protocol "${parsed.protocol}": WebFetch only fetches http:// and https:// URLs`
      })
    )
  }
  if (parsed.username !== "" || parsed.password !== "") {
    return Effect.fail(new ToolValidationError({ message: "URLs with a user name or password are not supported" }))
  }
  return Effect.succeed(parsed)
}

// turndown and its DOM parser are loaded with the first HTML page, not when the CLI starts.
let turndown: TurndownService | undefined
const converter = (): TurndownService => {
  if (turndown === undefined) {
    const Turndown = Vendored.load<typeof TurndownService>("turndown.cjs", "turndown")
    turndown = new Turndown({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-" })
    turndown.remove(["script", "style", "noscript", "template"])
  }
  return turndown
}

/** Turns HTML into Markdown. */
const htmlToMarkdown = (html: string): string => converter().turndown(html)

const mimeOf = (contentType: string): string => contentType.split(";")[0].trim().toLowerCase()

const isHtml = (mime: string): boolean => mime === "text/html" || mime === "application/xhtml+xml"

const isText = (mime: string): boolean =>
  mime === "" ||
  mime.startsWith("text/") ||
  mime.endsWith("+json") ||
  mime.endsWith("+xml") ||
  ["application/json", "application/xml", "application/javascript", "application/x-ndjson"].includes(mime)

/** The request, or the reading of its body, failed on the way (network, TLS, DNS, a body cut short). */
export class FetchFailed extends Schema.TaggedError<FetchFailed>()("FetchFailed", {
  message: Schema.String,
  url: Schema.String
}) {}

/** A redirect could not be followed: it has no valid Location header, or there were too many. */
export class RedirectFailed extends Schema.TaggedError<RedirectFailed>()("RedirectFailed", {
  message: Schema.String,
  url: Schema.String
}) {}

/** The server answered with a status outside 2xx. */
export class HttpStatusFailed extends Schema.TaggedError<HttpStatusFailed>()("HttpStatusFailed", {
  message: Schema.String,
  url: Schema.String,
  status: Schema.Number
}) {}

/** The content is neither HTML nor text. */
export class UnsupportedContent extends Schema.TaggedError<UnsupportedContent>()("UnsupportedContent", {
  message: Schema.String,
  url: Schema.String,
  mime: Schema.String
}) {}

/** The fetch took longer than the time limit. */
export class FetchTimedOut extends Schema.TaggedError<FetchTimedOut>()("FetchTimedOut", {
  message: Schema.String,
  url: Schema.String,
  timeoutMs: Schema.Number
}) {}

/** What WebFetch fails with: a URL it refuses, or one of its own failures (none transient). */
export const Failure = Schema.Union(
  ToolValidationError,
  FetchFailed,
  RedirectFailed,
  HttpStatusFailed,
  UnsupportedContent,
  FetchTimedOut
)

const describe = (error: HttpClientError.HttpClientError): string => {
  const cause = error.cause
  if (cause instanceof Error) {
    const code = (cause as Error & { readonly code?: unknown }).code
    return typeof code === "string" ? `${cause.message} (${code})` : cause.message
  }
  return error.message
}

/** The result text of a cross-host redirect. */
const redirectText = (r: { original_url: string; redirect_url: string; status: number; status_text: string }) =>
  `REDIRECT DETECTED: The URL redirects to a different host.\n\nOriginal URL: ${r.original_url}\nRedirect URL: ${r.redirect_url}\nStatus: ${r.status} ${r.status_text}\n\nThe redirect was not followed. To fetch the content, call WebFetch again with the redirect URL.`

/** The result text of a fetched page. */
const pageText = (p: Omit<typeof Page.Type, "_tag">, capBytes: number = maxBodyBytes): string => {
  const header = [
    `URL: ${p.final_url}`,
    ...(p.final_url === p.url ? [] : [`Redirected from: ${p.url}`]),
    `Status: ${p.status} ${p.status_text}`,
    `Content-Type: ${p.content_type}`,
    ...(p.prompt === undefined ? [] : [`Prompt: ${p.prompt}`])
  ].join("\n")
  const note = p.truncated
    ? `\n\n[Content truncated: the response is larger than ${capBytes} bytes; only the first ${capBytes} bytes were read.]`
    : ""
  return `${header}\n\n${p.content}${note}`
}

/** Makes the WebFetch tool over an HttpClient captured when the layer is built. */
export const make = (options: Options = {}) =>
  Effect.gen(function* () {
    const client = HttpClient.withScope(yield* HttpClient.HttpClient)
    const timeout = Duration.decode(options.timeout ?? defaultTimeout)
    const cap = options.maxBodyBytes ?? maxBodyBytes

    const readBody = (url: string, stream: Stream.Stream<Uint8Array, HttpClientError.ResponseError>) =>
      Stream.runFoldWhile(
        stream,
        { chunks: Chunk.empty<Uint8Array>(), size: 0 },
        (acc) => acc.size <= cap,
        (acc, chunk) => ({ chunks: Chunk.append(acc.chunks, chunk), size: acc.size + chunk.length })
      ).pipe(
        Effect.map((acc) => {
          const body = Buffer.concat(Chunk.toReadonlyArray(acc.chunks))
          return { body: body.subarray(0, cap), truncated: acc.size > cap }
        }),
        Effect.mapError(
          (error) => new FetchFailed({ url, message: `Failed to read the body of ${url}: ${describe(error)}` })
        )
      )

    const fetch = (input: Input) =>
      Effect.gen(function* () {
        let current = yield* checkUrl(input.url)
        let redirects = 0
        while (true) {
          const url = current.toString()
          const response = yield* client
            .execute(
              HttpClientRequest.get(current).pipe(
                HttpClientRequest.setHeaders({
                  "user-agent": "Armature-WebFetch/0.1",
                  accept: "text/markdown, text/html;q=0.9, text/plain;q=0.8, */*;q=0.5"
                })
              )
            )
            .pipe(
              Effect.mapError(
                (error) => new FetchFailed({ url, message: `Failed to fetch ${url}: ${describe(error)}` })
              )
            )
          const status = response.status
          if (isRedirect(status)) {
            const location = response.headers.location
            const next =
              location === undefined ? undefined : URL.canParse(location, url) ? new URL(location, url) : undefined
            if (next === undefined) {
              return yield* new RedirectFailed({
                url,
                message: `Redirect ${status} from ${url} has no valid Location header${location === undefined ? "" : `: ${location}`}`
              })
            }
            if (!isPermittedRedirect(current, next)) {
              return {
                _tag: "Redirect",
                original_url: input.url,
                redirect_url: next.toString(),
                status,
                status_text: statusText(status)
              } satisfies Output
            }
            if (redirects >= maxRedirects) {
              return yield* new RedirectFailed({
                url,
                message: `Too many redirects fetching ${input.url} (more than ${maxRedirects})`
              })
            }
            redirects++
            current = next
            continue
          }
          if (status < 200 || status > 299) {
            return yield* new HttpStatusFailed({
              url,
              status,
              message: `Request to ${url} failed with status ${status} ${statusText(status)}`.trimEnd()
            })
          }
          const contentType = response.headers["content-type"] ?? ""
          const mime = mimeOf(contentType)
          if (!isHtml(mime) && !isText(mime)) {
            return yield* new UnsupportedContent({
              url,
              mime,
              message: `WebFetch cannot read content of type ${mime} (from ${url})`
            })
          }
          const { body, truncated } = yield* readBody(url, response.stream)
          const text = new TextDecoder("utf-8").decode(body)
          return {
            _tag: "Page",
            url: input.url,
            final_url: url,
            status,
            status_text: statusText(status),
            content_type: contentType === "" ? "(none)" : contentType,
            bytes: body.length,
            truncated,
            content: isHtml(mime) ? htmlToMarkdown(text) : text,
            ...(input.prompt === undefined ? {} : { prompt: input.prompt })
          } satisfies Output
        }
      }).pipe(
        Effect.scoped,
        Effect.timeoutFail({
          duration: timeout,
          onTimeout: () =>
            new FetchTimedOut({
              url: input.url,
              timeoutMs: Duration.toMillis(timeout),
              message: `WebFetch timed out after ${Duration.toMillis(timeout)} ms fetching ${input.url}`
            })
        })
      )

    return yield* Tool.make({
      name: "WebFetch",
      description,
      input: Input,
      output: Output,
      category: "network",
      shouldDefer: true,
      searchHint: "http https url web page download fetch internet browse documentation",
      isReadOnly: () => true,
      isConcurrencySafe: () => true,
      interruptBehavior: "cancel",
      validate: (input) => Effect.asVoid(checkUrl(input.url)),
      resources: (input) => {
        const parsed = parseUrl(input.url)
        return parsed === undefined ? [] : [{ key: `url:${parsed.host}`, access: "read" }]
      },
      summarize: (input) => input.url,
      failure: Failure,
      call: fetch,
      toResult: (output) => (output._tag === "Redirect" ? redirectText(output) : pageText(output, cap))
    })
  })

/** Registers WebFetch over a given HttpClient layer (tests, proxies, custom agents). Needs the ToolRegistry. */
export const layerWith = (options: Options = {}) => ToolRegistryLive.register(make(options))

/**
 * Node's undici HTTP client, loaded (with its connection pool) on the first request rather than when the engine is
 * built: undici is a megabyte of code that most sessions never use.
 */
const lazyUndici: Layer.Layer<HttpClient.HttpClient> = Layer.scoped(
  HttpClient.HttpClient,
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    const client = yield* Effect.cached(
      Effect.promise(() => import("../platform/NodeHttp.js")).pipe(
        Effect.flatMap((NodeHttp) => Layer.buildWithScope(NodeHttp.layerUndici, scope)),
        Effect.map((context) => Context.get(context, HttpClient.HttpClient))
      )
    )
    return HttpClient.makeWith<never, never, HttpClientError.HttpClientError, never>(
      (request) => Effect.flatMap(Effect.zip(client, request), ([undici, req]) => undici.execute(req)),
      (request: HttpClientRequest.HttpClientRequest) => Effect.succeed(request)
    )
  })
)

/** Registers WebFetch with Node's undici HTTP client. Needs only the ToolRegistry. */
export const layer = layerWith().pipe(Layer.provide(lazyUndici))
