import { describe, expect, it } from "@effect/vitest"
import * as CommandEffect from "../../../src/domain/shell/CommandEffect.js"
import { compile } from "../../../src/domain/shell/CommandTable.js"
import * as CommandTables from "../../../src/domain/shell/CommandTables.js"
import { subjects } from "./TableArbitraries.js"

type Expected = readonly [command: string, reads: ReadonlyArray<string>, writes: ReadonlyArray<string>]

/** `"2:x"` is the word at argv index 2 naming x. */
const show = (operands: ReadonlyArray<CommandEffect.PathOperand>) => operands.map((o) => `${o.index}:${o.value}`)

const exact: ReadonlyArray<Expected> = [
  ["cp README.md --target-directory=/elsewhere", ["1:README.md"], ["2:/elsewhere"]],
  ["cp -t.git/hooks x", ["2:x"], ["1:.git/hooks"]],
  ["cp -t dir a b", ["3:a", "4:b"], ["2:dir"]],
  ["cp -vt dir a", ["3:a"], ["2:dir"]],
  ["cp -r . elsewhere", ["2:."], ["3:elsewhere"]],
  ["cp -T a b", ["2:a"], ["3:b"]],
  ["cp -- -a b", ["2:-a"], ["3:b"]],
  ["mv x y", ["1:x"], ["1:x", "2:y"]],
  ["mv --target-directory d a", ["3:a"], ["2:d", "3:a"]],
  ["ln -s target link", ["2:target"], ["3:link"]],
  ["touch a b", [], ["1:a", "2:b"]],
  ["touch -r ref x", ["2:ref"], ["3:x"]],
  ["mkdir -p a/b", [], ["2:a/b"]],
  ["mkdir -m 700 d", [], ["3:d"]],
  ["tee -a log", [], ["2:log"]],
  ["rm -rf build", [], ["2:build"]],
  ["rmdir -p a/b", [], ["2:a/b"]],
  ["uniq in out", ["1:in"], ["2:out"]],
  ["sort -o out in", ["3:in"], ["2:out"]],
  ["sort --outp=out in", ["2:in"], ["1:out"]],
  ["cat a - b", ["1:a", "3:b"], []],
  ["grep -f pats -e x a b", ["2:pats", "5:a", "6:b"], []],
  ["grep --file=pats a", ["1:pats", "2:a"], []],
  ["grep x a b", ["2:a", "3:b"], []],
  ["rg --ignore-file=.ig x src", ["1:.ig", "3:src"], []],
  ["head -n 5 se/key.pem", ["3:se/key.pem"], []],
  ["diff --from-file=a b c", ["1:a", "2:b", "3:c"], []],
  ["cd /etc", ["1:/etc"], []],
  ["pushd src", ["1:src"], []],
  ["find src -newer ref -name x", ["1:src", "3:ref"], []],
  ["jq --rawfile a s.txt . f.json", ["3:s.txt", "5:f.json"], []],
  ["jq -L lib -f prog.jq data.json", ["2:lib", "4:prog.jq", "5:data.json"], []],
  ["git -C sub log -p", ["2:sub"], []],
  ["git show HEAD:secrets/key.pem", ["2:secrets/key.pem"], []],
  ["git blame --contents=f.txt f", ["2:f.txt", "3:f"], []],
  ["test -f a -o -d b", ["2:a", "5:b"], []],
  ["echo secrets/key.pem", [], []],
  ["basename secrets/key.pem", [], []]
]

