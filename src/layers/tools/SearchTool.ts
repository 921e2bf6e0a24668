/**
 * What the search tools (Glob, Grep) share as tools: they only read, run beside anything, and read the tree under
 * an absolute `path` (a relative or absent path is resolved against the call's working directory at run time, so
 * it declares nothing up front).
 */
import * as Path from "node:path"
import type { Resource } from "../../domain/Tool.js"

/** The flags and resources of a tree-reading search tool, spread into `Tool.make`. */
export const searchFlags = {
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  resources: (input: { readonly path?: string | undefined }): ReadonlyArray<Resource> =>
    input.path !== undefined && Path.isAbsolute(input.path) ? [{ key: Path.resolve(input.path), access: "read" }] : []
} as const
