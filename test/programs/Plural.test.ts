import { describe, expect, it } from "@effect/vitest"
import * as Plural from "../../src/programs/Plural.js"

describe("Plural.count", () => {
  it("says 1 error, 0 errors, 2 turns", () => {
    expect(Plural.count(1, "error")).toBe("1 error")
    expect(Plural.count(0, "error")).toBe("0 errors")
    expect(Plural.count(2, "turn")).toBe("2 turns")
    expect(Plural.count(1, "entry", "entries")).toBe("1 entry")
    expect(Plural.count(3, "entry", "entries")).toBe("3 entries")
  })
})
