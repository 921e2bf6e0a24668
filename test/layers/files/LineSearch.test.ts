import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import * as GrepEngine from "../../../src/layers/files/GrepEngine.js"
import { searchText, splitText } from "../../../src/layers/files/LineSearch.js"

const patterns = ["a", "ab", "^a", "b$", "a+b", "^$", "a|b", "\\s", "a\\s+b", "b\\n?a", "x*", "^", "[ab]{2}", "(?<=a)b"]

const query = (pattern: string, caseInsensitive: boolean) => ({ pattern, caseInsensitive, multiline: false })

/** The obvious definition: split the text into lines and test each one on its own. */
const naive = (text: string, pattern: string, caseInsensitive: boolean) => {
  const line = new RegExp(pattern, caseInsensitive ? "mi" : "m")
  return splitText(text)
    .map((t, i) => ({ number: i + 1, text: t, match: true }))
    .filter((l) => line.test(l.text))
}

describe("LineSearch", () => {
  it.prop(
    "line-oriented search finds exactly the lines that match on their own, in every mode",
    [
      fc.stringOf(fc.constantFrom("a", "b", "A", " ", "\n", "\r", "x"), { maxLength: 60 }),
      fc.constantFrom(...patterns),
      fc.boolean()
    ],
    ([text, pattern, caseInsensitive]) => {
      const compiled = Effect.runSync(GrepEngine.compile(query(pattern, caseInsensitive)))
      const expected = naive(text, pattern, caseInsensitive)
      const content = searchText(text, compiled, { mode: "content", multiline: false, before: 0, after: 0 })
      expect(content?.lines ?? []).toEqual(expected)
      const count = searchText(text, compiled, { mode: "count", multiline: false, before: 0, after: 0 })
      expect(count?.count ?? 0).toBe(expected.length)
      const files = searchText(text, compiled, { mode: "files_with_matches", multiline: false, before: 0, after: 0 })
      expect(files !== undefined).toBe(expected.length > 0)
    }
  )

  it.prop(
    "the literal prefilter never passes over a file that matches",
    [
      fc.stringOf(fc.constantFrom("a", "b", "é", "€", " ", "\n"), { maxLength: 40 }),
      fc.stringOf(fc.constantFrom("a", "b", "é", "€", "."), { minLength: 1, maxLength: 3 }),
      fc.boolean()
    ],
    ([text, pattern, caseInsensitive]) => {
      const literal = GrepEngine.literalOf(query(pattern, caseInsensitive))
      if (literal === undefined) return
      const compiled = Effect.runSync(GrepEngine.compile(query(pattern, caseInsensitive)))
      const matches = searchText(text, compiled, { mode: "files_with_matches", multiline: false, before: 0, after: 0 })
      if (matches !== undefined) expect(Buffer.from(text, "utf8").includes(literal)).toBe(true)
    }
  )
})
