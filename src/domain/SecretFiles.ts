/**
 * Built-in protection of well-known secret files (docs/permissions.md, "Secret files"): a Read *ask* rule for each,
 * added to the effective settings unless a settings file sets `"permissions": {"protectSecrets": false}` (on by
 * default, issue 29 item 8), minus what an allow rule names. Only contents are protected: listing, `ls`, `stat`,
 * `test -f` and Glob see their names freely; Grep leaves the files out and says so.
 */
import * as PermissionRule from "./PermissionRule.js"

/** Where the built-in rules come from, as `permissions check` shows it. */
export const source = "built-in secret protection (permissions.protectSecrets)"

/** Each protected pattern with a file name it matches (used to see whether an allow rule names it). */
export const patterns: ReadonlyArray<{ readonly rule: string; readonly sample: string }> = [
  { rule: "Read(**/.env)", sample: ".env" },
  { rule: "Read(**/.env.*)", sample: ".env.local" },
  { rule: "Read(**/*.pem)", sample: "server.pem" },
  { rule: "Read(**/*.key)", sample: "server.key" },
  { rule: "Read(**/*.p12)", sample: "cert.p12" },
  { rule: "Read(**/*.pfx)", sample: "cert.pfx" },
  { rule: "Read(**/id_rsa*)", sample: "id_rsa" },
  { rule: "Read(**/id_ecdsa*)", sample: "id_ecdsa" },
  { rule: "Read(**/id_ed25519*)", sample: "id_ed25519" },
  { rule: "Read(**/.aws/credentials)", sample: ".aws/credentials" },
  { rule: "Read(**/.npmrc)", sample: ".npmrc" },
  { rule: "Read(**/.netrc)", sample: ".netrc" },
  { rule: "Read(**/.pgpass)", sample: ".pgpass" },
  { rule: "Read(**/.git-credentials)", sample: ".git-credentials" },
  { rule: "Read(~/.aws/credentials)", sample: ".aws/credentials" },
  { rule: "Read(~/.npmrc)", sample: ".npmrc" },
  { rule: "Read(~/.netrc)", sample: ".netrc" },
  { rule: "Read(~/.pgpass)", sample: ".pgpass" },
  { rule: "Read(~/.git-credentials)", sample: ".git-credentials" },
  { rule: "Read(~/.ssh/**)", sample: ".ssh/id_rsa" }
]

/** The last path segments of a rule's pattern as a matcher (`./secrets/*.pem` → `*.pem`). */
const tail = (content: string): RegExp | undefined => {
  const last = content.replace(/\/+$/, "").split("/").pop() ?? ""
  if (last === "" || last === "**") return undefined
  const source = last
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*")
  return new RegExp(`^${source}$`)
}

/** True when an allow rule names files like this sample: a tool-wide Read allow, or a Read rule whose last segment matches it. */
const allowedBy = (allow: ReadonlyArray<PermissionRule.Rule>, sample: string): boolean =>
  allow.some((rule) => {
    if (rule.tool !== "Read") return false
    if (rule.content === undefined || rule.content === "*" || rule.content === "**") return true
    const last = sample.split("/").pop() ?? sample
    return tail(rule.content)?.test(last) === true
  })

/** The built-in ask rules that apply given the allow rules. */
export const rules = (allow: ReadonlyArray<PermissionRule.Rule>): ReadonlyArray<PermissionRule.Rule> =>
  patterns.flatMap(({ rule, sample }) => {
    if (allowedBy(allow, sample)) return []
    const parsed = PermissionRule.parse(rule, { behavior: "ask", source, root: "/" })
    return parsed._tag === "Right" ? [parsed.right] : []
  })
