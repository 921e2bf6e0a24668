import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import * as PermissionRule from "../../src/domain/PermissionRule.js"
import * as ProtectedPaths from "../../src/domain/ProtectedPaths.js"
import * as SandboxDomain from "../../src/domain/Sandbox.js"
import * as SandboxNotes from "../../src/domain/SandboxNotes.js"
import * as SandboxPolicy from "../../src/domain/SandboxPolicy.js"
import * as Settings from "../../src/domain/Settings.js"

const rules = (behavior: "allow" | "deny", texts: ReadonlyArray<string>) =>
  Either.getOrThrow(PermissionRule.parseAll(texts, { behavior, source: "settings.json", root: "/proj" }))

const permissions = (allow: ReadonlyArray<string>, deny: ReadonlyArray<string>): Settings.Permissions => ({
  allow: rules("allow", allow),
  ask: [],
  deny: rules("deny", deny),
  defaultMode: "default",
  additionalDirectories: ["/data/shared"]
})

describe("the sandbox policy derived from permission rules", () => {
  const policy = SandboxPolicy.derive({
    permissions: permissions(
      ["Edit(/build/**)", "Edit(//var/cache/app/)", "Edit(**/*.ts)", "WebFetch(domain:example.com)", "Bash"],
      ["Read(./secrets/**)", "Read(~/.ssh)", "Edit(/src/generated)", "WebFetch(domain:evil.test)"]
    ),
    section: {
      filesystem: { allowWrite: ["~/tmp-out", "out"], denyRead: ["/etc/shadow"] },
      network: { allowedDomains: ["*.npmjs.org"], allowLocalBinding: true }
    },
    cwd: "/proj/sub",
    home: "/home/u",
    protectedDirs: ["/proj/.claude", "/proj/.armature"]
  })

  it("makes the working directories, Edit allow rules and sandbox.filesystem.allowWrite writable", () => {
    expect(policy.allowWrite).toEqual([
      "/proj/sub",
      "/data/shared",
      "/proj/build",
      "/var/cache/app",
      "/home/u/tmp-out",
      "/proj/sub/out"
    ])
  })

  it("keeps settings and the state directory read-only, the protected paths below each writable directory, and Edit deny rules", () => {
    expect(policy.denyWrite).toEqual([
      "/proj/.claude",
      "/proj/.armature",
      ...SandboxPolicy.protectedWrites(policy.allowWrite),
      "/proj/src/generated"
    ])
  })

  it("keeps every entry of the one protected list read-only below every writable directory", () => {
    for (const root of policy.allowWrite) {
      for (const entry of ProtectedPaths.entries) {
        for (const rel of entry.sandbox) expect(policy.denyWrite).toContain(Path.join(root, rel))
      }
    }
    // .git itself stays writable (git writes it); its hooks and config do not
    expect(policy.denyWrite).toContain("/proj/sub/.git/hooks")
    expect(policy.denyWrite).toContain("/proj/sub/.git/config")
    expect(policy.denyWrite).not.toContain("/proj/sub/.git")
    expect(policy.denyWrite).toContain("/home/u/tmp-out/.bashrc")
    expect(policy.denyWrite).toContain("/proj/sub/.config/fish")
  })

  it("leaves out protected paths below an existing file (a worktree's .git file cannot hold hooks)", () => {
    const paths = SandboxPolicy.protectedWrites(["/w"], (path) => path === "/w/.git")
    expect(paths).not.toContain("/w/.git/hooks")
    expect(paths).not.toContain("/w/.git/config")
    expect(paths).toContain("/w/.husky")
  })

  it("makes Read deny rules unreadable (globs kept: the runtime expands them)", () => {
    expect(policy.denyRead).toEqual(["/proj/sub/secrets", "/home/u/.ssh", "/etc/shadow"])
  })

  it("takes allowed and denied hosts from WebFetch(domain:…) rules and sandbox.network", () => {
    expect(policy.allowedDomains).toEqual(["example.com", "*.npmjs.org"])
    expect(policy.deniedDomains).toEqual(["evil.test"])
    expect(policy.allowLocalBinding).toBe(true)
  })

  it("names a rule it cannot express (a glob cannot be a bind mount)", () => {
    expect(policy.warnings).toEqual([
      "Edit(**/*.ts) in settings.json: a pattern with wildcards cannot be made writable in the sandbox on Linux (it needs a literal path); the file tools still apply the rule"
    ])
  })
})

