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
