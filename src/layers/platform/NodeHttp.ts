/**
 * Node's undici HTTP client (`NodeHttpClient.layerUndici` of `@effect/platform-node`), for WebFetch, which loads
 * this module on its first request. Like NodePlatform.ts, the library build bundles the module this file imports
 * into dist/ (with `undici` itself a dependency of the package), so the library needs no `@effect/platform-node`.
 */
import type { HttpClient } from "@effect/platform"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import type { Layer } from "effect"

/** An HttpClient over undici, with its own connection pool (closed with the layer's scope). */
export const layerUndici: Layer.Layer<HttpClient.HttpClient> = NodeHttpClient.layerUndici