describe("how a command runs", () => {
  const on = SandboxDomain.resolve({ enabled: true, excludedCommands: ["docker", "npm run e2e:*"] })
  const ready: SandboxDomain.Availability = { _tag: "Ready" }
  const missing: SandboxDomain.Availability = { _tag: "Unavailable", reasons: ["bubblewrap (bwrap) not installed"] }

  it("runs in the sandbox when it is ready; outside when it is off", () => {
    expect(SandboxDomain.plan(on, ready, [["touch", "a"]], false)).toEqual({ _tag: "Sandboxed" })
    expect(SandboxDomain.plan(SandboxDomain.resolve({ enabled: true }, false), ready, [["ls"]], false)).toEqual({
      _tag: "Unsandboxed",
      why: "disabled"
    })
  })

  it("excludes a line when any of its commands matches an entry (prefix, base name, or rule syntax)", () => {
    expect(SandboxDomain.plan(on, ready, [["ls"], ["/usr/bin/docker", "ps"]], false)).toMatchObject({ why: "excluded" })
    expect(SandboxDomain.plan(on, ready, [["npm", "run", "e2e", "--ci"]], false)).toMatchObject({ why: "excluded" })
    expect(SandboxDomain.plan(on, ready, [["dockerd"]], false)).toEqual({ _tag: "Sandboxed" })
  })

  it("refuses when unavailable, naming what is missing and how to install it; failIfUnavailable: false warns", () => {
    const refused = SandboxDomain.plan(on, missing, [["ls"]], false)
    expect(refused._tag).toBe("Refused")
    expect(refused._tag === "Refused" && refused.message).toContain("bubblewrap (bwrap) not installed")
    expect(refused._tag === "Refused" && refused.message).toContain("apt-get install bubblewrap socat ripgrep")
    const fallback = SandboxDomain.resolve({ enabled: true, failIfUnavailable: false })
    expect(SandboxDomain.plan(fallback, missing, [["ls"]], false)).toMatchObject({ why: "fallback" })
  })

  it("dangerouslyDisableSandbox: outside when allowUnsandboxedCommands, refused otherwise", () => {
    expect(SandboxDomain.plan(on, ready, [["ls"]], true)).toEqual({ _tag: "Unsandboxed", why: "requested" })
    const strict = SandboxDomain.resolve({ enabled: true, allowUnsandboxedCommands: false })
    expect(SandboxDomain.plan(strict, ready, [["ls"]], true)._tag).toBe("Refused")
  })
})

describe("sandbox settings", () => {
  it("are decoded with errors that name the file and the field", () => {
    const decoded = Settings.decode("/p/.claude/settings.json", '{"sandbox":{"network":{"allowLocalBinding":"yes"}}}')
    expect(Either.isLeft(decoded) && decoded.left.message).toBe(
      'Invalid settings file /p/.claude/settings.json: at sandbox.network.allowLocalBinding: Expected boolean, actual "yes"'
    )
  })

  it("merge across files: later scalars win, lists are joined", () => {
    const source = (name: string, sandbox: SandboxDomain.SandboxSection): Settings.Source => ({
      name,
      root: "/p",
      base: "/p",
      settings: { sandbox }
    })
    const merged = Either.getOrThrow(
      Settings.merge([
        source("user", { enabled: true, excludedCommands: ["docker"], network: { allowedDomains: ["a.test"] } }),
        source("project", { enabled: false, excludedCommands: ["podman"], network: { allowedDomains: ["b.test"] } })
      ])
    )
    expect(merged.sandbox).toEqual({
      enabled: false,
      excludedCommands: ["docker", "podman"],
      network: { allowedDomains: ["a.test", "b.test"] }
    })
  })
})

describe("the note on a result the sandbox caused", () => {
  const config = SandboxDomain.resolve({ enabled: true })
  const policy = SandboxPolicy.derive({
    permissions: permissions([], []),
    section: {},
    cwd: "/proj",
    home: "/home/u",
    protectedDirs: []
  })

  it("names the paths and hosts from the runtime's records and the output", () => {
    const found = SandboxNotes.refusals(
      ["deny openat /etc/foo", "deny network-outbound 10.0.0.1:80 (host is not on the allow list)"],
      "touch: cannot touch '/opt/x': Read-only file system\nOSError: [Errno 30] Read-only file system: '/usr/y'"
    )
    expect(found).toEqual({ paths: ["/etc/foo", "/opt/x", "/usr/y"], hosts: ["10.0.0.1:80"], network: false })
    expect(SandboxNotes.note(config, policy, found)).toBe(
      '[sandbox] The command ran in the OS sandbox, which refused writing /etc/foo, /opt/x, /usr/y (the sandbox lets commands write only under /proj, /data/shared); and connecting to 10.0.0.1:80 (allowed hosts: none; connections go through the sandbox\'s proxy). If the command really needs this, retry it with "dangerouslyDisableSandbox": true: the user will be asked to approve running it outside the sandbox. Otherwise ask the user to add the path or host to the sandbox settings (Edit(...) or WebFetch(domain:...) allow rules, or sandbox.filesystem / sandbox.network).'
    )
  })

  it("says nothing when nothing points at the sandbox; without allowUnsandboxedCommands, offers no retry", () => {
    expect(SandboxNotes.note(config, policy, SandboxNotes.refusals([], "error: no such file"))).toBeUndefined()
    // A refused connection guessed from the output is mentioned for a failure only.
    const refused = SandboxNotes.refusals([], "curl: (7) Couldn't connect to server")
    expect(SandboxNotes.note(config, policy, refused, true)).toContain("a network connection, probably")
    expect(SandboxNotes.note(config, policy, refused, false)).toBeUndefined()
    const strict = SandboxDomain.resolve({ enabled: true, allowUnsandboxedCommands: false })
    const text = SandboxNotes.note(strict, policy, SandboxNotes.refusals(["deny openat /etc/x"], ""))
    expect(text).toContain("sandbox.allowUnsandboxedCommands is false")
    expect(text).not.toContain("dangerouslyDisableSandbox")
  })
})
