import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import * as SettingsWatch from "../../src/domain/SettingsWatch.js"

describe("SettingsWatch targets", () => {
  it("watches each file through its directory, one target per directory", () => {
    const existing = new Set(["/", "/home", "/home/u", "/home/u/.claude", "/p", "/p/.claude"])
    expect(
      SettingsWatch.targetsOf(
        ["/home/u/.claude/settings.json", "/p/.claude/settings.json", "/p/.claude/settings.local.json"],
        existing
      )
    ).toEqual([
      { dir: "/home/u/.claude", names: ["settings.json"] },
      { dir: "/p/.claude", names: ["settings.json", "settings.local.json"] }
    ])
  })

  it("a missing directory is watched for through its nearest existing ancestor", () => {
    expect(SettingsWatch.targetsOf(["/p/.claude/settings.json"], new Set(["/", "/p"]))).toEqual([
      { dir: "/p", names: [".claude"] }
    ])
  })

  it("an event concerns a target by the name it carries (relative from fs.watch, absolute from parcel)", () => {
    const target = { dir: "/p/.claude", names: ["settings.json"] }
    expect(SettingsWatch.concerns(target, "settings.json")).toBe(true)
    expect(SettingsWatch.concerns(target, "/p/.claude/settings.json")).toBe(true)
    expect(SettingsWatch.concerns(target, "settings.json.swp")).toBe(false)
    expect(SettingsWatch.concerns(target, "agents")).toBe(false)
  })

  const segment = FastCheck.constantFrom("a", "b", ".claude", "p")
  const file = FastCheck.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => `/${parts.join("/")}/f.json`)

  it.prop(
    "every target is an existing directory, and each file's target is its nearest existing ancestor, named by the next step towards it",
    [FastCheck.array(file, { minLength: 1, maxLength: 4 }), FastCheck.array(FastCheck.boolean(), { maxLength: 40 })],
    ([files, keep]) => {
      const candidates = SettingsWatch.candidateDirs(files)
      const existing = new Set(candidates.filter((dir, i) => dir === "/" || (keep[i] ?? true)))
      const targets = SettingsWatch.targetsOf(files, existing)
      for (const t of targets) expect(existing.has(t.dir)).toBe(true)
      for (const f of files) {
        let dir = Path.dirname(f)
        while (!existing.has(dir)) dir = Path.dirname(dir)
        const next = Path.relative(dir, f).split(Path.sep)[0]
        expect(targets.find((t) => t.dir === dir)?.names).toContain(next)
      }
      expect(new Set(targets.map((t) => t.dir)).size).toBe(targets.length)
    }
  )
})
