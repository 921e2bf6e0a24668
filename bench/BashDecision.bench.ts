/**
 * Times one permission decision for very long Bash command lines (a 100 KB line of many commands, a 100 KB line of
 * one command with many distinct paths, a 50,000-word line), printing one JSON object per line:
 * {name, bytes, words, ms, analyzeMs, ratio} where ratio is the decision time over the analysis time measured in the
 * same run (what path checks add on top of parsing). Run: node --import tsx bench/BashDecision.bench.ts [name part]
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { Effect, Either, Layer } from "effect"
import * as PermissionRule from "../src/domain/PermissionRule.js"
import * as RulePermissionPolicy from "../src/layers/permissions/RulePermissionPolicy.js"
import * as TreeSitterShellAnalyzer from "../src/layers/shell/TreeSitterShellAnalyzer.js"
import * as Settings from "../src/services/Settings.js"
import { ShellAnalyzer } from "../src/services/ShellAnalyzer.js"
import { bashRequest } from "../test/fixtures/BashDecision.js"

const root = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-bench-")))
const project = Path.join(root, "project")
Fs.mkdirSync(`${project}/src`, { recursive: true })
Fs.mkdirSync(`${project}/secrets`, { recursive: true })
for (let i = 0; i < 200; i++) Fs.writeFileSync(`${project}/src/f${i}.ts`, "")
Fs.symlinkSync("secrets", `${project}/link`)

const origin = { behavior: "deny" as const, source: `${project}/.claude/settings.json`, root: project }
const settings = Settings.layerStatic({
  allow: [],
  ask: [],
  deny: Either.getOrThrow(PermissionRule.parseAll(["Read(./secrets/**)", "Bash(rm:*)"], origin)),
  defaultMode: "default",
  additionalDirectories: [],
  home: root,
  projectDir: project
})

const lines: ReadonlyArray<readonly [string, string]> = [
  [
    "100 KB: cat of existing files, joined by &&",
    Array.from({ length: 6000 }, (_, i) => `cat src/f${i % 200}.ts`)
      .join(" && ")
      .slice(0, 100_000)
      .replace(/ &?&? ?[^ ]*$/, "")
  ],
  [
    "100 KB: one ls of distinct paths",
    `ls ${Array.from({ length: 14_000 }, (_, i) => `d${i}/x`).join(" ")}`.slice(0, 100_000)
  ],
  ["50,000 words: one echo", `echo ${Array.from({ length: 50_000 }, (_, i) => `w${i}`).join(" ")}`],
  [
    "50,000 words: cat through a symlinked dir",
    `cat ${Array.from({ length: 50_000 }, (_, i) => `link/k${i}`).join(" ")}`
  ]
]

const program = Effect.gen(function* () {
  const analyzer = yield* ShellAnalyzer
  const policy = yield* RulePermissionPolicy.make
  const only = process.argv[2]
  for (const [name, command] of lines) {
    if (only !== undefined && !name.includes(only)) continue
    const start = performance.now()
    analyzer.analyze(command)
    const analyzeMs = performance.now() - start
    const begin = performance.now()
    const decision = yield* policy.decide(bashRequest(command, project, "default", "toolu_bench"))
    const ms = performance.now() - begin
    console.log(
      JSON.stringify({
        name,
        bytes: command.length,
        words: command.split(/\s+/).length,
        behavior: decision.behavior,
        reason: decision.reason.slice(0, 120),
        ms: Math.round(ms),
        analyzeMs: Math.round(analyzeMs),
        ratio: Math.round((ms / analyzeMs) * 10) / 10
      })
    )
  }
})

Effect.runPromise(
  program.pipe(Effect.provide(Layer.mergeAll(TreeSitterShellAnalyzer.layer, NodeFileSystem.layer, settings)))
).finally(() => Fs.rmSync(root, { recursive: true, force: true }))
