import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck } from "effect"
import * as Argv from "../../src/programs/Argv.js"
import { table } from "../../src/programs/cli.js"

const prepare = (line: string) => Argv.prepare(line === "" ? [] : line.split(" "), table)
const errorOf = (line: string) =>
  Either.match(prepare(line), { onLeft: (e) => `${e.command}: ${e.message}`, onRight: () => "accepted" })
const tokensOf = (line: string) =>
  Either.match(prepare(line), { onLeft: (e) => [`error: ${e.message}`], onRight: (tokens) => [...tokens] })

describe("Argv.commandTable", () => {
  it("reads every command path and its flags from the commands", () => {
    expect([...table.flags.keys()].sort()).toEqual([
      "exec",
      "mcp list",
      "mcp login",
      "mcp logout",
      "mcp serve",
      "permissions check",
      "resume",
      "run",
      "sandbox check",
      "serve",
      "sessions",
      "timeline",
      "tools list",
      "tools schema",
      "tools search"
    ])
    const exec = table.flags.get("exec")!
    expect(exec.get("--output")).toMatchObject({ kind: "choice", choices: ["text", "json", "stream-json"] })
    expect(exec.get("--max-concurrency")?.kind).toBe("integer")
    expect(exec.get("--cwd")?.kind).toBe("directory")
    expect(table.flags.get("tools list")?.get("--json")?.kind).toBe("boolean")
    expect(exec.get("--sandbox")?.kind).toBe("boolean")
    expect(exec.get("--no-sandbox")?.kind).toBe("boolean")
    expect(exec.get("--timeline")?.kind).toBe("value")
    expect(table.flags.get("timeline")?.get("-o")?.kind).toBe("value")
    expect(table.flags.get("run")?.get("--durable")?.kind).toBe("boolean")
    expect(table.flags.get("resume")?.get("--database")?.kind).toBe("value")
    expect(table.flags.get("serve")?.get("--runner-port")?.kind).toBe("integer")
    expect(table.flags.get("mcp login")?.get("--timeout")?.kind).toBe("integer")
  })
})

