/**
 * Live settings (docs/library.md, "Live configuration"): the settings files are watched with the platform's
 * FileSystem.watch and read again after a quiet period; a good result replaces the settings in force (permission
 * rules, hooks, tool policies and version pins apply from the next call), a broken file is refused with one warning
 * naming the file and line, and the last good settings stay. Each reload is logged and published as an event.
 *
 * On Node the watcher is `fs.watch` (the default backend of @effect/platform-node's FileSystem); each settings
 * file is watched through its directory, without subdirectories.
 */
import * as Path from "node:path"
import { FileSystem } from "@effect/platform"
import { Context, Duration, Effect, Layer, Option, PubSub, Ref, Schedule, Stream, SubscriptionRef } from "effect"
import type * as SettingsDomain from "../../domain/Settings.js"
import * as SettingsWatch from "../../domain/SettingsWatch.js"
import * as ToolPolicy from "../../domain/ToolPolicy.js"
import { LiveSettings, type SettingsEvent, type Snapshot, snapshotOf } from "../../services/LiveSettings.js"
import { Settings } from "../../services/Settings.js"
import { ToolPolicies } from "../../services/ToolPolicies.js"
import * as SettingsLoader from "./SettingsLoader.js"

/** What to watch: the files `SettingsLoader.load` reads for these options. */
export interface WatchOptions extends SettingsLoader.LoadOptions {
  /**
   * Milliseconds without a further change before the files are read (default 100): an editor's save is often
   * several writes, and a half-written file must not be taken for a broken one.
   */
  readonly quietMs?: number | undefined
  /** Milliseconds between looks for settings directories that appeared or went (default 2000). */
  readonly rescanMs?: number | undefined
}

/** The quiet period when none is given. */
export const defaultQuietMs = 100

/** How often the watched directories are looked for again, when not given. */
export const defaultRescanMs = 2000

const fileOf = (error: SettingsDomain.SettingsError): string => ("file" in error ? error.file : error.source)

/** The parts of a snapshot a reload can change, as one comparable text. */
const fingerprint = (snapshot: Snapshot): string =>
  JSON.stringify([snapshot.permissions, snapshot.hooks, snapshot.settings, snapshot.sources])

interface State {
  readonly snapshot: Snapshot
  readonly policies: ToolPolicy.Table
}

const stateOf = (snapshot: Snapshot): State => ({
  snapshot,
  policies: ToolPolicy.tableOf(snapshot.settings.toolPolicies)
})

/**
 * Builds the live settings over the Settings service (the start values) and follows `changes`: the paths of
 * changed files, by default from watching the settings files' directories.
 */
