/**
 * Who may talk to `armature serve`, and what a request may choose: the pure checks behind its HTTP guard (the Host
 * and Origin a request names, the media type of its body, its bearer token) and the ceiling the runner's own flags
 * put on a session's options (a request may narrow them, never widen them). See docs/durable.md, "Security".
 */
import * as Crypto from "node:crypto"
import * as Path from "node:path"
import type { PermissionMode } from "./Permission.js"

/** The name part of a `Host` header (`name:port`, `[v6]:port`, or a bare name), lower-cased; "" when there is none. */
export const hostNameOf = (header: string): string => {
  const value = header.trim().toLowerCase()
  if (value.startsWith("[")) {
    const end = value.indexOf("]")
    return end === -1 ? "" : value.slice(0, end + 1)
  }
  const colon = value.lastIndexOf(":")
  return colon === -1 ? value : value.slice(0, colon)
}

const loopbackNames: ReadonlyArray<string> = ["localhost", "127.0.0.1", "[::1]"]

/** Whether an address or name is this machine's loopback (127.0.0.0/8, ::1, localhost). */
export const isLoopback = (name: string): boolean => {
  const bare = name.toLowerCase().replace(/^\[|\]$/g, "")
  return bare === "localhost" || bare === "::1" || /^127\.\d+\.\d+\.\d+$/.test(bare)
}

/** The `[…]`-wrapped form of an IPv6 address, as it appears in a `Host` header; other names as they are. */
const asHostName = (address: string): string =>
  address.includes(":") && !address.startsWith("[") ? `[${address.toLowerCase()}]` : address.toLowerCase()

/**
 * The host names a request may name in its `Host` header: the address the API listens on, the loopback names when
 * it listens on loopback, every local address (and the machine's name) when it listens on all of them, and the names
 * given with `--allow-host`. Anything else is a request meant for another server, or a DNS-rebinding page.
 */
export const allowedHostNames = (
  listen: string,
  allowHosts: ReadonlyArray<string>,
  localAddresses: ReadonlyArray<string>,
  machineName: string
): ReadonlySet<string> => {
  const names = new Set<string>([asHostName(listen), ...allowHosts.map(asHostName)])
  if (isLoopback(listen)) for (const name of loopbackNames) names.add(name)
  if (listen === "0.0.0.0" || listen === "::" || listen === "[::]") {
    for (const name of loopbackNames) names.add(name)
    for (const address of localAddresses) names.add(asHostName(address))
    names.add(machineName.toLowerCase())
  }
  return names
}

/** The media type of a `Content-Type` header, lower-cased, without its parameters. */
export const mediaTypeOf = (header: string): string => (header.split(";")[0] ?? "").trim().toLowerCase()

/** The token of an `Authorization: Bearer …` header, if it has that form. */
export const bearerOf = (header: string | undefined): string | undefined => {
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header ?? "")
  return match === null ? undefined : match[1]
}

const digest = (text: string): Buffer => Crypto.createHash("sha256").update(text, "utf8").digest()

/**
 * Whether `given` is `expected`, in time that does not depend on where they differ (both are hashed to 32 bytes
 * first, so their lengths do not show either).
 */
export const tokenMatches = (given: string, expected: string): boolean =>
  Crypto.timingSafeEqual(digest(given), digest(expected))

/** The shortest token `serve` accepts from ARMATURE_SERVE_TOKEN or `--token-file`. */
export const minTokenLength = 16

/**
 * The permission modes a request may ask for on a runner started in `ceiling`: that mode, or one that allows less.
 * `plan` allows only read-only calls; `dontAsk` turns every ask into a deny; `default` asks (and a runner has nobody
 * to ask); `acceptEdits` adds edits inside the working directories; `bypassPermissions` allows what no rule stops.
 */
export const narrowerModes: Readonly<Record<PermissionMode, ReadonlyArray<PermissionMode>>> = {
  bypassPermissions: ["bypassPermissions", "acceptEdits", "default", "dontAsk", "plan"],
  acceptEdits: ["acceptEdits", "default", "dontAsk", "plan"],
  default: ["default", "dontAsk", "plan"],
  dontAsk: ["dontAsk"],
  plan: ["plan"]
}

/** Whether `path` is `root` or inside it (both absolute and resolved; no `..` walks out). */
export const isInside = (root: string, path: string): boolean => {
  const relative = Path.relative(root, path)
  return relative === "" || (!relative.startsWith("..") && !Path.isAbsolute(relative))
}

/** What a runner's own flags allow a session: the ceiling of a request's choices. */
export interface Ceiling {
  /** `--permission-mode`, or `default` when none was given. */
  readonly permissionMode: PermissionMode
  /** The runner's allow rules (`--allowed-tools`), one rule each. */
  readonly allowedTools: ReadonlyArray<string>
  /** `--max-turns`. */
  readonly maxTurns: number
}

/** The choices of a request that the ceiling bounds. */
export interface Choices {
  readonly permissionMode?: PermissionMode | undefined
  /** Allow rules, one rule each. */
  readonly allowedTools?: ReadonlyArray<string> | undefined
  readonly maxTurns?: number | undefined
}

/**
 * Why a request's choices would widen what the runner was started with, naming the body field, or `undefined` when
 * they stay within it: a permission mode that allows no more than the runner's, allow rules among the runner's own,
 * no more turns than its `--max-turns`.
 */
export const widening = (ceiling: Ceiling, choices: Choices): string | undefined => {
  const mode = choices.permissionMode
  if (mode !== undefined && !narrowerModes[ceiling.permissionMode].includes(mode)) {
    return `permission_mode: ${mode} allows more than the runner's ${ceiling.permissionMode} (--permission-mode)`
  }
  const extra = (choices.allowedTools ?? []).find((rule) => !ceiling.allowedTools.includes(rule))
  if (extra !== undefined) return `allowed_tools: ${extra} is not among the runner's --allowed-tools`
  if (choices.maxTurns !== undefined && choices.maxTurns > ceiling.maxTurns) {
    return `max_turns: ${choices.maxTurns} is more than the runner's ${ceiling.maxTurns} (--max-turns)`
  }
  return undefined
}