describe("CommandEffect.describe", () => {
  for (const [command, reads, writes] of exact) {
    it(`${command}: reads ${reads.join(" ") || "nothing"}, writes ${writes.join(" ") || "nothing"}`, () => {
      const effect = CommandEffect.describe(command.split(" "))
      expect(effect.known).toBe(true)
      expect({ reads: show(effect.reads), writes: show(effect.writes) }).toEqual({ reads, writes })
      expect(effect.readOnly).toBe(
        writes.length === 0 &&
          !["cp", "mv", "ln", "touch", "mkdir", "tee", "rm", "rmdir"].includes(command.split(" ")[0])
      )
    })
  }

  it("names what is read without a word: grep -r, rg, find, du, git's content commands", () => {
    const implicit = (command: string) => CommandEffect.describe(command.split(" ")).implicitReads
    expect(implicit("grep -r PRIVATE")).toEqual(["."])
    expect(implicit("grep -r -e PRIVATE")).toEqual(["."])
    expect(implicit("grep -r PRIVATE src")).toBeUndefined()
    expect(implicit("grep PRIVATE")).toBeUndefined()
    expect(implicit("rg PRIVATE")).toEqual(["."])
    expect(implicit("find -name x")).toEqual(["."])
    expect(implicit("du -sh")).toEqual(["."])
    expect(implicit("ls -R")).toEqual(["."])
    expect(implicit("git log -p")).toEqual(["."])
    expect(implicit("git -C sub log -p")).toEqual(["sub", "."])
    expect(implicit("git -C a -C b diff")).toEqual(["a/b", "."])
  })

  it("gives up (known: false, every operand read and written) on what it does not understand", () => {
    for (const command of [
      "frobnicate a b",
      "sort --bogus a",
      "cp a",
      "ln a",
      "find . -exec rm {} +",
      "git -c a=b log x"
    ]) {
      const argv = command.split(" ")
      const effect = CommandEffect.describe(argv)
      const operands = argv.flatMap((value, index) =>
        index > 0 && !value.startsWith("-") ? [`${index}:${value}`] : []
      )
      expect({ command, known: effect.known, readOnly: effect.readOnly }).toEqual({
        command,
        known: false,
        readOnly: false
      })
      expect(show(effect.reads)).toEqual(operands)
      expect(show(effect.writes)).toEqual(operands)
    }
  })

  describe("words only known when the shell runs", () => {
    const word = (value: string, literal = false, glob = false) => ({ value, literal, glob })
    const lit = (value: string) => word(value, true)

    it("are harmless for an inert command, and counted as reads when it reads files", () => {
      const effect = CommandEffect.describeWords([lit("cat"), word('"$f"'), word("$g")])
      expect(effect.readOnly).toBe(true)
      expect(show(effect.reads)).toEqual(['1:"$f"', "2:$g"])
      expect(CommandEffect.describeWords([lit("echo"), word("$x")]).reads).toEqual([])
      expect(CommandEffect.describeWords([lit("wc"), lit("-l"), word("*.ts", true, true)]).readOnly).toBe(true)
    })

    it("may become an option of a command that has unsafe ones", () => {
      expect(CommandEffect.describeWords([lit("sort"), word('"$x"')]).readOnly).toBe(false)
      expect(CommandEffect.describeWords([lit("sort"), word("$x")]).readOnly).toBe(false)
      expect(CommandEffect.describeWords([lit("sort"), word("*", true, true)]).readOnly).toBe(false)
      expect(CommandEffect.describeWords([lit("printf"), word("$fmt")]).readOnly).toBe(false)
      expect(CommandEffect.describeWords([lit("find"), word('"$dir"'), lit("-name"), lit("x")]).readOnly).toBe(false)
      expect(CommandEffect.describeWords([lit("git"), word("$sub")]).readOnly).toBe(false)
      expect(CommandEffect.describeWords([lit("test"), word("$a"), word('"$b"')]).readOnly).toBe(false)
    })

    it("cannot become an option where the command no longer reads options", () => {
      expect(CommandEffect.describeWords([lit("sort"), lit("--"), word('"$x"')]).readOnly).toBe(true)
      expect(CommandEffect.describeWords([lit("sort"), word("src/*.txt", true, true)]).readOnly).toBe(true)
      expect(CommandEffect.describeWords([lit("sort"), lit("-k"), word('"$key"'), lit("f")]).readOnly).toBe(true)
      expect(CommandEffect.describeWords([lit("printf"), lit("%s"), word("$x")]).readOnly).toBe(true)
      expect(CommandEffect.describeWords([lit("find"), lit("."), lit("-name"), word('"$n"')]).readOnly).toBe(true)
      expect(CommandEffect.describeWords([lit("test"), lit("-n"), word('"$x"')]).readOnly).toBe(true)
      expect(CommandEffect.describeWords([lit("["), word('"$x"'), lit("="), lit("y"), lit("]")]).readOnly).toBe(true)
    })
  })
})

describe("the command tables", () => {
  it("parse: every entry is well formed, with a known placeholder, and no name is listed twice", () => {
    const tables = [
      ...[...CommandTables.commands].flatMap(([name, command]) =>
        "interpret" in command ? [] : [[name, command] as const]
      ),
      ...subjects
        .filter((subject) => subject.prefix.length > 1)
        .map((subject) => [subject.prefix.join(" "), subject.table] as const)
    ]
    for (const [name, command] of tables) {
      const compiled = compile(command)
      expect({ name, invalid: compiled.invalid }).toEqual({ name, invalid: [] })
      const names = [...command.options, ...(command.refused ?? [])].flatMap((entry) =>
        entry.split(/[,= []/).filter((part) => part.startsWith("-"))
      )
      expect({ name, duplicates: names.filter((n, at) => names.indexOf(n) !== at) }).toEqual({ name, duplicates: [] })
    }
  })
})
