import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import * as CommandEffect from "../../../src/domain/shell/CommandEffect.js"
import { readOnlyLine, refusedSpellings, subjects, unlistedLong, unlistedShort } from "./TableArbitraries.js"

/** Inserts `extra` right after the command (and subcommand) words, where options are read. */
const withOption = (line: ReadonlyArray<string>, prefix: number, extra: ReadonlyArray<string>) => [
  ...line.slice(0, prefix),
  ...extra,
  ...line.slice(prefix)
]

describe("read-only tables, generated from the tables themselves", () => {
  it("generates a subject for every read-only table", () => {
    const names = subjects.map((subject) => subject.prefix.join(" "))
    for (const name of ["ls", "cat", "sort", "uniq", "rg", "grep", "sed", "date", "env", "git log", "git config"])
      expect(names).toContain(name)
  })

  for (const subject of subjects) {
    const name = subject.prefix.join(" ")
    const prefix = subject.prefix.length

    it.prop(
      `${name}: listed options with valid values and plain operands are read-only`,
      [readOnlyLine(subject)],
      ([line]) => {
        const effect = CommandEffect.describe(line)
        expect({ line, readOnly: effect.readOnly, reason: effect.reason }).toEqual({
          line,
          readOnly: true,
          reason: undefined
        })
        expect(effect.writes).toEqual([])
      },
      { fastCheck: { numRuns: 30 } }
    )

    it.prop(
      `${name}: an unlisted long option makes it not read-only`,
      [readOnlyLine(subject), unlistedLong(subject.table)],
      ([line, option]) => {
        expect(CommandEffect.describe(withOption(line, prefix, [option])).readOnly).toBe(false)
      },
      { fastCheck: { numRuns: 15 } }
    )

    const shorts = unlistedShort(subject.table)
    it.prop(
      `${name}: an unlisted short option makes it not read-only`,
      [readOnlyLine(subject), FastCheck.constantFrom(...shorts)],
      ([line, option]) => {
        expect(CommandEffect.describe(withOption(line, prefix, [option])).readOnly).toBe(false)
      },
      { fastCheck: { numRuns: 15 } }
    )

    const refused = refusedSpellings(subject.table)
    if (refused.length > 0) {
      it.prop(
        `${name}: a refused option, however abbreviated, makes it not read-only`,
        [readOnlyLine(subject), FastCheck.constantFrom(...refused)],
        ([line, option]) => {
          const effect = CommandEffect.describe(withOption(line, prefix, option))
          expect({ option, readOnly: effect.readOnly }).toEqual({ option, readOnly: false })
        },
        { fastCheck: { numRuns: 20 } }
      )
    }
  }
})
