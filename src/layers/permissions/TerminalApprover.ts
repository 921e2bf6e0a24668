/**
 * An Approver that asks on a terminal: `y` approves this call once, `a` approves it and adds a session
 * rule for this tool (or command prefix, or directory), `n` refuses it, optionally with a reason for the model
 * (`n too risky`). It also asks MCP's questions (forms, sampling, project servers: TerminalForms.ts). The input
 * and output streams are injectable, so tests drive it with in-memory streams.
 */
import * as Path from "node:path"
import * as Readline from "node:readline"
import { Effect, Either, Layer, Option, Queue } from "effect"
import type { PermissionDecision } from "../../domain/Permission.js"
import * as PermissionRule from "../../domain/PermissionRule.js"
import { type Approval, Approver } from "../../services/Approver.js"
import type { PermissionRequest } from "../../services/PermissionPolicy.js"
import * as Settings from "../../services/Settings.js"
import { analysisOf, ShellAnalyzer } from "../../services/ShellAnalyzer.js"
import { makeLedger } from "./CallbackApprover.js"
import * as TerminalForms from "./TerminalForms.js"
import * as TerminalQuestions from "./TerminalQuestions.js"

/** The streams the prompt talks through. */
export interface Streams {
  readonly input: NodeJS.ReadableStream
  readonly output: NodeJS.WritableStream
}

const field = (input: unknown, key: string): string | undefined => {
  if (typeof input !== "object" || input === null) return undefined
  const value = (input as Record<string, unknown>)[key]
  return typeof value === "string" ? value : undefined
}

/**
 * The rules an "always" answer adds: `Bash(prefix:*)` for each simple command (none when the command has dangers),
 * `Tool(//dir/**)` for a file tool, `WebFetch(domain:host)`, else the whole tool.
 */
export const suggestRules = (
  request: PermissionRequest,
  analyze: (command: string) => {
    readonly parsed: boolean
    readonly dangers: ReadonlyArray<string>
    readonly commands: ReadonlyArray<{ readonly argv: ReadonlyArray<string> }>
  }
): ReadonlyArray<string> => {
  const tool = request.tool
  if (tool.name === "Bash") {
    const analysis = analyze(field(request.input, "command") ?? "")
    if (!analysis.parsed || analysis.dangers.length > 0) return []
    const rules = analysis.commands.map((c) => PermissionRule.bashPrefixRule(c.argv)).filter((r) => r !== undefined)
    return [...new Set(rules)]
  }
  if (tool.name === "WebFetch") {
    const host = PermissionRule.hostOf(field(request.input, "url") ?? "")
    return host === undefined ? [] : [`WebFetch(domain:${host})`]
  }
  const file = field(request.input, "file_path") ?? field(request.input, "notebook_path")
  if (file !== undefined && PermissionRule.pathTools.has(tool.name)) {
    const dir = Path.dirname(Path.resolve(request.context.cwd, file))
    return [`${tool.name}(/${dir === "/" ? "" : dir}/**)`]
  }
  return [tool.name]
}

/** The question shown for one call. */
export const promptText = (request: PermissionRequest, decision: PermissionDecision, always: ReadonlyArray<string>) => {
  const summary = safeSummary(request)
  const alwaysText = always.length === 0 ? "yes for this call only" : `yes, and always allow ${always.join(", ")}`
  return [
    `Armature wants to use ${request.tool.name}${summary === "" ? "" : `: ${summary}`}`,
    `Reason: ${decision.reason}`,
    `Allow? [y] yes once  [a] ${alwaysText}  [n] no (you may add a reason: "n too risky") `
  ].join("\n")
}

const safeSummary = (request: PermissionRequest): string => {
  try {
    return request.tool.summarize(request.input)
  } catch {
    return ""
  }
}

/** The message sent to the model when the user refuses. */
export const refusalMessage = (toolName: string, reason: string | undefined): string =>
  `The user refused permission to use ${toolName}.${reason === undefined || reason === "" ? "" : ` Reason: ${reason}`}`

/** How an answer line is read. */
export type Answer =
  | { readonly _tag: "Once" }
  | { readonly _tag: "Always" }
  | { readonly _tag: "No"; readonly reason: string | undefined }
  | { readonly _tag: "Unclear" }

