/**
 * Skills as Claude Code defines them (docs/tools.md): a directory holding a `SKILL.md` whose front matter names the
 * skill (`name`, `description`, optional `allowed-tools`) and whose body is the instructions the model loads on
 * demand with the Skill tool. The directory is the skill's base: its other files are read from there. Parsing is
 * pure; reading the directories is the loader's.
 */
import { Either } from "effect"
import * as FrontMatter from "./FrontMatter.js"
import * as PermissionRule from "./PermissionRule.js"

/** Where a skill comes from; a project skill overrides a user skill of the same name. */
export type SkillSource = "user" | "project"

/** One skill. */
export interface Skill {
  readonly name: string
  readonly description: string
  /** The tools the skill lets run without asking while it is active (permission rule texts, e.g. `Bash(git:*)`). */
  readonly allowedTools: ReadonlyArray<string>
  /** The instructions (the file's body). */
  readonly body: string
  /** The skill's directory, where its other files are. */
  readonly dir: string
  /** Its `SKILL.md`. */
  readonly file: string
  readonly source: SkillSource
}

/** A skill file that cannot be used: the file, the line, the field and what is wrong. */
export interface SkillProblem extends FrontMatter.Problem {
  readonly line: number
}

/** The most characters of a name and of a description, as Claude Code allows. */
const maxNameLength = 64
const maxDescriptionLength = 1024

const namePattern = /^[a-z0-9][a-z0-9-]*$/

const lineOfField = (text: string, field: string): number => {
  const line = /^line (\d+)$/.exec(field)
  return line !== null ? Number(line[1]) : FrontMatter.lineOf(text, field)
}

/**
 * Parses one `SKILL.md`. `dirName` is the skill directory's name, the skill's name when the front matter gives none
 * (as Claude Code does). A name has lowercase letters, digits and `-`; `description` is required; `allowed-tools` is
 * a comma-separated string or a list of permission rule texts.
 */
export const parse = (
  file: string,
  dir: string,
  dirName: string,
  text: string,
  source: SkillSource
): Skill | SkillProblem => {
  const problem = (p: FrontMatter.Problem): SkillProblem => ({ ...p, line: lineOfField(text, p.field) })
  const split = FrontMatter.split(file, text)
  if (FrontMatter.isProblem(split)) return problem(split)
  const { fields, body } = split
  const given = FrontMatter.scalar(file, fields, "name")
  if (FrontMatter.isProblem(given)) return problem(given)
  const name = given === undefined || given.trim() === "" ? dirName : given.trim()
  if (!namePattern.test(name) || name.length > maxNameLength) {
    return problem({
      file,
      field: "name",
      message: `${JSON.stringify(name)}: use lowercase letters, digits and "-" (at most ${maxNameLength})`
    })
  }
  const description = FrontMatter.scalar(file, fields, "description")
  if (FrontMatter.isProblem(description)) return problem(description)
  if (description === undefined || description.trim() === "") {
    return problem({ file, field: "description", message: "missing: the model chooses a skill by its description" })
  }
  if (description.length > maxDescriptionLength) {
    return problem({ file, field: "description", message: `longer than ${maxDescriptionLength} characters` })
  }
  const raw = fields.get("allowed-tools")
  const allowedTools = (raw === undefined ? [] : typeof raw === "string" ? raw.split(",") : raw)
    .map((s) => s.trim())
    .filter((s) => s !== "")
  for (const entry of allowedTools) {
    const rule = PermissionRule.parse(entry, { behavior: "allow", source: file, root: dir })
    if (Either.isLeft(rule)) {
      return problem({ file, field: "allowed-tools", message: `${JSON.stringify(entry)}: ${rule.left.reason}` })
    }
  }
  return { name, description: description.trim(), allowedTools, body: body.trim(), dir, file, source }
}

/** Whether a parse produced a problem. */
export const isProblem = (u: Skill | SkillProblem): u is SkillProblem => "line" in u

/** The text of a problem: `file:line: field: message`. */
export const problemText = (p: SkillProblem): string => `${p.file}:${p.line}: ${p.field}: ${p.message}`

/** Merges skills by name, later lists overriding earlier ones (user, then project), sorted by name. */
export const merge = (...lists: ReadonlyArray<ReadonlyArray<Skill>>): ReadonlyArray<Skill> => {
  const byName = new Map<string, Skill>()
  for (const list of lists) for (const s of list) byName.set(s.name, s)
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name))
}

/** The listing the model chooses from (in the Skill tool's description), in Claude Code's shape. */
export const listing = (skills: ReadonlyArray<Skill>): string =>
  [
    "<available_skills>",
    ...skills.map(
      (s) =>
        `<skill>\n<name>\n${s.name}\n</name>\n<description>\n${s.description}\n</description>\n<location>\n${s.source}\n</location>\n</skill>`
    ),
    "</available_skills>"
  ].join("\n")

/**
 * What the model is given when it loads a skill: its base directory (so it can read the skill's other files) and
 * its instructions; `args` replace `$ARGUMENTS` in the body, or follow it.
 */
export const loadedText = (skill: Skill, args: string | undefined): string => {
  const given = args?.trim() ?? ""
  const body =
    given === ""
      ? skill.body
      : skill.body.includes("$ARGUMENTS")
        ? skill.body.replaceAll("$ARGUMENTS", given)
        : `${skill.body}\n\nARGUMENTS: ${given}`
  return `Base directory for this skill: ${skill.dir}\n\n${body}`
}

/**
 * The rules a loaded skill adds for the rest of the session (its `allowed-tools`, as allow rules; `/p` patterns
 * anchored at the project root).
 */
export const grantedRules = (skill: Skill, projectDir: string): ReadonlyArray<PermissionRule.Rule> =>
  skill.allowedTools.flatMap((entry) => {
    const rule = PermissionRule.parse(entry, {
      behavior: "allow",
      source: `skill ${skill.name} (${skill.file})`,
      root: projectDir
    })
    return Either.isRight(rule) ? [rule.right] : []
  })
