/**
 * Reads the sub-agent definitions of a session: the built-in `general-purpose`, then `~/.claude/agents/*.md` (user),
 * then `<project>/.claude/agents/*.md` (project), later ones overriding earlier ones by name. A file that cannot be
 * used fails the load with an InvalidInputError naming the file and the field. See docs/agents.md.
 */
import * as Path from "node:path"
import { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import * as AgentDefinition from "../../domain/AgentDefinition.js"
import { InvalidInputError } from "../../domain/Errors.js"

/** Where definitions are looked for. */
export interface Locations {
  /** The project root (its `.claude/agents`). */
  readonly projectDir: string
  /** The user's home (its `.claude/agents`); absent: no user definitions. */
  readonly home?: string | undefined
}

/** Reads every `*.md` file of one directory (a missing directory has none), in name order. */
export const readDirectory = (dir: string, source: AgentDefinition.AgentSource) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const fail = (file: string, message: string) =>
      new InvalidInputError({ message: `agent definition ${file}: ${message}` })
    if (!(yield* Effect.orElseSucceed(fs.exists(dir), () => false))) return []
    const names = yield* fs.readDirectory(dir).pipe(Effect.mapError((e) => fail(dir, e.message)))
    const definitions: Array<AgentDefinition.AgentDefinition> = []
    for (const name of names.filter((n) => n.endsWith(".md")).sort()) {
      const file = Path.join(dir, name)
      const text = yield* fs.readFileString(file).pipe(Effect.mapError((e) => fail(file, e.message)))
      const parsed = AgentDefinition.parse(file, text, source)
      if (AgentDefinition.isDefinitionProblem(parsed)) {
        return yield* new InvalidInputError({
          message: `agent definition ${AgentDefinition.problemText(parsed)}`
        })
      }
      definitions.push(parsed)
    }
    return definitions
  })

/** The definitions of a session: built-in, user, project (by name, later ones win). */
export const load = (locations: Locations) =>
  Effect.gen(function* () {
    const user =
      locations.home === undefined ? [] : yield* readDirectory(Path.join(locations.home, ".claude", "agents"), "user")
    const project = yield* readDirectory(Path.join(locations.projectDir, ".claude", "agents"), "project")
    return AgentDefinition.merge([AgentDefinition.generalPurpose], user, project)
  })

/** One `*.md` file of an agents directory as read: its definition, or why it cannot be used. */
export interface FileReading {
  readonly file: string
  readonly result: AgentDefinition.AgentDefinition | AgentDefinition.DefinitionProblem
}

/** Reads every `*.md` file of one directory without stopping at a bad one (a missing directory has none). */
export const readEach = (dir: string, source: AgentDefinition.AgentSource) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const names = yield* fs.readDirectory(dir).pipe(Effect.orElseSucceed((): ReadonlyArray<string> => []))
    const readings: Array<FileReading> = []
    for (const name of names.filter((n) => n.endsWith(".md")).sort()) {
      const file = Path.join(dir, name)
      const text = yield* Effect.either(fs.readFileString(file))
      // a name that went between the listing and the read is simply gone
      if (text._tag === "Left") {
        if (text.left._tag === "SystemError" && text.left.reason === "NotFound") continue
        readings.push({ file, result: { file, field: "file", message: text.left.message } })
        continue
      }
      readings.push({ file, result: AgentDefinition.parse(file, text.right, source) })
    }
    return readings
  })

/** The definitions of a reload, and the problems met, given the definitions in force before it. */
export const reconcile = (
  readings: ReadonlyArray<FileReading>,
  before: ReadonlyArray<AgentDefinition.AgentDefinition>
): {
  readonly definitions: ReadonlyArray<AgentDefinition.AgentDefinition>
  readonly problems: ReadonlyArray<AgentDefinition.DefinitionProblem>
} => {
  const definitions: Array<AgentDefinition.AgentDefinition> = []
  const problems: Array<AgentDefinition.DefinitionProblem> = []
  for (const { file, result } of readings) {
    if (!AgentDefinition.isDefinitionProblem(result)) {
      definitions.push(result)
      continue
    }
    problems.push(result)
    // a file broken mid-session keeps the definition it last gave
    const last = before.find((d) => d.file === file)
    if (last !== undefined) definitions.push(last)
  }
  return { definitions, problems }
}