describe("Argv.prepare", () => {
  it("names an unknown flag with the nearest known one", () => {
    expect(errorOf("exec batch.jsonl --outptu json")).toBe(
      "armature exec: unknown flag --outptu (did you mean --output?)"
    )
    expect(errorOf("tools list --jsno")).toBe("armature tools list: unknown flag --jsno (did you mean --json?)")
    expect(errorOf("exec --frobnicate")).toBe("armature exec: unknown flag --frobnicate")
  })

  it("names the flag and what it accepts in every value error", () => {
    expect(errorOf("exec --output jsn")).toBe('armature exec: --output: "jsn" is not one of text, json, stream-json')
    expect(errorOf("exec --permission-mode yolo")).toBe(
      'armature exec: --permission-mode: "yolo" is not one of default, acceptEdits, plan, bypassPermissions, dontAsk'
    )
    expect(errorOf("exec --max-concurrency abc")).toBe(
      'armature exec: --max-concurrency takes an integer ≥ 1, got "abc"'
    )
    expect(errorOf("exec --max-concurrency 0")).toBe("armature exec: --max-concurrency must be an integer ≥ 1, got 0")
    expect(errorOf("run hi --max-turns 0")).toBe("armature run: --max-turns must be an integer ≥ 1, got 0")
    expect(errorOf("exec --output")).toBe("armature exec: --output needs a value (one of text, json, stream-json)")
    expect(errorOf("exec --cwd /no/such/dir")).toBe("armature exec: --cwd: /no/such/dir is not a directory")
  })

  it("names a mistyped command with the nearest one", () => {
    expect(errorOf("tools lst")).toBe(
      "armature tools: unknown command lst (did you mean list?); commands: list, search, schema"
    )
    expect(errorOf("exce")).toMatch(/^armature: unknown command exce \(did you mean exec\?\)/)
  })

  it("accepts Claude Code's spellings and puts options first", () => {
    expect(tokensOf("exec b.jsonl --allowedTools Bash(ls:*) --output-format=json")).toEqual([
      "exec",
      "--allowed-tools",
      "Bash(ls:*)",
      "--output",
      "json",
      "b.jsonl"
    ])
    expect(tokensOf("run -p hello --verbose --output-format stream-json --disallowedTools Write")).toEqual([
      "run",
      "--output",
      "stream-json",
      "--disallowed-tools",
      "Write",
      "hello"
    ])
    expect(tokensOf("-v")).toEqual(["--version"])
    expect(tokensOf("exec -- --not-a-flag")).toEqual(["exec", "--not-a-flag"])
  })

  it("takes several rules after --allowedTools/--disallowedTools, ending at the first word that is not a rule", () => {
    const split = (tokens: ReadonlyArray<string>) =>
      Either.match(Argv.prepare(tokens, table), { onLeft: (e) => [`error: ${e.message}`], onRight: (t) => [...t] })
    expect(split(["run", "--allowedTools", "Read", "Bash(git log:*)", "mcp__docs", "fix the bug"])).toEqual([
      "run",
      "--allowed-tools",
      "Read",
      "--allowed-tools",
      "Bash(git log:*)",
      "--allowed-tools",
      "mcp__docs",
      "fix the bug"
    ])
    // a prompt that is one word, a file, a flag: each ends the list
    expect(split(["run", "--disallowedTools", "Bash", "hello"])).toEqual(["run", "--disallowed-tools", "Bash", "hello"])
    expect(split(["exec", "--allowedTools", "Read,Edit", "Glob", "batch.jsonl"])).toEqual([
      "exec",
      "--allowed-tools",
      "Read,Edit",
      "--allowed-tools",
      "Glob",
      "batch.jsonl"
    ])
    expect(split(["run", "--allowedTools", "Read", "--output", "json", "Write"])).toEqual([
      "run",
      "--allowed-tools",
      "Read",
      "--output",
      "json",
      "Write"
    ])
    // with `=` the flag has its one value
    expect(split(["run", "--allowedTools=Read", "Write"])).toEqual(["run", "--allowed-tools", "Read", "Write"])
  })

  it.prop(
    "a word with a space outside parentheses is never taken as a further rule",
    [
      FastCheck.constantFrom("Read", "Bash(ls:*)", "mcp__x", "Edit,Write"),
      FastCheck.stringMatching(/^[A-Za-z ]{0,8}$/)
    ],
    ([rule, rest]) => {
      expect(Argv.isRuleWord(rule)).toBe(true)
      expect(Argv.isRuleWord(`${rule} ${rest}Read`)).toBe(false)
    }
  )

  it("leaves -p and --verbose to run: elsewhere they are unknown", () => {
    expect(errorOf("exec -p")).toBe("armature exec: unknown flag -p")
  })

  it.prop(
    "any flag that is not one of the command's is refused, named as written",
    [FastCheck.stringMatching(/^--[a-z][a-z-]{0,14}$/)],
    ([flag]) => {
      const known = table.flags.get("exec")!.has(flag) || flag in Argv.aliases
      const result = prepare(`exec ${flag} x`)
      if (known) return
      expect(Either.isLeft(result)).toBe(true)
      if (Either.isLeft(result)) expect(result.left.message).toMatch(new RegExp(`^unknown flag ${flag}( |$)`))
    }
  )

  it.prop(
    "an integer flag accepts exactly the integers at or above its limit",
    [FastCheck.oneof(FastCheck.integer({ min: -5, max: 50 }).map(String), FastCheck.string({ maxLength: 4 }))],
    ([value]) => {
      const ok = /^-?\d+$/.test(value.trim()) && Number(value) >= 1
      expect(Either.isRight(Argv.prepare(["exec", "--max-concurrency", value], table))).toBe(ok)
    }
  )
})
