/**
 * Skill: loads one of the session's skills into the conversation (Claude Code's `Skill` tool, input `{skill, args?}`):
 * the result gives the skill's base directory and its instructions. The skills are listed to the model by name and
 * description in the tool's description. A skill with `allowed-tools` grants those tools for the rest of the session
 * once it is loaded, so loading it is a permission decision of its own (an allow rule `Skill(name)` or the user's
 * approval); a skill without them only adds instructions and loads without asking. `Skill(name)` deny and ask rules
 * apply as for any tool. See docs/tools.md.
 */
import * as Path from "node:path"
import { FileSystem } from "@effect/platform"
import { Duration, Effect, Layer, Option, Ref, Schema, Stream } from "effect"
import { ToolValidationError } from "../../domain/Errors.js"
import type * as PermissionRule from "../../domain/PermissionRule.js"
import * as Skill from "../../domain/Skill.js"
import * as Tool from "../../domain/Tool.js"
import { LiveSettings } from "../../services/LiveSettings.js"
import { Settings } from "../../services/Settings.js"
import { ToolRegistry } from "../../services/ToolRegistry.js"
import * as Skills from "../agent/Skills.js"

/** The tool's name. */
export const name = "Skill"

/** The input, Claude Code's. */
export const Input = Schema.Struct({
  skill: Schema.String.annotations({ description: 'The skill name, e.g. "commit" or "pdf"' }),
  args: Schema.optional(Schema.String.annotations({ description: "Optional arguments for the skill" }))
})

/** The decoded input. */
export type Input = typeof Input.Type

