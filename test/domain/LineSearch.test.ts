import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import { byRarity, requiredLiterals, searchText, splitText } from "../../src/domain/LineSearch.js"
import * as GrepEngine from "../../src/layers/files/GrepEngine.js"

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

  const tokens = [
    "a",
    "b",
    "ab",
    "é",
    "\\s",
    "\\w",
    "+",
    "?",
    "*",
    "{2}",
    "{1,2}",
    "[ab]",
    "(a|b)",
    "|",
    "\\(",
    "(",
    "x",
    ".",
    " ",
    "^"
  ]

  it.prop(
    "every match contains the literals the prefilter requires",
    [
      fc.stringOf(fc.constantFrom("a", "b", "é", "x", "(", "{", "2", " ", "\n"), { maxLength: 40 }),
      fc.array(fc.constantFrom(...tokens), { minLength: 1, maxLength: 6 }).map((t) => t.join("")),
      fc.boolean(),
      fc.boolean()
    ],
    ([text, pattern, caseInsensitive, multiline]) => {
      const compiled = Effect.runSync(Effect.either(GrepEngine.compile({ pattern, caseInsensitive, multiline })))
      if (compiled._tag === "Left") return
      const matches = searchText(text, compiled.right, { mode: "files_with_matches", multiline, before: 0, after: 0 })
      if (matches === undefined) return
      const bytes = Buffer.from(text, "utf8")
      for (const literal of GrepEngine.literalsOf({ pattern, caseInsensitive }))
        expect(bytes.includes(literal)).toBe(true)
    }
  )

  it("required literals: runs outside groups, classes and quantified atoms; none with alternation", () => {
    expect(requiredLiterals("function\\s+\\w+Sync\\(", false)).toEqual(["function", "Sync("])
    expect(requiredLiterals("createHash", false)).toEqual(["createHash"])
    expect(requiredLiterals("ab?cd{10}ef", false)).toEqual(["ef"])
    expect(requiredLiterals("foo|bar", false)).toEqual([])
    expect(requiredLiterals("(foo)?bar[xyz]+baz", false)).toEqual(["bar", "baz"])
    expect(requiredLiterals("Error: 42", true)).toEqual([])
    expect(requiredLiterals("== 42", true)).toEqual(["== 42"])
  })

  it("the reader looks for the rarest literal first: the rarest byte decides, then the length", () => {
    expect(byRarity(["function", "Sync("])).toEqual(["Sync(", "function"])
    expect(GrepEngine.literalsOf({ pattern: "function\\s+\\w+Sync\\(", caseInsensitive: false })).toEqual([
      Buffer.from("Sync("),
      Buffer.from("function")
    ])
    expect(byRarity(["the", "then", "Q"])).toEqual(["Q", "then", "the"])
    expect(byRarity(["a\u00e9", "zz"])).toEqual(["a\u00e9", "zz"])
  })

  it.prop("ordering by rarity keeps every literal", [fc.array(fc.string({ minLength: 2, maxLength: 6 }))], ([xs]) => {
    expect([...byRarity(xs)].sort()).toEqual([...xs].sort())
  })
})
