/**
 * What `mcp serve` offers besides tools: the working directories' files as resources (through the Read deny rules: a
 * denied file is neither listed nor readable), a `file:///{path}` resource template, change notifications for
 * subscribed files (file watching), the session's sub-agents and skills as prompts, and completions for the
 * template's path and the prompts' arguments. See docs/mcp.md.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { FileSystem } from "@effect/platform"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import {
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  type Prompt,
  ReadResourceRequestSchema,
  type Resource,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema
} from "@modelcontextprotocol/sdk/types.js"
import { Effect, Option, Ref, Runtime, type Scope } from "effect"
import * as AgentDefinition from "../../domain/AgentDefinition.js"
import * as Skill from "../../domain/Skill.js"
import { ReadGuard } from "../../services/ReadGuard.js"
import { currentContext, Session } from "../../services/Session.js"
import { Settings } from "../../services/Settings.js"
import * as AgentDefinitions from "../agent/AgentDefinitions.js"
import * as Skills from "../agent/Skills.js"

/** The most files `resources/list` returns (the walk stops there, in path order). */
const maxListed = 1000

/** The most bytes `resources/read` returns. */
export const maxReadBytes = 10 * 1024 * 1024

/** The resource template of a file, by its absolute path without the leading `/`. */
const fileTemplate = "file:///{path}"

/** Directories never walked for the listing (still readable by URI when the Read rules allow). */
const skippedDirs: ReadonlySet<string> = new Set([".git", "node_modules", ".armature"])

const mimeTypes: Readonly<Record<string, string>> = {
  ".md": "text/markdown",
  ".json": "application/json",
  ".ts": "text/typescript",
  ".js": "text/javascript",
  ".html": "text/html",
  ".css": "text/css",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".pdf": "application/pdf"
}

const mimeOf = (file: string): string => mimeTypes[Path.extname(file).toLowerCase()] ?? "text/plain"

const invalidParams = (message: string) => Object.assign(new Error(message), { code: ErrorCode.InvalidParams })

/** The absolute path of a `file://` URI, or undefined. */
const pathOfUri = (uri: string): string | undefined => {
  try {
    const url = new URL(uri)
    return url.protocol === "file:" && url.host === "" ? Path.resolve(decodeURIComponent(url.pathname)) : undefined
  } catch {
    return undefined
  }
}

/** The `file://` URI of an absolute path. */
const uriOf = (path: string): string => `file://${path.split(Path.sep).map(encodeURIComponent).join("/")}`

/** The prompt names: `agent:NAME` for a sub-agent, `skill:NAME` for a skill. */
const agentPrompt = (name: string) => `agent:${name}`
const skillPrompt = (name: string) => `skill:${name}`

const isBinary = (bytes: Uint8Array): boolean => bytes.subarray(0, 8000).includes(0)

/**
 * Installs the resource, prompt and completion handlers on `server` (whose capabilities must declare `resources`
 * with `subscribe`, `prompts` and `completions`). Subscriptions are watched until unsubscribed or the scope closes.
 * Without the session, settings or Read guard (a minimal engine), nothing is listed.
 */
