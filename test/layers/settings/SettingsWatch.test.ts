import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Logger, Option, Queue, Schema, Stream, TestClock } from "effect"
import * as Tool from "../../../src/domain/Tool.js"
import * as RulePermissionPolicy from "../../../src/layers/permissions/RulePermissionPolicy.js"
import * as SettingsLoader from "../../../src/layers/settings/SettingsLoader.js"
import * as SettingsWatch from "../../../src/layers/settings/SettingsWatch.js"
import * as TreeSitterShellAnalyzer from "../../../src/layers/shell/TreeSitterShellAnalyzer.js"
import { LiveSettings, type SettingsEvent } from "../../../src/services/LiveSettings.js"
import { PermissionPolicy } from "../../../src/services/PermissionPolicy.js"
import { ToolPolicies } from "../../../src/services/ToolPolicies.js"

const root = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-live-settings-")))
afterAll(() => Fs.rmSync(root, { recursive: true, force: true }))
let n = 0
/** A project with `.claude/settings.json` holding `text` (no `.claude` when undefined); HOME is an empty folder in it. */
const project = (text: string | undefined) => {
  const dir = Path.join(root, `p${n++}`)
  Fs.mkdirSync(dir, { recursive: true })
  if (text !== undefined) {
    Fs.mkdirSync(Path.join(dir, ".claude"))
    Fs.writeFileSync(Path.join(dir, ".claude", "settings.json"), text)
  }
  return { dir, file: Path.join(dir, ".claude", "settings.json") }
}
const denying = (...rules: ReadonlyArray<string>) => JSON.stringify({ permissions: { deny: rules } })

/** The live settings of `dir` (quiet period 100 ms), following `changes` when given, else watching the files. */
const live = (dir: string, changes?: Stream.Stream<string>) => {
  const options = { projectDir: dir, home: Path.join(dir, "home") }
  return SettingsWatch.layer(options, changes).pipe(
    Layer.provideMerge(SettingsLoader.layer(options)),
    Layer.provideMerge(NodeFileSystem.layer)
  )
}

/** The live settings service of `dir`, built in the test's scope. */
const build = (dir: string, changes?: Stream.Stream<string>) =>
  Effect.map(Layer.build(live(dir, changes)), (context) => ({
    live: Context.get(context, LiveSettings),
    policies: Context.get(context, ToolPolicies)
  }))

const deniedBy = (service: LiveSettings["Type"]) =>
  Effect.map(service.current, (s) => s.permissions.deny.map((r) => r.text))

/** Writes `text` until the watcher reports a reload (the watch is armed by a fiber of its own, so a first write may come before it). */
const writeUntilSeen = (file: string, text: string, events: Queue.Dequeue<SettingsEvent>) =>
  Effect.gen(function* () {
    for (let attempt = 0; attempt < 40; attempt++) {
      yield* Effect.sync(() => {
        Fs.mkdirSync(Path.dirname(file), { recursive: true })
        Fs.writeFileSync(file, text)
      })
      const event = yield* Queue.take(events).pipe(Effect.timeout("500 millis"), Effect.option)
      if (Option.isSome(event)) return event.value
    }
    return yield* Effect.die(new Error(`no reload seen after writing ${file}`))
  })

/** Warnings logged while `effect` runs. */
const warningsOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const warnings: Array<string> = []
    const logger = Logger.make(({ logLevel, message }) => {
      if (logLevel._tag === "Warning") warnings.push(String(Array.isArray(message) ? message[0] : message))
    })
    const value = yield* effect.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
    return { value, warnings }
  })

