import { describe, expect, it } from "@effect/vitest"
import * as OptionParser from "../../../src/domain/shell/OptionParser.js"

const sort: OptionParser.OptionTable = {
  short: { r: "flag", n: "flag", o: "value", k: "value" },
  long: { output: "value", "compress-program": "value", reverse: "flag", "numeric-sort": "flag", key: "value" }
}

const names = (parsed: OptionParser.ParsedArgs) =>
  parsed.items.map((item) =>
    item._tag === "Option"
      ? `${item.name}${item.value === undefined ? "" : `=${item.value}`}`
      : item._tag === "Operand"
        ? item.value
        : `?${item.text}`
  )

describe("OptionParser", () => {
  it("resolves unambiguous long prefixes and refuses ambiguous or unknown ones", () => {
    expect(OptionParser.resolveLong(sort, "outp")).toBe("output")
    expect(OptionParser.resolveLong(sort, "compress-prog")).toBe("compress-program")
    expect(OptionParser.resolveLong({ long: { verbose: "flag", version: "flag" } }, "ver")).toBeUndefined()
    expect(OptionParser.resolveLong({ long: { ver: "flag", version: "flag" } }, "ver")).toBe("ver")
    expect(OptionParser.resolveLong(sort, "nope")).toBeUndefined()
    expect(names(OptionParser.parse(sort, ["--outp=f", "x"]))).toEqual(["--output=f", "x"])
    expect(names(OptionParser.parse(sort, ["--outp", "f", "x"]))).toEqual(["--output=f", "x"])
    expect(OptionParser.parse(sort, ["--bogus"]).hasUnknown).toBe(true)
  })

  it("splits short clusters as getopt does: a value-taking letter takes the rest or the next word", () => {
    const sed: OptionParser.OptionTable = { short: { n: "flag", e: "value" } }
    expect(names(OptionParser.parse(sed, ["-nee", "1p"]))).toEqual(["-n", "-e=e", "1p"])
    expect(names(OptionParser.parse(sort, ["-rno", "out", "in"]))).toEqual(["-r", "-n", "-o=out", "in"])
    expect(names(OptionParser.parse(sort, ["-rk2"]))).toEqual(["-r", "-k=2"])
    expect(OptionParser.parse(sort, ["-rx"]).hasUnknown).toBe(true)
    expect(OptionParser.parse(sort, ["-o"]).hasUnknown).toBe(true)
  })

  it("ends options at --, and at the first operand when the command does", () => {
    expect(names(OptionParser.parse(sort, ["a", "-r", "--", "-o"]))).toEqual(["a", "-r", "-o"])
    const env: OptionParser.OptionTable = { short: { i: "flag", u: "value" }, stopAtOperand: true }
    const parsed = OptionParser.parse(env, ["-i", "-u", "X", "ls", "-la"])
    expect(parsed.rest).toBe(3)
    expect(OptionParser.operands(parsed)).toEqual(["ls", "-la"])
    expect(OptionParser.parse(env, ["--", "ls"]).rest).toBe(1)
  })

  it("reads -NUM only where the command accepts it", () => {
    expect(names(OptionParser.parse({ numericOption: true }, ["-20", "f"]))).toEqual(["-NUM=20", "f"])
    expect(OptionParser.parse({}, ["-20"]).hasUnknown).toBe(true)
  })
})
