/**
 * One shell analysis per Bash call: the command line is parsed once and that analysis serves admission
 * (`isConcurrencySafe`), the permission decision, `isReadOnly` and the lenient exit check. Counted through a
 * ShellAnalyzer layer that wraps the tree-sitter one, with real processes through the whole engine.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Armature from "../../../src/Armature.js"
import * as TreeSitterShellAnalyzer from "../../../src/layers/shell/TreeSitterShellAnalyzer.js"
import { ShellAnalyzer } from "../../../src/services/ShellAnalyzer.js"
import { ToolExecutor } from "../../../src/services/ToolExecutor.js"

/** A ShellAnalyzer that counts the command lines it is asked to analyse. */
const counting = (seen: Map<string, number>) =>
  Layer.effect(
    ShellAnalyzer,
    Effect.map(ShellAnalyzer, (real) =>
      ShellAnalyzer.of({
        analyze: (command) => {
          seen.set(command, (seen.get(command) ?? 0) + 1)
          return real.analyze(command)
        }
      })
    )
  ).pipe(Layer.provide(TreeSitterShellAnalyzer.layer))

const bash = (id: string, command: string) => ({ type: "tool_use" as const, id, name: "Bash", input: { command } })

describe("one shell analysis per Bash call", () => {
  it.live(
    "each call's command line is parsed once: allowed, lenient exit 1, failed, and denied calls alike",
    () =>
      Effect.gen(function* () {
        const project = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-analysis-")))
        const seen = new Map<string, number>()
        const layer = Armature.layerNode({
          cwd: project,
          settingSources: [],
          stateDir: Path.join(project, ".state"),
          allowedTools: ["Bash(ls:*)"],
          overrides: { shellAnalyzer: counting(seen) }
        })
        const calls = [
          bash("toolu_1", "echo one"),
          bash("toolu_2", "grep -q absent /dev/null"),
          bash("toolu_3", "ls no-such-file"),
          bash("toolu_4", "touch written.txt")
        ]
        const results = yield* Effect.flatMap(ToolExecutor, (executor) =>
          executor.runBatchCollect(calls, { cancellation: "none" })
        ).pipe(Effect.provide(layer))
        // the results are what they were: output, a lenient exit 1, a real failure, a refusal (headless asks deny);
        // no cancellation, so that the failing call cancels no sibling whatever order they finish in
        expect(results.map((r) => [String(r.content).split("\n")[0], r.is_error === true])).toEqual([
          ["one", false],
          ["Exit code 1", false],
          [expect.stringContaining("Exit code 2"), true],
          [expect.any(String), true]
        ])
        expect(Fs.existsSync(Path.join(project, "written.txt"))).toBe(false)
        expect(Object.fromEntries(seen)).toEqual({
          "echo one": 1,
          "grep -q absent /dev/null": 1,
          "ls no-such-file": 1,
          "touch written.txt": 1
        })
      }),
    60_000
  )
})