describe("SettingsWatch (live settings)", () => {
  it.scoped("changes within the quiet period are read once, when it has passed (TestClock)", () =>
    Effect.gen(function* () {
      const p = project(denying())
      const changes = yield* Queue.unbounded<string>()
      const { live } = yield* build(p.dir, Stream.fromQueue(changes))
      const events = yield* live.subscribe
      Fs.writeFileSync(p.file, denying("Bash"))
      yield* Queue.offer(changes, p.file)
      yield* TestClock.adjust("60 millis")
      yield* Queue.offer(changes, p.file)
      yield* TestClock.adjust("60 millis")
      // 120 ms after the first change but 60 after the last: not read yet
      expect(yield* Queue.size(events)).toBe(0)
      expect(yield* deniedBy(live)).toEqual([])
      yield* TestClock.adjust("40 millis")
      expect(yield* Queue.take(events)).toEqual({ _tag: "Applied", file: p.file, sources: [p.file] })
      expect(yield* deniedBy(live)).toEqual(["Bash"])
      yield* TestClock.adjust("1 second")
      expect(yield* Queue.size(events)).toBe(0)
    })
  )

  it.scoped("a broken edit keeps the last good settings and warns once, naming the file and line", () =>
    Effect.gen(function* () {
      const p = project(denying("Bash"))
      const { live } = yield* build(p.dir, Stream.never)
      const events = yield* live.subscribe
      Fs.writeFileSync(p.file, '{"permissions":\n  {"deny": [')
      const { warnings } = yield* warningsOf(Effect.zipRight(live.reload(p.file), live.reload(p.file)))
      expect(warnings).toEqual([
        `Invalid settings file ${p.file}:2:13: the JSON ends too early (the settings in force stay as they were until the file is fixed)`
      ])
      expect([...(yield* Queue.takeAll(events))]).toMatchObject([{ _tag: "Rejected", file: p.file }])
      expect(yield* deniedBy(live)).toEqual(["Bash"])
      // another fault is another warning
      Fs.writeFileSync(p.file, JSON.stringify({ permissions: { deny: "Bash" } }))
      const shape = yield* warningsOf(live.reload(p.file))
      expect(shape.warnings).toHaveLength(1)
      expect(shape.warnings[0]).toContain(`Invalid settings file ${p.file}: at permissions.deny`)
      expect(yield* deniedBy(live)).toEqual(["Bash"])
      // fixed: applied; the same fault again after a good file is warned about again
      Fs.writeFileSync(p.file, denying("Read"))
      yield* live.reload(p.file)
      expect(yield* deniedBy(live)).toEqual(["Read"])
      Fs.writeFileSync(p.file, '{"permissions":\n  {"deny": [')
      expect((yield* warningsOf(live.reload(p.file))).warnings).toHaveLength(1)
      expect(yield* deniedBy(live)).toEqual(["Read"])
      expect([...(yield* Queue.takeAll(events))].map((e) => e._tag)).toEqual(["Rejected", "Applied", "Rejected"])
    })
  )

  it.scoped("an unchanged reload publishes nothing; tool policies follow the file", () =>
    Effect.gen(function* () {
      const p = project(denying())
      const { live, policies } = yield* build(p.dir, Stream.never)
      const events = yield* live.subscribe
      yield* live.reload(p.file)
      expect(yield* Queue.size(events)).toBe(0)
      expect(yield* policies.current).toEqual([])
      Fs.writeFileSync(p.file, JSON.stringify({ toolPolicies: { "mcp__github__*": { timeoutMs: 5000 } } }))
      yield* live.reload(p.file)
      expect((yield* policies.current).map(([key]) => key)).toEqual(["mcp__github__*"])
    })
  )

  it.live("an edit of a watched file (node fs.watch) is applied", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const p = project(denying())
        const { live } = yield* build(p.dir)
        const events = yield* live.subscribe
        const event = yield* writeUntilSeen(p.file, denying("WebFetch"), events)
        expect(event).toEqual({ _tag: "Applied", file: p.file, sources: [p.file] })
        expect(yield* deniedBy(live)).toEqual(["WebFetch"])
      })
    )
  )

  it.live("a .claude directory made after the start is watched for and then watched", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const p = project(undefined)
        const { live } = yield* build(p.dir)
        const events = yield* live.subscribe
        yield* writeUntilSeen(p.file, denying("Bash"), events)
        expect(yield* deniedBy(live)).toEqual(["Bash"])
        // now watched in .claude itself
        const second = yield* writeUntilSeen(p.file, denying("Read"), events)
        expect(second._tag).toBe("Applied")
        expect(yield* deniedBy(live)).toEqual(["Read"])
      })
    )
  )

  it.scoped("the rule policy's whole-tool deny (the pool's filter) follows the settings from the next turn", () =>
    Effect.gen(function* () {
      const p = project(denying())
      const options = { projectDir: p.dir, home: Path.join(p.dir, "home") }
      const context = yield* Layer.build(
        RulePermissionPolicy.layer.pipe(
          Layer.provideMerge(SettingsWatch.layer(options, Stream.never)),
          Layer.provideMerge(Layer.merge(SettingsLoader.layer(options), TreeSitterShellAnalyzer.layer)),
          Layer.provideMerge(NodeFileSystem.layer)
        )
      )
      const policy = Context.get(context, PermissionPolicy)
      const live = Context.get(context, LiveSettings)
      const webFetch = yield* Tool.make({
        name: "WebFetch",
        description: "fetches",
        input: Schema.Struct({}),
        output: Schema.String,
        call: () => Effect.succeed("page")
      })
      expect(policy.isToolDenied(webFetch)).toBe(false)
      Fs.writeFileSync(p.file, denying("WebFetch"))
      yield* live.reload(p.file)
      expect(policy.isToolDenied(webFetch)).toBe(true)
      // a broken edit leaves the deny in force
      Fs.writeFileSync(p.file, "{")
      yield* live.reload(p.file)
      expect(policy.isToolDenied(webFetch)).toBe(true)
    })
  )
})
