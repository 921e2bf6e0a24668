/**
 * The everyday-command corpus (scripts/everyday-corpus.json, test/fixtures/EverydayCorpus.ts): at least 300 commands,
 * each with a reason, decided under S0/S1/S2 in a real git project with ignored secrets. The counts of false asks and
 * wrong allows may not rise above the bounds recorded in the corpus (lowered with every fix).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Everyday from "../fixtures/EverydayCorpus.js"

const corpus = Everyday.loadCorpus() as Everyday.Corpus & {
  readonly bounds: Record<string, { readonly falseAsks: number; readonly wrongAllows: number }>
}

describe("everyday-command corpus", () => {
  it("has at least 300 distinct commands, each with a reason and an expectation per settings", () => {
    const commands = corpus.commands.map((c) => c.command)
    expect(new Set(commands).size).toBe(commands.length)
    expect(commands.length).toBeGreaterThanOrEqual(300)
    for (const entry of corpus.commands) {
      expect(entry.why.length, entry.command).toBeGreaterThan(10)
      for (const name of Object.keys(corpus.settings)) {
        expect(["allow", "ask", "deny", "no"], entry.command).toContain(Everyday.expectationOf(entry, name))
      }
    }
  })

  it.effect(
    "stays within its bounds of false asks and wrong allows under every settings",
    () =>
      Effect.gen(function* () {
        const results = yield* Everyday.run(corpus)
        const summary = Everyday.summarize(results)
        const misfits = results.filter((r) => !Everyday.fits(r.expected, r.behavior))
        const shown = misfits.map((r) => `${r.settings} ${r.expected}→${r.behavior}: ${r.command}`).join("\n")
        for (const [name, bound] of Object.entries(corpus.bounds)) {
          expect(summary[name].falseAsks, `${name} false asks\n${shown}`).toBeLessThanOrEqual(bound.falseAsks)
          expect(summary[name].wrongAllows, `${name} wrong allows\n${shown}`).toBeLessThanOrEqual(bound.wrongAllows)
        }
      }),
    600_000
  )
})
