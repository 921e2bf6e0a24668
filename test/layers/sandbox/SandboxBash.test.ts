/**
 * The OS sandbox with real processes: Bash through the whole engine (permissions, executor) with the sandbox on,
 * bubblewrap and the runtime's proxy for real. One sandbox per process (the runtime is a singleton): every test
 * builds and closes its own engine, one after the other.
 */
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as Armature from "../../../src/Armature.js"
import * as ProtectedPaths from "../../../src/domain/ProtectedPaths.js"
import * as SandboxLive from "../../../src/layers/sandbox/SandboxLive.js"
import { PermissionPolicy } from "../../../src/services/PermissionPolicy.js"
import { Sandbox } from "../../../src/services/Sandbox.js"
import { Session } from "../../../src/services/Session.js"
import { ToolExecutor } from "../../../src/services/ToolExecutor.js"
import { ToolRegistry } from "../../../src/services/ToolRegistry.js"
import { makeContext } from "../../fixtures/ProcessTestKit.js"

const tempDir = (prefix: string) => Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix)))

interface Setup {
  readonly allow?: ReadonlyArray<string>
  readonly deny?: ReadonlyArray<string>
  readonly sandbox?: Record<string, unknown>
  readonly bwrapPath?: string
}

/** An engine in a fresh project with the sandbox on, settings from one `--settings` file only. */
const engine = (setup: Setup) => {
  const project = tempDir("armature-sandbox-proj-")
  const settingsFile = Path.join(project, "test-settings.json")
  Fs.writeFileSync(
    settingsFile,
    JSON.stringify({
      permissions: { allow: setup.allow ?? [], deny: setup.deny ?? [] },
      sandbox: { enabled: true, ...setup.sandbox }
    })
  )
  const layer = Armature.layerNode({
    cwd: project,
    settingSources: [],
    settingsFiles: [settingsFile],
    overrides: setup.bwrapPath === undefined ? {} : { sandbox: SandboxLive.layer({ bwrapPath: setup.bwrapPath }) }
  })
  return { project, layer }
}

const bash = (id: string, input: Record<string, unknown>) => ({ type: "tool_use" as const, id, name: "Bash", input })

const runOne = (input: Record<string, unknown>) =>
  Effect.gen(function* () {
    const executor = yield* ToolExecutor
    const [result] = yield* executor.runBatchCollect([bash(`toolu_${Math.random().toString(36).slice(2)}`, input)])
    return { text: String(result.content), isError: result.is_error === true }
  })

const decide = (input: Record<string, unknown>) =>
  Effect.gen(function* () {
    const policy = yield* PermissionPolicy
    const registry = yield* ToolRegistry
    const session = yield* Session
    const tool = Option.getOrThrow(yield* registry.lookup("Bash"))
    const { ctx } = yield* makeContext("toolu_decide", session.projectDir)
    return yield* policy.decide({ tool, input, toolUseId: "toolu_decide", context: ctx })
  })

/** A local HTTP server answering every request with its host header and path; closed with the scope. */
const httpServer = Effect.acquireRelease(
  Effect.async<Http.Server & { port: number }>((resume) => {
    const server = Http.createServer((req, res) => res.end(`hello ${req.url}`))
    server.listen(0, "127.0.0.1", () => {
      resume(Effect.succeed(Object.assign(server, { port: (server.address() as { port: number }).port })))
    })
  }),
  (server) =>
    Effect.async<void>((resume) => {
      server.close(() => resume(Effect.void))
    })
)

const processesWith = (marker: string): ReadonlyArray<string> =>
  Fs.readdirSync("/proc")
    .filter((e) => /^\d+$/.test(e))
    .filter((pid) => {
      try {
        const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
        if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) return false
        return Fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker)
      } catch {
        return false
      }
    })