/** Reads one answer line. */
export const parseAnswer = (line: string): Answer => {
  const text = line.trim()
  const word = text.split(/\s+/)[0]?.toLowerCase() ?? ""
  if (word === "y" || word === "yes") return { _tag: "Once" }
  if (word === "a" || word === "always") return { _tag: "Always" }
  if (word === "n" || word === "no") {
    const reason = text.slice(text.split(/\s+/)[0].length).trim()
    return { _tag: "No", reason: reason === "" ? undefined : reason }
  }
  return { _tag: "Unclear" }
}

/** Makes the terminal approver over the given streams; the line reader lives as long as the scope. */
export const make = (streams: Streams) =>
  Effect.gen(function* () {
    const settings = yield* Settings.Settings
    const analyzer = yield* ShellAnalyzer
    const lines = yield* Queue.unbounded<Option.Option<string>>()
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        const rl = Readline.createInterface({ input: streams.input, terminal: false })
        rl.on("line", (line) => Queue.unsafeOffer(lines, Option.some(line)))
        rl.on("close", () => Queue.unsafeOffer(lines, Option.none()))
        return rl
      }),
      (rl) => Effect.sync(() => rl.close())
    )
    const ledger = makeLedger()
    const write = (text: string) => Effect.sync(() => streams.output.write(text))
    const ask = (request: PermissionRequest, decision: PermissionDecision) =>
      Effect.gen(function* () {
        const always = suggestRules(request, (command) => analysisOf(analyzer, request.input, command))
        for (let attempt = 0; attempt < 3; attempt++) {
          yield* write(attempt === 0 ? promptText(request, decision, always) : "Please answer y, a or n: ")
          const line = yield* Queue.take(lines)
          if (Option.isNone(line)) {
            yield* Queue.offer(lines, Option.none())
            return {
              _tag: "Rejected",
              message: refusalMessage(request.tool.name, "no answer (the input was closed)")
            } as Approval
          }
          const answer = parseAnswer(line.value)
          switch (answer._tag) {
            case "Once":
              return { _tag: "Approved" } as Approval
            case "Always": {
              const rules = always.flatMap((text) => {
                const parsed = PermissionRule.parse(text, {
                  behavior: "allow",
                  source: "session",
                  root: settings.projectDir
                })
                return Either.isRight(parsed) ? [parsed.right] : []
              })
              yield* Settings.addSessionRules(rules).pipe(Effect.provideService(Settings.Settings, settings))
              return { _tag: "Approved" } as Approval
            }
            case "No":
              return { _tag: "Rejected", message: refusalMessage(request.tool.name, answer.reason) } as Approval
            case "Unclear":
              continue
          }
        }
        return { _tag: "Rejected", message: refusalMessage(request.tool.name, "no clear answer") } as Approval
      })
    const lock = yield* Effect.makeSemaphore(1)
    const io: TerminalForms.Io = {
      write,
      // A closed input is put back, so every later question sees it too.
      read: Effect.flatMap(Queue.take(lines), (line) =>
        Option.isNone(line) ? Effect.as(Queue.offer(lines, line), line) : Effect.succeed<Option.Option<string>>(line)
      )
    }
    return Approver.of({
      elicit: (request) => lock.withPermits(1)(TerminalForms.askForm(io, request)),
      approveSampling: (request) => lock.withPermits(1)(TerminalForms.askSampling(io, request)),
      approveProjectServer: (request) => lock.withPermits(1)(TerminalForms.askProjectServer(io, request)),
      askQuestions: (request) => lock.withPermits(1)(TerminalQuestions.askQuestions(io, request)),
      approvePlan: (request) => lock.withPermits(1)(TerminalQuestions.approvePlan(io, request)),
      approve: (request, decision) =>
        lock.withPermits(1)(
          Effect.gen(function* () {
            const recorded = ledger.lookup(request)
            if (recorded !== undefined) return recorded
            const approval = yield* ask(request, decision)
            ledger.record(request, approval)
            return approval
          })
        )
    })
  })

/** The terminal approver over the given streams (tests). Needs Settings (session rules) and the ShellAnalyzer. */
export const layerWith = (streams: Streams) => Layer.scoped(Approver, make(streams))

/** The terminal approver on the process's stdin, prompting on stderr. */
export const layer = Layer.scoped(
  Approver,
  Effect.suspend(() => make({ input: process.stdin, output: process.stderr }))
)
