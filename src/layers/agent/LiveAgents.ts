/**
 * Sub-agent definitions that follow their files (docs/library.md, "Live configuration"): `~/.claude/agents` and
 * `<project>/.claude/agents` are watched like the skills folders, and after an edit (and 100 ms of quiet) the
 * definitions are read again; the next turn's Agent tool lists them. A definition file that breaks mid-session keeps
 * the definition it last gave, with one warning naming the file and the field or line; a file that was never good
 * is left out. Each reload that changes something is logged, naming what was added, changed and removed.
 *
 * A folder that does not exist yet is watched for through its nearest existing parent, so `.claude/agents` made
 * mid-session is followed from then on.
 */
import * as Path from "node:path"
import { FileSystem } from "@effect/platform"
import { Duration, Effect, Option, Ref, Schedule, type Scope, Stream, SubscriptionRef } from "effect"
import * as AgentDefinition from "../../domain/AgentDefinition.js"
import type { InvalidInputError } from "../../domain/Errors.js"
import { LiveSettings } from "../../services/LiveSettings.js"
import * as AgentDefinitions from "./AgentDefinitions.js"

/** The definitions now; read it at the start of each turn. */
export type Current = Effect.Effect<ReadonlyArray<AgentDefinition.AgentDefinition>>

/** How the folders are followed. */
export interface FollowOptions {
  /** Milliseconds without a further change before the folders are read (default 100). */
  readonly quietMs?: number | undefined
  /** Milliseconds between looks for an agents folder that appeared or went (default 2000). */
  readonly rescanMs?: number | undefined
  /** Watch even without live settings (default: only when a LiveSettings service is present). */
  readonly always?: boolean | undefined
}

/** One directory watched: an agents folder itself (any `*.md` in it), or the nearest parent it will appear in. */
interface Target {
  readonly dir: string
  /** The name in `dir` that concerns us; undefined: `dir` is the agents folder. */
  readonly child: string | undefined
}

const sameTargets = (a: ReadonlyArray<Target>, b: ReadonlyArray<Target>) =>
  a.length === b.length && a.every((t, i) => t.dir === b[i]!.dir && t.child === b[i]!.child)

/** What changed between two listings, for the log line; empty when nothing did. */
export const changes = (
  before: ReadonlyArray<AgentDefinition.AgentDefinition>,
  after: ReadonlyArray<AgentDefinition.AgentDefinition>
): string => {
  const named = (list: ReadonlyArray<AgentDefinition.AgentDefinition>) => new Map(list.map((d) => [d.name, d]))
  const was = named(before)
  const now = named(after)
  const added = [...now.keys()].filter((n) => !was.has(n))
  const removed = [...was.keys()].filter((n) => !now.has(n))
  const changed = [...now.keys()].filter((n) => was.has(n) && JSON.stringify(was.get(n)) !== JSON.stringify(now.get(n)))
  return [
    added.length > 0 ? `added ${added.join(", ")}` : "",
    changed.length > 0 ? `changed ${changed.join(", ")}` : "",
    removed.length > 0 ? `removed ${removed.join(", ")}` : ""
  ]
    .filter((s) => s !== "")
    .join("; ")
}

/**
 * Loads the definitions (a bad file at start fails, as `AgentDefinitions.load` does) and, when settings are live,
 * follows the agents folders for the scope. Returns the definitions now.
 */
export const follow = (
  locations: AgentDefinitions.Locations,
  options: FollowOptions = {}
): Effect.Effect<Current, InvalidInputError, FileSystem.FileSystem | Scope.Scope> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const state = yield* Ref.make(yield* AgentDefinitions.load(locations))
    const watching = options.always === true || Option.isSome(yield* Effect.serviceOption(LiveSettings))
    if (!watching) return Ref.get(state)

    const folders: ReadonlyArray<readonly [string, AgentDefinition.AgentSource]> = [
      ...(locations.home === undefined ? [] : [[Path.join(locations.home, ".claude", "agents"), "user"] as const]),
      [Path.join(locations.projectDir, ".claude", "agents"), "project"] as const
    ]
    // each problem is said once while it stays; fixed and broken again, it is said again
    let warned = new Set<string>()
    const reload = Effect.gen(function* () {
      const before = yield* Ref.get(state)
      const read = yield* Effect.forEach(folders, ([dir, source]) => AgentDefinitions.readEach(dir, source))
      const lists = read.map((readings) => AgentDefinitions.reconcile(readings, before))
      const problems = lists.flatMap((l) => l.problems).map(AgentDefinition.problemText)
      for (const text of new Set(problems)) {
        if (!warned.has(text)) {
          yield* Effect.logWarning(
            `agent definition ${text} (the last good definition from this file, if any, stays until it is fixed)`
          )
        }
      }
      warned = new Set(problems)
      const after = AgentDefinition.merge([AgentDefinition.generalPurpose], ...lists.map((l) => l.definitions))
      const what = changes(before, after)
      if (what === "") return
      yield* Ref.set(state, after)
      yield* Effect.logInfo(`Agents reloaded (${what}): the next turn offers the new listing`)
    }).pipe(Effect.provideService(FileSystem.FileSystem, fs))

    const isDir = (dir: string) =>
      fs.stat(dir).pipe(
        Effect.map((info) => info.type === "Directory"),
        Effect.orElseSucceed(() => false)
      )
    const targetOf = (folder: string) =>
      Effect.gen(function* () {
        let dir = folder
        let child: string | undefined
        while (!(yield* isDir(dir)) && Path.dirname(dir) !== dir) {
          child = Path.basename(dir)
          dir = Path.dirname(dir)
        }
        return { dir, child } satisfies Target
      })
    const targetsNow = Effect.forEach(folders, ([folder]) => targetOf(folder))
    const targets = yield* SubscriptionRef.make(yield* targetsNow)
    // a folder that appeared (or went) since: watch the new set, and read again (its files may predate the watch)
    const retarget = Effect.gen(function* () {
      const next = yield* targetsNow
      if (sameTargets(yield* SubscriptionRef.get(targets), next)) return false
      yield* SubscriptionRef.set(targets, next)
      return true
    })
    const watchOne = (target: Target) =>
      fs.watch(target.dir).pipe(
        Stream.filter((event) => {
          const name = Path.basename(event.path)
          return target.child === undefined ? name.endsWith(".md") : name === target.child
        }),
        Stream.catchAll(() => Stream.empty)
      )
    yield* targets.changes.pipe(
      Stream.flatMap((list) => Stream.mergeAll(list.map(watchOne), { concurrency: "unbounded" }), { switch: true }),
      Stream.debounce(Duration.millis(options.quietMs ?? 100)),
      Stream.runForEach(() =>
        Effect.zipRight(
          reload,
          Effect.flatMap(retarget, (moved) => (moved ? reload : Effect.void))
        )
      ),
      Effect.forkScoped
    )
    yield* retarget.pipe(
      Effect.flatMap((moved) => (moved ? reload : Effect.void)),
      Effect.repeat(Schedule.spaced(Duration.millis(options.rescanMs ?? 2000))),
      Effect.forkScoped
    )
    return Ref.get(state)
  })