/** The skill a call names (a leading `/` is accepted, as in a slash command). */
const skillNameOf = (input: { readonly skill: string }): string => input.skill.trim().replace(/^\//, "")

/** No skill of this name is offered (`validate` rejects such a call first; `call` fails too when run without it). */
export class UnknownSkill extends Schema.TaggedError<UnknownSkill>()("UnknownSkill", {
  message: Schema.String,
  skill: Schema.String
}) {}

/** The tool's description: how to use skills, and the skills available. */
export const describe = (skills: ReadonlyArray<Skill.Skill>): string =>
  `Loads a skill: a set of instructions (and files beside them) for one kind of task, written for this project or \
this user.

When a task matches a skill's description below, load the skill before doing the task and follow its \
instructions. Give the skill's name as \`skill\`, and anything it needs as \`args\`. The result tells you the \
skill's base directory: read the other files the instructions mention from there.

- Load a skill only when the task calls for it, and only once per task: its instructions stay in the conversation.
- Only the skills listed here exist.

${Skill.listing(skills)}`

/** Makes the Skill tool over the given skills; `grant` adds a loaded skill's allowed tools to the session's rules. */
export const make = (
  skills: ReadonlyArray<Skill.Skill>,
  grant: (skill: Skill.Skill) => Effect.Effect<void> = () => Effect.void
) => {
  const find = (input: Input) => skills.find((s) => s.name === skillNameOf(input))
  const grants = (input: Input) => (find(input)?.allowedTools.length ?? 0) > 0
  return Tool.make({
    name,
    description: describe(skills),
    input: Input,
    output: Schema.String,
    category: "workflow",
    searchHint: "skill instructions workflow load",
    alwaysLoad: true,
    // a skill's instructions are never cut or persisted
    maxResultSizeChars: Number.POSITIVE_INFINITY,
    // loading instructions changes nothing; a skill that grants tools changes the session's permissions
    isReadOnly: (input) => !grants(input),
    isConcurrencySafe: () => true,
    validate: (input) =>
      find(input) !== undefined
        ? Effect.void
        : Effect.fail(
            new ToolValidationError({
              message: `Unknown skill: ${skillNameOf(input)}. Available skills: ${skills.map((s) => s.name).join(", ") || "none"}`
            })
          ),
    checkPermissions: (input) =>
      Effect.succeed(
        grants(input)
          ? { behavior: "passthrough" as const }
          : { behavior: "allow" as const, reason: "the skill only adds instructions: it grants no tools" }
      ),
    summarize: (input) => skillNameOf(input),
    failure: UnknownSkill,
    call: (input) =>
      Effect.gen(function* () {
        const skill = find(input)
        if (skill === undefined) {
          return yield* new UnknownSkill({ skill: skillNameOf(input), message: `Unknown skill: ${skillNameOf(input)}` })
        }
        yield* grant(skill)
        return `Launching skill: ${skill.name}\n\n${Skill.loadedText(skill, input.args)}`
      })
  })
}

/** Adds a skill's allowed tools to the session's rules (once per skill). */
const granter = (sessionRules: Ref.Ref<ReadonlyArray<PermissionRule.Rule>>, projectDir: string) => {
  return (skill: Skill.Skill) =>
    Ref.update(sessionRules, (existing) => {
      const added = Skill.grantedRules(skill, projectDir).filter(
        (rule) => !existing.some((r) => r.source === rule.source && r.text === rule.text)
      )
      return added.length === 0 ? existing : [...existing, ...added]
    })
}

/**
 * Loads the session's skills (the project and the user's, see `Skills.load`), warns about each skill file it skips
 * (file and line, once), and registers the Skill tool when there is at least one skill. When settings are live
 * (a LiveSettings service), the skills folders that exist are watched as well: after an edit (and 100 ms of quiet)
 * the skills are read again and the Skill tool replaced, so the next turn offers the new listing.
 */
export const layer = Layer.scopedDiscard(
  Effect.gen(function* () {
    const settings = yield* Settings
    const registry = yield* ToolRegistry
    const fs = yield* FileSystem.FileSystem
    const locations = { projectDir: settings.projectDir, home: settings.home }
    const grant = granter(settings.sessionRules, settings.projectDir)
    const warned = new Set<string>()
    // the skills the registered tool lists (as text, to compare), owned by this layer's fibers one reload at a time
    let installed = { key: "[]", registered: false }
    const install = (loaded: Skills.Loaded) =>
      Effect.gen(function* () {
        for (const problem of loaded.problems) {
          const text = Skill.problemText(problem)
          if (warned.has(text)) continue
          warned.add(text)
          yield* Effect.logWarning(`skill skipped: ${text}`)
        }
        const key = JSON.stringify(loaded.skills)
        if (key === installed.key) return false
        if (installed.registered) yield* registry.unregister(name)
        const registered = loaded.skills.length > 0
        if (registered) yield* registry.register(yield* make(loaded.skills, grant)).pipe(Effect.orDie)
        installed = { key, registered }
        return true
      })
    yield* install(yield* Skills.load(locations))
    yield* Effect.addFinalizer(() => (installed.registered ? Effect.asVoid(registry.unregister(name)) : Effect.void))
    if (Option.isNone(yield* Effect.serviceOption(LiveSettings))) return
    const dirs = [Path.join(settings.home, ".claude", "skills"), Path.join(settings.projectDir, ".claude", "skills")]
    const existing = yield* Effect.filter(dirs, (dir) =>
      fs.stat(dir).pipe(
        Effect.map((info) => info.type === "Directory"),
        Effect.orElseSucceed(() => false)
      )
    )
    if (existing.length === 0) return
    yield* Stream.mergeAll(
      existing.map((dir) => fs.watch(dir, { recursive: true }).pipe(Stream.catchAll(() => Stream.empty))),
      { concurrency: "unbounded" }
    ).pipe(
      Stream.debounce(Duration.millis(100)),
      Stream.runForEach(() =>
        Effect.flatMap(Skills.load(locations), install).pipe(
          Effect.flatMap((changed) =>
            changed ? Effect.logInfo("Skills reloaded: the next turn offers the new listing") : Effect.void
          )
        )
      ),
      Effect.provideService(FileSystem.FileSystem, fs),
      Effect.forkScoped
    )
  })
)
