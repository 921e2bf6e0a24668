/**
 * Bash decision time per command over the corpora (issue 28's acceptance): every command of the everyday corpus
 * (scripts/everyday-corpus.json) and of the adversarial corpus's main lists (scripts/bypass-corpus.json), decided
 * under the everyday corpus's S1 settings (Read deny rules for `.env`, `.env.*`, `secrets/**`) in its real git
 * project. Each command is decided twice and the second time is kept (the first warms the grammar and the caches
 * of the code, not of the call: a new input object is analysed again). Prints one JSON line:
 * {commands, medianMs, p99Ms, maxMs, firstMedianMs, analyzeMedianMs, ratio} where ratio is the median decision time
 * over the median analysis time (parsing alone) measured in the same run, and firstMedianMs the median of the first
 * decisions (git's answers not yet kept: see GitStamps). Target: medianMs ≤ 2.
 * Run: node --import tsx bench/BashCorpusDecision.bench.ts
 */
import * as Fs from "node:fs"
import { NodeFileSystem } from "@effect/platform-node"
import { Effect, Either, Layer } from "effect"
import * as PermissionRule from "../src/domain/PermissionRule.js"
import * as RulePermissionPolicy from "../src/layers/permissions/RulePermissionPolicy.js"
import * as TreeSitterShellAnalyzer from "../src/layers/shell/TreeSitterShellAnalyzer.js"
import * as Settings from "../src/services/Settings.js"
import { ShellAnalyzer } from "../src/services/ShellAnalyzer.js"
import { bashRequest } from "../test/fixtures/BashDecision.js"
import * as Everyday from "../test/fixtures/EverydayCorpus.js"

const everyday = Everyday.loadCorpus()
const bypass = JSON.parse(Fs.readFileSync(new URL("../scripts/bypass-corpus.json", import.meta.url), "utf8")) as {
  readonly bypass: ReadonlyArray<string>
  readonly safe: ReadonlyArray<string>
}
const commands = [...everyday.commands.map((c) => c.command), ...bypass.bypass, ...bypass.safe]

const project = Everyday.makeProject()
const origin = { behavior: "deny" as const, source: `${project.dir}/.claude/settings.json`, root: project.dir }
const settings = Settings.layerStatic({
  allow: [],
  ask: [],
  deny: Either.getOrThrow(PermissionRule.parseAll(everyday.settings.S1.deny ?? [], origin)),
  defaultMode: "default",
  additionalDirectories: [],
  home: project.root,
  projectDir: project.dir
})

const quantile = (sorted: ReadonlyArray<number>, q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0
const round = (ms: number) => Math.round(ms * 1000) / 1000

const program = Effect.gen(function* () {
  const analyzer = yield* ShellAnalyzer
  const policy = yield* RulePermissionPolicy.make
  const decisions: Array<number> = []
  const firsts: Array<number> = []
  const analyses: Array<number> = []
  for (const command of commands) {
    const first = performance.now()
    yield* policy.decide(bashRequest(command, project.dir, "default", "toolu_bench"))
    firsts.push(performance.now() - first)
    const begin = performance.now()
    yield* policy.decide(bashRequest(command, project.dir, "default", "toolu_bench"))
    decisions.push(performance.now() - begin)
    const start = performance.now()
    analyzer.analyze(command)
    analyses.push(performance.now() - start)
  }
  decisions.sort((a, b) => a - b)
  analyses.sort((a, b) => a - b)
  firsts.sort((a, b) => a - b)
  const median = quantile(decisions, 0.5)
  const analyzeMedian = quantile(analyses, 0.5)
  console.log(
    JSON.stringify({
      name: "Bash decision per command over the corpora (S1)",
      commands: commands.length,
      medianMs: round(median),
      p99Ms: round(quantile(decisions, 0.99)),
      maxMs: round(decisions[decisions.length - 1] ?? 0),
      firstMedianMs: round(quantile(firsts, 0.5)),
      analyzeMedianMs: round(analyzeMedian),
      ratio: Math.round((median / analyzeMedian) * 10) / 10
    })
  )
})

Effect.runPromise(
  program.pipe(Effect.provide(Layer.mergeAll(TreeSitterShellAnalyzer.layer, NodeFileSystem.layer, settings)))
).finally(() => project.remove())