describe("Bash in the OS sandbox", () => {
  it.live("a write inside the project succeeds; outside it fails with a result that names the path", () => {
    const { layer, project } = engine({ allow: ["Bash"] })
    const outside = Path.join(tempDir("armature-sandbox-out-"), "outside.txt")
    return Effect.gen(function* () {
      const sandbox = yield* Sandbox
      expect(sandbox.availability).toEqual({ _tag: "Ready" })
      const inside = yield* runOne({ command: "echo data > inside.txt && cat inside.txt && rm $(mktemp)" })
      expect(inside).toEqual({ text: "data", isError: false })
      expect(Fs.readFileSync(Path.join(project, "inside.txt"), "utf8")).toBe("data\n")
      const refused = yield* runOne({ command: `echo data > ${outside}` })
      expect(refused.isError).toBe(true)
      expect(refused.text).toContain(`${outside}: Read-only file system`)
      expect(refused.text).toContain(`[sandbox] The command ran in the OS sandbox, which refused writing ${outside}`)
      expect(refused.text).toContain('retry it with "dangerouslyDisableSandbox": true')
      expect(Fs.existsSync(outside)).toBe(false)
    }).pipe(Effect.provide(layer))
  })

  it.live("settings files and Armature's state directory stay read-only inside the project", () => {
    const { layer, project } = engine({ allow: ["Bash"] })
    return Effect.gen(function* () {
      const result = yield* runOne({ command: "mkdir -p .claude; echo '{}' > .claude/settings.local.json" })
      expect(result.isError).toBe(true)
      expect(Fs.existsSync(Path.join(project, ".claude", "settings.local.json"))).toBe(false)
    }).pipe(Effect.provide(layer))
  })

  it.live(
    "every entry of the one protected list stays read-only in the sandbox (a script writing them all fails)",
    () => {
      const { layer, project } = engine({ allow: ["Bash"] })
      // .git as a directory with hooks, so that its sandbox entries (.git/hooks, .git/config) apply
      Fs.mkdirSync(Path.join(project, ".git", "hooks"), { recursive: true })
      const targets = ProtectedPaths.entries.flatMap((entry) =>
        entry.name === ".git"
          ? [".git/hooks/pre-commit", ".git/config"]
          : entry.kind === "dir"
            ? [`${entry.name}/planted`]
            : [entry.name]
      )
      // A script, so that the command line names none of them (the permission layer would ask first).
      Fs.writeFileSync(
        Path.join(project, "plant.sh"),
        `for p in ${targets.map((t) => `'${t}'`).join(" ")}; do mkdir -p "$(dirname "$p")" 2>/dev/null; echo pwned > "$p" 2>/dev/null; done; echo ok > control.txt\n`
      )
      return Effect.gen(function* () {
        yield* runOne({ command: "sh plant.sh" })
        // the control write went through: the script ran in the sandbox
        expect(Fs.readFileSync(Path.join(project, "control.txt"), "utf8")).toBe("ok\n")
        const planted = targets.filter((t) => {
          try {
            return Fs.readFileSync(Path.join(project, t), "utf8").includes("pwned")
          } catch {
            return false
          }
        })
        expect(planted).toEqual([])
      }).pipe(Effect.provide(layer))
    }
  )

  it.live("the network: a loopback server is refused, an allowed host name goes through the proxy", () => {
    const { layer } = engine({ allow: ["Bash", "WebFetch(domain:localhost)"] })
    return Effect.gen(function* () {
      const server = yield* httpServer
      // The proxy variables name the relay the command waits for before it runs (SandboxLive.proxyBridgeWait).
      const proxy = yield* runOne({ command: 'echo "$HTTP_PROXY"' })
      expect(proxy.text).toMatch(/^http:\/\/(.*@)?localhost:3128$/)
      // Direct connections: there is no network inside the sandbox.
      const direct = yield* runOne({ command: `curl -sS -m 10 http://127.0.0.1:${server.port}/direct` })
      expect(direct.isError).toBe(true)
      expect(direct.text).toContain("[sandbox]")
      // Through the proxy, the loopback address is not an allowed host.
      const viaProxy = yield* runOne({
        command: `NO_PROXY= no_proxy= curl -sS -f -m 10 http://127.0.0.1:${server.port}/proxied`
      })
      expect(viaProxy.isError).toBe(true)
      expect(viaProxy.text).toContain(`connecting to 127.0.0.1:${server.port}`)
      // `localhost` is allowed (WebFetch(domain:localhost)): the proxy dials it.
      const allowed = yield* runOne({
        command: `NO_PROXY= no_proxy= curl -sS -f -m 10 http://localhost:${server.port}/allowed`
      })
      expect(allowed).toEqual({ text: "hello /allowed", isError: false })
    }).pipe(Effect.scoped, Effect.provide(layer))
  })

  it.live(
    "autoAllowBashIfSandboxed allows `touch inside.txt` headless in default mode; a deny rule still denies",
    () => {
      const { layer, project } = engine({ deny: ["Bash(rm:*)"] })
      return Effect.gen(function* () {
        const decision = yield* decide({ command: "touch inside.txt" })
        expect(decision.behavior).toBe("allow")
        expect(decision.trace.at(-1)).toMatchObject({ step: "sandboxed", outcome: "allow" })
        expect(yield* runOne({ command: "touch inside.txt" })).toEqual({
          text: "(Bash completed with no output)",
          isError: false
        })
        expect(Fs.existsSync(Path.join(project, "inside.txt"))).toBe(true)
        const denied = yield* runOne({ command: "rm inside.txt" })
        expect(denied.isError).toBe(true)
        expect(denied.text).toContain("denied by rule Bash(rm:*)")
        expect(Fs.existsSync(Path.join(project, "inside.txt"))).toBe(true)
        // Asking to leave the sandbox is never allowed without approval; headless, it is refused.
        const leave = yield* decide({ command: "touch inside.txt", dangerouslyDisableSandbox: true })
        expect(leave.behavior).toBe("ask")
        expect(leave.trace.at(-1)).toMatchObject({ step: "sandboxEscape", outcome: "ask" })
      }).pipe(Effect.provide(layer))
    }
  )

  it.live("with autoAllowBashIfSandboxed off, the same command asks", () => {
    const { layer } = engine({ sandbox: { autoAllowBashIfSandboxed: false } })
    return Effect.gen(function* () {
      expect((yield* decide({ command: "touch inside.txt" })).behavior).toBe("ask")
    }).pipe(Effect.provide(layer))
  })

  it.live("excluded commands run outside the sandbox, and only through the normal permission flow", () => {
    const outside = Path.join(tempDir("armature-sandbox-excl-"), "outside.txt")
    const { layer } = engine({ sandbox: { excludedCommands: ["touch"] } })
    return Effect.gen(function* () {
      const decision = yield* decide({ command: `touch ${outside}` })
      expect(decision.behavior).toBe("ask")
      expect((yield* runOne({ command: `touch ${outside}` })).isError).toBe(true)
      expect(Fs.existsSync(outside)).toBe(false)
    }).pipe(Effect.provide(layer))
  })

  it.live("a sandboxed command's background child dies on timeout", () => {
    const { layer } = engine({ allow: ["Bash"] })
    const marker = String(900_000 + Math.floor(Math.random() * 99_999))
    return Effect.gen(function* () {
      const result = yield* runOne({ command: `setsid sleep ${marker} & sleep ${Number(marker) + 1}`, timeout: 3_000 })
      expect(result.isError).toBe(true)
      expect(result.text).toContain("Command timed out after 3000 ms")
      expect(processesWith(`sleep\u0000${marker}`)).toEqual([])
      expect(processesWith(`sleep\u0000${Number(marker) + 1}`)).toEqual([])
    }).pipe(Effect.provide(layer))
  })

  it.live("output streams as without the sandbox: a large output is saved whole and previewed", () => {
    const { layer } = engine({ allow: ["Bash"] })
    return Effect.gen(function* () {
      const result = yield* runOne({ command: "seq 1 100000" })
      expect(result.isError).toBe(false)
      expect(result.text).toContain("<persisted-output>")
      const saved = /Full output saved to: (\S+)/.exec(result.text)![1]
      const lines = Fs.readFileSync(saved, "utf8").trimEnd().split("\n")
      expect(lines.length).toBe(100_000)
      expect(lines.at(-1)).toBe("100000")
    }).pipe(Effect.provide(layer))
  })

  it.live("background shells run in the sandbox too", () => {
    const { layer, project } = engine({ allow: ["Bash", "BashOutput"] })
    const outside = Path.join(tempDir("armature-sandbox-bg-"), "outside.txt")
    return Effect.gen(function* () {
      const started = yield* runOne({
        command: `touch inside-bg.txt; touch ${outside}; echo done`,
        run_in_background: true
      })
      const id = /ID: (bash_\w+)/.exec(started.text)![1]
      const executor = yield* ToolExecutor
      let output = ""
      for (let i = 0; i < 100 && !output.includes("done"); i++) {
        yield* Effect.sleep("100 millis")
        const [read] = yield* executor.runBatchCollect([
          { type: "tool_use", id: `toolu_read_${i}`, name: "BashOutput", input: { bash_id: id } }
        ])
        output += String(read.content)
      }
      expect(output).toContain("Read-only file system")
      expect(Fs.existsSync(Path.join(project, "inside-bg.txt"))).toBe(true)
      expect(Fs.existsSync(outside)).toBe(false)
    }).pipe(Effect.provide(layer))
  })

  it.live("enabled but bubblewrap absent: Bash refuses, naming what is missing and how to install it", () => {
    const { layer, project } = engine({ allow: ["Bash"], bwrapPath: "/nonexistent/bwrap" })
    return Effect.gen(function* () {
      const sandbox = yield* Sandbox
      expect(sandbox.availability).toEqual({
        _tag: "Unavailable",
        reasons: ["bubblewrap (bwrap) not executable at /nonexistent/bwrap"]
      })
      const refused = yield* runOne({ command: "touch marker.txt" })
      expect(refused.isError).toBe(true)
      expect(refused.text).toContain("bubblewrap (bwrap) not executable at /nonexistent/bwrap")
      expect(refused.text).toContain("apt-get install bubblewrap socat ripgrep")
      expect(Fs.existsSync(Path.join(project, "marker.txt"))).toBe(false)
    }).pipe(Effect.provide(layer))
  })

  it.live("failIfUnavailable: false runs unsandboxed with a warning in the result", () => {
    const { layer, project } = engine({
      allow: ["Bash"],
      bwrapPath: "/nonexistent/bwrap",
      sandbox: { failIfUnavailable: false }
    })
    return Effect.gen(function* () {
      const result = yield* runOne({ command: "touch marker.txt" })
      expect(result.isError).toBe(false)
      expect(result.text).toContain("this command ran WITHOUT it because sandbox.failIfUnavailable is false")
      expect(Fs.existsSync(Path.join(project, "marker.txt"))).toBe(true)
    }).pipe(Effect.provide(layer))
  })
})