export const make = (options: WatchOptions, changes?: Stream.Stream<string>) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const state = yield* Ref.make(stateOf(snapshotOf(yield* Settings)))
    // a mirror of the state for synchronous readers, written only where the state is
    let latest = (yield* Ref.get(state)).snapshot
    const hub = yield* PubSub.unbounded<SettingsEvent>()
    // the message of the refusal last warned about: a broken file saved again with the same fault is not re-warned
    const refused = yield* Ref.make(Option.none<string>())
    // the warnings of the last good reading (an unknown key): each is said when it appears, not at every reload
    // while it stays; fixed and brought back, it is said again
    const warned = yield* Ref.make<ReadonlySet<string>>(new Set((yield* Settings).warnings ?? []))
    const warnNew = (warnings: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        const before = yield* Ref.getAndSet(warned, new Set(warnings))
        for (const warning of new Set(warnings)) if (!before.has(warning)) yield* Effect.logWarning(warning)
      })

    const refuse = (error: SettingsDomain.SettingsError) =>
      Effect.gen(function* () {
        const previous = yield* Ref.getAndSet(refused, Option.some(error.message))
        if (Option.getOrUndefined(previous) === error.message) return
        yield* Effect.logWarning(`${error.message} (the settings in force stay as they were until the file is fixed)`)
        yield* PubSub.publish(hub, { _tag: "Rejected", file: fileOf(error), message: error.message })
      })

    // the steps other parts run before a change is put in force (LiveSettings.beforeApply)
    const steps = new Set<(next: Snapshot) => Effect.Effect<void>>()

    const apply = (file: string, snapshot: Snapshot) =>
      Effect.gen(function* () {
        yield* Ref.set(refused, Option.none())
        const changed = fingerprint((yield* Ref.get(state)).snapshot) !== fingerprint(snapshot)
        if (changed) yield* Effect.forEach([...steps], (step) => step(snapshot), { discard: true })
        yield* Ref.set(state, stateOf(snapshot))
        latest = snapshot
        if (!changed) return
        yield* Effect.logInfo(`Settings reloaded after a change to ${file}: they apply from the next call`)
        yield* PubSub.publish(hub, { _tag: "Applied", file, sources: snapshot.sources })
      })

    const reload = (file: string) =>
      SettingsLoader.load(options).pipe(
        Effect.provideService(FileSystem.FileSystem, fs),
        Effect.matchEffect({
          onFailure: refuse,
          onSuccess: ({ merged, warnings }) =>
            Effect.zipRight(
              warnNew(warnings),
              apply(file, {
                permissions: merged.permissions,
                hooks: merged.hooks,
                settings: merged.settings,
                sources: merged.sources
              })
            )
        })
      )

    const files = SettingsLoader.sourceFiles(options).map(([file]) => file)
    const isDir = (dir: string) =>
      fs.stat(dir).pipe(
        Effect.map((info) => info.type === "Directory"),
        Effect.orElseSucceed(() => false)
      )
    const targetsNow = Effect.map(Effect.filter(SettingsWatch.candidateDirs(files), isDir), (dirs) =>
      SettingsWatch.targetsOf(files, new Set(dirs))
    )
    const targets = yield* SubscriptionRef.make(yield* targetsNow)
    // a directory that appeared (or went) since: watch the new set; the first new directory, if any
    const retarget = Effect.gen(function* () {
      const next = yield* targetsNow
      const previous = yield* SubscriptionRef.get(targets)
      if (SettingsWatch.sameTargets(previous, next)) return Option.none<string>()
      yield* SubscriptionRef.set(targets, next)
      return Option.some(next.find((t) => !previous.some((p) => p.dir === t.dir))?.dir ?? next[0]?.dir ?? "")
    })

    const watchOne = (target: SettingsWatch.WatchTarget) =>
      fs.watch(target.dir).pipe(
        Stream.filter((event) => SettingsWatch.concerns(target, event.path)),
        Stream.map((event) => Path.join(target.dir, Path.basename(event.path))),
        Stream.catchAll((error) =>
          Stream.drain(Stream.fromEffect(Effect.logWarning(`Stopped watching ${target.dir}: ${error.message}`)))
        )
      )
    const watched =
      changes ??
      targets.changes.pipe(
        Stream.flatMap((list) => Stream.mergeAll(list.map(watchOne), { concurrency: "unbounded" }), { switch: true })
      )
    yield* watched.pipe(
      Stream.debounce(Duration.millis(options.quietMs ?? defaultQuietMs)),
      Stream.runForEach((file) => Effect.zipRight(reload(file), retarget)),
      Effect.forkScoped
    )
    if (changes === undefined) {
      // a directory made between a look at the tree and the arming of its parent's watch goes unseen by the
      // watchers: the tree is looked at again every few seconds (a handful of stats), and read when it changed
      yield* retarget.pipe(
        Effect.flatMap(Option.match({ onNone: () => Effect.void, onSome: reload })),
        Effect.repeat(Schedule.spaced(Duration.millis(options.rescanMs ?? defaultRescanMs))),
        Effect.forkScoped
      )
    }

    return {
      live: LiveSettings.of({
        current: Effect.map(Ref.get(state), (s) => s.snapshot),
        latest: () => latest,
        subscribe: PubSub.subscribe(hub),
        reload,
        beforeApply: (step) =>
          Effect.acquireRelease(
            Effect.sync(() => steps.add(step)),
            () => Effect.sync(() => steps.delete(step))
          ).pipe(Effect.asVoid)
      }),
      policies: ToolPolicies.of({ current: Effect.map(Ref.get(state), (s) => s.policies) })
    }
  })

/**
 * The LiveSettings service (and the ToolPolicies the executor reads at each call) for the settings files of
 * `options`, over the Settings service that read them at start. `changes` replaces the file watcher (tests,
 * or an application that learns of edits another way).
 */
export const layer = (
  options: WatchOptions,
  changes?: Stream.Stream<string>
): Layer.Layer<LiveSettings | ToolPolicies, never, Settings | FileSystem.FileSystem> =>
  Layer.scopedContext(
    Effect.map(make(options, changes), ({ live, policies }) =>
      Context.make(LiveSettings, live).pipe(Context.add(ToolPolicies, policies))
    )
  )
