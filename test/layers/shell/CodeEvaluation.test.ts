import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import * as TreeSitterShellAnalyzer from "../../../src/layers/shell/TreeSitterShellAnalyzer.js"
import { ShellAnalyzer } from "../../../src/services/ShellAnalyzer.js"

/**
 * Each construct makes real bash run code hidden in a variable's value (`a[$(touch MARKER)]`). The proof runs
 * bash with the variable set beforehand and checks the marker file appears; the analysis of the construct alone
 * (the variable could come from anywhere) must say it is not read-only, with the danger named.
 */
const scratch = mkdtempSync(join(tmpdir(), "armature-eval-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

let counter = 0
/** Runs `setup; construct` in bash where `$payload` holds code that touches a fresh marker; true when it ran. */
const runsCode = (construct: string, setup = 'x="a[$payload]"'): boolean => {
  const marker = join(scratch, `marker-${counter++}`)
  const script = `payload='$(touch ${marker})'; ${setup}; ${construct}`
  spawnSync("bash", ["-c", script], { stdio: "ignore", timeout: 10_000 })
  return existsSync(marker)
}

const cases: ReadonlyArray<readonly [construct: string, danger: string, setup?: string]> = [
  [": $((x))", "arithmetic on a variable"],
  ["echo $((x+1))", "arithmetic on a variable"],
  ["echo $[x]", "arithmetic on a variable"],
  ["((x))", "arithmetic on a variable"],
  ["for ((;x<0;)); do :; done", "arithmetic on a variable"],
  ["[[ $x -eq 0 ]]", "[[ -eq ]] evaluates its operands as arithmetic"],
  ["[[ x -eq 0 ]]", "[[ -eq ]] evaluates its operands as arithmetic"],
  ["[[ -v $x ]]", "test -v evaluates array subscripts"],
  ['test -v "$x"', "test -v evaluates array subscripts"],
  ['[ -v "$x" ]', "test -v evaluates array subscripts"],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
  ["b=(1 2); echo ${b[i]}", "array subscript evaluated as arithmetic", 'i="a[$payload]"'],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
  ["echo ${b:i}", "substring offset evaluated as arithmetic", 'i="a[$payload]"; b=abc'],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
  ["echo ${!x}", "indirect expansion (! before the name)"],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
  ['echo "${x@P}"', "parameter transformation (@ operator)", 'x="$payload"'],
  ["b[i]=1", "array subscript evaluated as arithmetic", 'i="a[$payload]"']
]

layer(TreeSitterShellAnalyzer.layer)("code evaluated by bash where nothing looks like a command", (it) => {
  for (const [construct, danger, setup] of cases) {
    it.effect(JSON.stringify(construct), () =>
      Effect.gen(function* () {
        expect(runsCode(construct, setup)).toBe(true)
        const analysis = (yield* ShellAnalyzer).analyze(construct)
        expect(analysis.readOnly).toBe(false)
        expect(analysis.dangers).toContain(danger)
      })
    )
  }

  const harmless: ReadonlyArray<string> = [
    "echo $((1 + 2))",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
    "echo ${a[0]} ${a[@]} ${#x} ${x:1:2} ${x: -1} ${x:-default}",
    '[ "$x" -eq 0 ]',
    "[[ $x == y ]]",
    "[[ 1 -eq 1 ]]"
  ]
  for (const construct of harmless) {
    it.effect(`${JSON.stringify(construct)} evaluates no variable as code`, () =>
      Effect.gen(function* () {
        expect(runsCode(construct)).toBe(false)
        const analysis = (yield* ShellAnalyzer).analyze(construct)
        expect(analysis.dangers).toEqual([])
        expect(analysis.readOnly).toBe(true)
      })
    )
  }

  it.effect("an assignment used again in the same line is not read-only; unused it is", () =>
    Effect.gen(function* () {
      const analyzer = yield* ShellAnalyzer
      expect(analyzer.analyze("x=1; echo $x").readOnly).toBe(false)
      // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
      expect(analyzer.analyze("x=1; echo ${x}").readOnly).toBe(false)
      expect(analyzer.analyze("x=1; echo done").readOnly).toBe(true)
      // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
      expect(analyzer.analyze("echo ${x:=1}").dangers).toEqual(["assignment inside an expansion (= or :=)"])
    })
  )

  it.effect("declarations and reads of variables that steer programs are never read-only", () =>
    Effect.gen(function* () {
      const analyzer = yield* ShellAnalyzer
      const lines = [
        "declare PATH=/tmp",
        "typeset -x BASH_ENV=/tmp/x",
        "local LD_PRELOAD=x",
        "export PAGER=sh",
        "readonly GIT_DIR=x",
        "read PROMPT_COMMAND",
        "mapfile PS4",
        "printf -v PATH %s /tmp",
        "declare -p",
        "let x=1"
      ]
      for (const line of lines)
        expect({ line, readOnly: analyzer.analyze(line).readOnly }).toEqual({ line, readOnly: false })
    })
  )
})

describe("the bash proof itself", () => {
  it("does not fire for a constant", () => {
    expect(runsCode(": $((1))")).toBe(false)
  })
})