export const install = (server: Server) =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<Scope.Scope>()
    const run = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Runtime.runPromise(runtime)(effect)
    const fs = Option.getOrUndefined(yield* Effect.serviceOption(FileSystem.FileSystem))
    const session = Option.getOrUndefined(yield* Effect.serviceOption(Session))
    const settings = Option.getOrUndefined(yield* Effect.serviceOption(Settings))
    const guard = Option.getOrUndefined(yield* Effect.serviceOption(ReadGuard))

    /** The working directories: the session's, then the settings' additional ones. */
    const workingDirs = Effect.gen(function* () {
      if (session === undefined) return []
      const cwd = (yield* Ref.get(yield* currentContext(session))).cwd
      const extra = settings?.permissions.additionalDirectories ?? []
      return [...new Set([cwd, ...extra.map((d) => Path.resolve(cwd, d))])]
    })

    /** Whether a path may be read: inside a working directory and not denied by a Read rule. */
    const readable = (path: string, isDirectory: boolean) =>
      Effect.gen(function* () {
        if (guard === undefined || session === undefined) return false
        const dirs = yield* workingDirs
        const root = dirs.find((d) => path === d || path.startsWith(`${d}${Path.sep}`))
        if (root === undefined) return false
        const cwd = dirs[0]!
        const check = yield* guard.forSearch({ tool: "Read", root, cwd })
        return check === undefined || check(path, isDirectory) === undefined
      })

    /** The readable files of the working directories, in path order, at most `maxListed`. */
    const files = Effect.gen(function* () {
      if (fs === undefined || guard === undefined) return []
      const dirs = yield* workingDirs
      const found: Array<string> = []
      const walk = (
        dir: string,
        check: ((p: string, d: boolean) => string | undefined) | undefined
      ): Effect.Effect<void> =>
        Effect.gen(function* () {
          const names = yield* fs.readDirectory(dir).pipe(Effect.orElseSucceed((): ReadonlyArray<string> => []))
          for (const name of [...names].sort()) {
            if (found.length >= maxListed) return
            const path = Path.join(dir, name)
            const info = yield* Effect.option(fs.stat(path))
            if (Option.isNone(info)) continue
            const isDir = info.value.type === "Directory"
            if (check?.(path, isDir) !== undefined) continue
            if (isDir) {
              if (!skippedDirs.has(name)) yield* walk(path, check)
            } else if (info.value.type === "File") {
              found.push(path)
            }
          }
        })
      for (const root of dirs) {
        yield* walk(root, yield* guard.forSearch({ tool: "Read", root, cwd: dirs[0]! }))
      }
      return found
    })

    const toResource =
      (dirs: ReadonlyArray<string>) =>
      (path: string): Resource => {
        const root = dirs.find((d) => path.startsWith(`${d}${Path.sep}`)) ?? dirs[0] ?? "/"
        return { uri: uriOf(path), name: Path.relative(root, path), mimeType: mimeOf(path) }
      }

    server.setRequestHandler(ListResourcesRequestSchema, () =>
      run(
        Effect.gen(function* () {
          const dirs = yield* workingDirs
          return { resources: (yield* files).map(toResource(dirs)) }
        })
      )
    )

    server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
      resourceTemplates: [
        {
          uriTemplate: fileTemplate,
          name: "file",
          title: "A file of the working directories",
          description:
            "A file by its absolute path (without the leading /); files denied by Read rules are not readable"
        }
      ]
    }))

    /** The path of a URI the client may read, or an error naming the URI. */
    const checkedPath = (uri: string) =>
      Effect.gen(function* () {
        const path = pathOfUri(uri)
        if (path === undefined) return yield* Effect.fail(invalidParams(`Not a file:// URI: ${uri}`))
        if (!(yield* readable(path, false))) return yield* Effect.fail(invalidParams(`Resource not found: ${uri}`))
        return path
      })

    server.setRequestHandler(ReadResourceRequestSchema, (request) =>
      run(
        Effect.gen(function* () {
          const uri = request.params.uri
          const path = yield* checkedPath(uri)
          if (fs === undefined) return yield* Effect.fail(invalidParams(`Resource not found: ${uri}`))
          const info = yield* fs.stat(path).pipe(Effect.mapError(() => invalidParams(`Resource not found: ${uri}`)))
          if (info.type !== "File") return yield* Effect.fail(invalidParams(`Resource not found: ${uri}`))
          if (Number(info.size) > maxReadBytes) {
            return yield* Effect.fail(invalidParams(`${uri} is larger than ${maxReadBytes} bytes`))
          }
          const bytes = yield* fs.readFile(path).pipe(Effect.mapError((e) => invalidParams(`${uri}: ${e.message}`)))
          const mimeType = mimeOf(path)
          return {
            contents: [
              isBinary(bytes)
                ? { uri, mimeType, blob: Buffer.from(bytes).toString("base64") }
                : { uri, mimeType, text: new TextDecoder().decode(bytes) }
            ]
          }
        })
      )
    )

    // The watcher is in place before subscribe answers, so no change after the answer is missed (a watch stream
    // forked as a fiber starts later, and a change made right after the answer could go unreported).
    const watches = new Map<string, Fs.FSWatcher>()
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const watcher of watches.values()) watcher.close()
        watches.clear()
      })
    )
    server.setRequestHandler(SubscribeRequestSchema, (request) =>
      run(
        Effect.gen(function* () {
          const uri = request.params.uri
          const path = yield* checkedPath(uri)
          if (watches.has(uri)) return {}
          const watcher = yield* Effect.try({
            try: () =>
              Fs.watch(path, { persistent: false }, () => {
                server.sendResourceUpdated({ uri }).catch(() => undefined)
              }),
            catch: (e) => invalidParams(`${uri}: cannot watch: ${String(e)}`)
          })
          watcher.on("error", () => watcher.close())
          watches.set(uri, watcher)
          return {}
        })
      )
    )
    server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
      watches.get(request.params.uri)?.close()
      watches.delete(request.params.uri)
      return {}
    })

    /** The session's sub-agents and skills (none without settings). */
    const definitions = Effect.gen(function* () {
      if (settings === undefined || fs === undefined) return { agents: [], skills: [] }
      const locations = { projectDir: settings.projectDir, home: settings.home }
      const agents = yield* AgentDefinitions.load(locations).pipe(
        Effect.orElseSucceed(() => [AgentDefinition.generalPurpose])
      )
      const { skills } = yield* Skills.load(locations)
      return { agents, skills }
    }).pipe(Effect.provideService(FileSystem.FileSystem, fs!))

    const modelChoices = Object.keys(AgentDefinition.modelAliases)

    const promptsOf = (agents: ReadonlyArray<AgentDefinition.AgentDefinition>, skills: ReadonlyArray<Skill.Skill>) => [
      ...agents.map(
        (a): Prompt => ({
          name: agentPrompt(a.name),
          title: `Agent ${a.name}`,
          description: a.description,
          arguments: [
            { name: "task", description: "The task for the agent", required: true },
            { name: "model", description: `The model: ${modelChoices.join(", ")} (default: the agent's)` }
          ]
        })
      ),
      ...skills.map(
        (s): Prompt => ({
          name: skillPrompt(s.name),
          title: `Skill ${s.name}`,
          description: s.description,
          arguments: [{ name: "args", description: "Arguments for the skill" }]
        })
      )
    ]

    server.setRequestHandler(ListPromptsRequestSchema, () =>
      run(Effect.map(definitions, ({ agents, skills }) => ({ prompts: promptsOf(agents, skills) })))
    )

    server.setRequestHandler(GetPromptRequestSchema, (request) =>
      run(
        Effect.gen(function* () {
          const { agents, skills } = yield* definitions
          const name = request.params.name
          const args = request.params.arguments ?? {}
          const agent = agents.find((a) => agentPrompt(a.name) === name)
          if (agent !== undefined) {
            const task = args.task?.trim() ?? ""
            if (task === "") return yield* Effect.fail(invalidParams(`Prompt ${name}: the argument task is required`))
            const model = args.model?.trim()
            if (model !== undefined && model !== "" && !modelChoices.includes(model)) {
              return yield* Effect.fail(
                invalidParams(`Prompt ${name}: model must be one of ${modelChoices.join(", ")}, got ${model}`)
              )
            }
            return {
              description: agent.description,
              messages: [
                { role: "user" as const, content: { type: "text" as const, text: `${agent.prompt}\n\nTask: ${task}` } }
              ]
            }
          }
          const skill = skills.find((s) => skillPrompt(s.name) === name)
          if (skill !== undefined) {
            return {
              description: skill.description,
              messages: [
                { role: "user" as const, content: { type: "text" as const, text: Skill.loadedText(skill, args.args) } }
              ]
            }
          }
          return yield* Effect.fail(invalidParams(`Unknown prompt: ${name}`))
        })
      )
    )

    server.setRequestHandler(CompleteRequestSchema, (request) =>
      run(
        Effect.gen(function* () {
          const { ref, argument } = request.params
          const value = argument.value
          let values: ReadonlyArray<string> = []
          if (ref.type === "ref/resource" && ref.uri === fileTemplate && argument.name === "path") {
            values = (yield* files).map((p) => p.slice(1)).filter((p) => p.startsWith(value))
          } else if (ref.type === "ref/prompt" && ref.name.startsWith("agent:") && argument.name === "model") {
            values = modelChoices.filter((m) => m.startsWith(value))
          }
          return {
            completion: { values: values.slice(0, 100), total: values.length, hasMore: values.length > 100 }
          }
        })
      )
    )
  })
