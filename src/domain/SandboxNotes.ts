/**
 * The note added to a Bash result when the sandbox refused something the command tried: which paths it could not
 * write, which hosts it could not reach, and what the model may do about it (retry outside the sandbox through an
 * approval, or ask for the settings to change). Pure: it reads the runtime's violation records and the command's
 * output.
 */
import type * as SandboxDomain from "./Sandbox.js"

/** What the sandbox refused, as far as the records and the output tell. */
export interface Refusals {
  readonly paths: ReadonlyArray<string>
  readonly hosts: ReadonlyArray<string>
  /** The output shows a failed connection that did not go through the proxy (no network inside the sandbox). */
  readonly network: boolean
}

const readOnlyPatterns: ReadonlyArray<RegExp> = [
  // touch: cannot touch '/x': Read-only file system · bash: /x: Read-only file system
  /(?:'([^'\n]+)'|"([^"\n]+)"|([^\s:'"]+)): Read-only file system/g,
  // Python: [Errno 30] Read-only file system: '/x' · Node: EROFS: read-only file system, open '/x'
  /[Rr]ead-only file system[:,] (?:\w+ )?'([^'\n]+)'/g
]

const networkFailure =
  /Couldn't connect to server|Could not resolve host|Network is unreachable|Temporary failure in name resolution|ENETUNREACH|EAI_AGAIN|ENOTFOUND|ECONNREFUSED/

const blockedByProxy = /Connection blocked by network allowlist|blocked-by-sandbox-runtime/

/** Reads the refusals from the runtime's violation lines and the command's output. */
export const refusals = (violations: ReadonlyArray<string>, output: string): Refusals => {
  const paths = new Set<string>()
  const hosts = new Set<string>()
  for (const line of violations) {
    const net = /^deny network-outbound (\S+)/.exec(line)
    if (net !== null) hosts.add(net[1])
    else {
      const fs = /^deny \S+ (\/.*)$/.exec(line)
      if (fs !== null) paths.add(fs[1])
    }
  }
  for (const pattern of readOnlyPatterns) {
    for (const match of output.matchAll(pattern)) {
      const path = match.slice(1).find((g) => g !== undefined)
      if (path !== undefined) paths.add(path)
    }
  }
  const blocked = blockedByProxy.test(output)
  return {
    paths: [...paths],
    hosts: [...hosts],
    network: hosts.size === 0 && (blocked || networkFailure.test(output))
  }
}

const list = (items: ReadonlyArray<string>, none: string): string => (items.length === 0 ? none : items.join(", "))

/** The note for a result, or undefined when nothing points at the sandbox. */
export const note = (
  config: SandboxDomain.Config,
  policy: SandboxDomain.Policy,
  found: Refusals,
  /** The command failed; for a success, a failed connection that the records do not name is not mentioned. */
  failed = true
): string | undefined => {
  const parts: Array<string> = []
  if (found.paths.length > 0) {
    parts.push(
      `writing ${found.paths.join(", ")} (the sandbox lets commands write only under ${list(policy.allowWrite, "no path")})`
    )
  }
  if (found.hosts.length > 0) {
    parts.push(
      `connecting to ${found.hosts.join(", ")} (allowed hosts: ${list(policy.allowedDomains, "none")}; connections go through the sandbox's proxy)`
    )
  } else if (found.network && failed) {
    parts.push(
      `a network connection, probably (inside the sandbox there is no network except through its proxy, which allows only ${list(policy.allowedDomains, "no host")})`
    )
  }
  if (parts.length === 0) return undefined
  const retry = config.allowUnsandboxedCommands
    ? 'If the command really needs this, retry it with "dangerouslyDisableSandbox": true: the user will be asked to approve running it outside the sandbox. Otherwise ask the user to add the path or host to the sandbox settings (Edit(...) or WebFetch(domain:...) allow rules, or sandbox.filesystem / sandbox.network).'
    : "Running outside the sandbox is turned off (sandbox.allowUnsandboxedCommands is false): ask the user to add the path or host to the sandbox settings (Edit(...) or WebFetch(domain:...) allow rules, or sandbox.filesystem / sandbox.network)."
  return `[sandbox] The command ran in the OS sandbox, which refused ${parts.join("; and ")}. ${retry}`
}
