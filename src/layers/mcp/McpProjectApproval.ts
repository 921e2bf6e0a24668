/**
 * Approving the servers of a project's `.mcp.json` interactively, as Claude Code does: when the Approver can ask
 * (the terminal approver), each server that the settings neither approve nor disable is put to the user — use it,
 * use it and every other server of the file, or do not use it — and the answer is remembered in
 * `<project>/.claude/settings.local.json` (`enabledMcpjsonServers`, `enableAllProjectMcpServers`,
 * `disabledMcpjsonServers`). Without such an Approver nothing is asked. See docs/mcp.md.
 */
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { Effect, Option } from "effect"
import * as McpConfig from "../../domain/McpConfig.js"
import type { Approver } from "../../services/Approver.js"
import type { ProjectServerAnswer } from "../../services/McpClients.js"

/** What a server runs, as shown in the question: its command line, or its URL. */
export const summaryOf = (server: McpConfig.ServerConfig): string =>
  McpConfig.isHttp(server) ? server.url : [server.command, ...server.args].join(" ")

/** The answers given, by server name. */
export type Answers = ReadonlyMap<string, ProjectServerAnswer>

/**
 * Asks about each unapproved server in turn (an "approve all" answers the rest too). Returns the answers; a
 * server not in the map was not asked (no Approver that can ask).
 */
export const ask = (
  approver: Option.Option<Approver["Type"]>,
  file: string,
  project: McpConfig.McpConfig,
  unapproved: ReadonlyArray<string>
): Effect.Effect<Answers> =>
  Effect.gen(function* () {
    const answers = new Map<string, ProjectServerAnswer>()
    const askOne = Option.flatMap(approver, (a) => Option.fromNullable(a.approveProjectServer))
    if (Option.isNone(askOne)) return answers
    for (const server of unapproved) {
      if ([...answers.values()].includes("approve-all")) {
        answers.set(server, "approve")
        continue
      }
      const config = project.mcpServers[server]
      answers.set(server, yield* askOne.value({ file, server, summary: summaryOf(config) }))
    }
    return answers
  })

const uniq = (list: ReadonlyArray<string>, more: ReadonlyArray<string>) => [...new Set([...list, ...more])]

/**
 * Records answers in `<projectDir>/.claude/settings.local.json`, keeping every other key of the file. A file that
 * is not a JSON object is left alone, and the failure is returned as a message.
 */
export const remember = (projectDir: string, answers: Answers): Effect.Effect<Option.Option<string>> => {
  const file = Path.join(projectDir, ".claude", "settings.local.json")
  const named = (answer: ProjectServerAnswer) => [...answers].filter(([, a]) => a === answer).map(([name]) => name)
  if (answers.size === 0) return Effect.succeed(Option.none())
  return Effect.tryPromise(async () => {
    const text = await Fs.readFile(file, "utf8").catch((e: NodeJS.ErrnoException) => {
      if (e.code === "ENOENT") return "{}"
      throw e
    })
    const current = JSON.parse(text) as unknown
    if (typeof current !== "object" || current === null || Array.isArray(current)) {
      throw new Error("it is not a JSON object")
    }
    const settings = current as Record<string, unknown>
    const list = (key: string) =>
      Array.isArray(settings[key]) ? (settings[key] as Array<unknown>).filter((v) => typeof v === "string") : []
    const used = [...answers].filter(([, a]) => a !== "reject").map(([name]) => name)
    const enabled = uniq(list("enabledMcpjsonServers"), used)
    const disabled = uniq(list("disabledMcpjsonServers"), named("reject"))
    const next: Record<string, unknown> = {
      ...settings,
      ...(enabled.length > 0 ? { enabledMcpjsonServers: enabled } : {}),
      ...(disabled.length > 0 ? { disabledMcpjsonServers: disabled } : {}),
      ...(named("approve-all").length > 0 ? { enableAllProjectMcpServers: true } : {})
    }
    await Fs.mkdir(Path.dirname(file), { recursive: true })
    await Fs.writeFile(file, `${JSON.stringify(next, null, 2)}\n`)
  }).pipe(
    Effect.as(Option.none<string>()),
    Effect.catchAll((e) =>
      Effect.succeed(
        Option.some(
          `armature: could not remember the MCP server answers in ${file}: ${e.error instanceof Error ? e.error.message : String(e.error)}`
        )
      )
    )
  )
}
