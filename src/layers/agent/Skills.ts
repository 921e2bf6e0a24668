/**
 * Reads the skills of a session: `~/.claude/skills/<name>/SKILL.md` (user), then `<project>/.claude/skills/<name>/SKILL.md`
 * (project), a project skill overriding a user skill of the same name. A skill file that cannot be used is skipped
 * with a problem naming its file and line, so one bad skill never stops the others. See docs/tools.md.
 */
import * as Path from "node:path"
import { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import * as Skill from "../../domain/Skill.js"

/** Where skills are looked for. */
export interface Locations {
  /** The project root (its `.claude/skills`). */
  readonly projectDir: string
  /** The user's home (its `.claude/skills`); absent: no user skills. */
  readonly home?: string | undefined
}

/** The skills found and the skill files skipped. */
export interface Loaded {
  readonly skills: ReadonlyArray<Skill.Skill>
  readonly problems: ReadonlyArray<Skill.SkillProblem>
}

/** Reads every `<dir>/<name>/SKILL.md` (a missing directory has none), in name order. */
export const readDirectory = (dir: string, source: Skill.SkillSource) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const skills: Array<Skill.Skill> = []
    const problems: Array<Skill.SkillProblem> = []
    const names = yield* fs.readDirectory(dir).pipe(Effect.orElseSucceed((): ReadonlyArray<string> => []))
    for (const name of [...names].sort()) {
      const skillDir = Path.join(dir, name)
      const file = Path.join(skillDir, "SKILL.md")
      const info = yield* Effect.option(fs.stat(file))
      if (info._tag === "None" || info.value.type !== "File") continue
      const text = yield* fs.readFileString(file).pipe(Effect.either)
      if (text._tag === "Left") {
        problems.push({ file, line: 1, field: "file", message: text.left.message })
        continue
      }
      const parsed = Skill.parse(file, skillDir, name, text.right, source)
      if (Skill.isProblem(parsed)) problems.push(parsed)
      else skills.push(parsed)
    }
    return { skills, problems } satisfies Loaded
  })

/** The skills of a session: user, then project (by name, the project's win). */
export const load = (locations: Locations) =>
  Effect.gen(function* () {
    const user =
      locations.home === undefined
        ? { skills: [], problems: [] }
        : yield* readDirectory(Path.join(locations.home, ".claude", "skills"), "user")
    const project = yield* readDirectory(Path.join(locations.projectDir, ".claude", "skills"), "project")
    return {
      skills: Skill.merge(user.skills, project.skills),
      problems: [...user.problems, ...project.problems]
    } satisfies Loaded
  })
