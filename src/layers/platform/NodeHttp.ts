/**
 * WebFetch's HTTP client: Node's own fetch (undici, built into Node) through `@effect/platform`'s FetchHttpClient,
 * with redirects returned rather than followed (WebFetch follows same-host redirects itself and reports the
 * others). WebFetch loads this module on its first request. Node's built-in client, not the undici package or
 * `@effect/platform-node`'s client over it: those were 2 MB of dependencies for the same protocol code.
 */
import { FetchHttpClient, type HttpClient } from "@effect/platform"
import { Layer } from "effect"

/** An HttpClient over Node's fetch that does not follow redirects. */
export const layerUndici: Layer.Layer<HttpClient.HttpClient> = FetchHttpClient.layer.pipe(
  Layer.provide(Layer.succeed(FetchHttpClient.RequestInit, { redirect: "manual" }))
)
