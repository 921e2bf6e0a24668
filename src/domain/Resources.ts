/**
 * What a call touches, as keys with read or write access: how two calls conflict, how a write invalidates cached
 * reads. One implementation shared by the executor's scheduler, the result cache and the permission policy.
 */
import type * as Tool from "./Tool.js"

/** A call's declared resources; a tool whose `resources` throws declares none (which is the cautious answer). */
export const resourcesOf = (tool: Tool.Any, input: unknown): ReadonlyArray<Tool.Resource> => {
  try {
    return tool.resources(input)
  } catch {
    return []
  }
}

const isPrefix = (parent: string, child: string): boolean =>
  child.startsWith(parent) && (parent.endsWith("/") || child.charAt(parent.length) === "/")

/**
 * True when two resource keys overlap: equal, or one is a path prefix of the other at a `/` boundary
 * (`/a` overlaps `/a/b`, not `/ab`).
 */
export const overlaps = (a: string, b: string): boolean => a === b || isPrefix(a, b) || isPrefix(b, a)

/** What a call claims while it runs: whether it is concurrency-safe, and the resources it declared. */
export interface Claim {
  readonly safe: boolean
  readonly resources: ReadonlyArray<Tool.Resource>
}

/**
 * True when two calls may not run together under resource scheduling: two safe calls never conflict; an unsafe
 * call that declares nothing conflicts with everything (it might touch anything); otherwise they conflict when a
 * write of one overlaps a resource of the other.
 */
export const conflicts = (a: Claim, b: Claim): boolean => {
  if (a.safe && b.safe) return false
  if (a.resources.length === 0 || b.resources.length === 0) return true
  return a.resources.some((ra) =>
    b.resources.some((rb) => (ra.access === "write" || rb.access === "write") && overlaps(ra.key, rb.key))
  )
}
