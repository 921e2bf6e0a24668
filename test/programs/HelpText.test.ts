import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import * as HelpText from "../../src/programs/HelpText.js"

describe("HelpText", () => {
  it.prop(
    "wrap keeps every piece within 100 columns and loses no word",
    [FastCheck.array(FastCheck.stringMatching(/^[a-z|[\].-]{1,20}$/), { maxLength: 60 }), FastCheck.nat(8)],
    ([words, indent]) => {
      const line = `${" ".repeat(indent)}${words.join(" ")}`
      const pieces = HelpText.wrap(line)
      expect(pieces.every((piece) => piece.length <= HelpText.width)).toBe(true)
      expect(
        pieces
          .join(" ")
          .split(/ +/)
          .filter((w) => w !== "")
      ).toEqual(words)
    }
  )

  it("wrap breaks a usage line between options, not inside one", () => {
    const options = Array.from({ length: 12 }, (_, i) => `[--option-${i} text...]`)
    const pieces = HelpText.wrap(`$ armature exec ${options.join(" ")}`, 4)
    expect(pieces.length).toBeGreaterThan(1)
    for (const piece of pieces) expect(piece.trim()).toMatch(/^(\$ armature exec )?(\[--option-\d+ text\.\.\.\] ?)+$/)
  })

  it("tidy names a subcommand by its path and lists commands compactly", () => {
    const page = [
      "\x1b[1mUSAGE\x1b[0m",
      "",
      "$ schema [--cwd directory]",
      "",
      "COMMANDS",
      "",
      `  - tools list [--json] [--cwd directory]${" ".repeat(200)}List the tools`,
      "",
      `  - permissions check --tool text${" ".repeat(200)}Decide one call`,
      ""
    ].join("\n")
    expect(HelpText.tidy(page, ["armature", "tools", "schema"])).toBe(
      [
        "USAGE",
        "",
        "$ armature tools schema [--cwd directory]",
        "",
        "COMMANDS",
        "",
        "  tools list         List the tools",
        "  permissions check  Decide one call",
        "",
        // a command's page ends with its examples
        "EXAMPLES",
        "",
        "  $ armature tools schema > tools.json",
        ""
      ].join("\n")
    )
    expect(HelpText.tidy(page, ["armature"], true)).toContain("\x1b[1mUSAGE\x1b[0m")
  })

  it("tidy drops @effect/cli's placeholder lines and brackets an option that may be left out", () => {
    const page = [
      "USAGE",
      "",
      "$ list [--json] --settings file...",
      "",
      "OPTIONS",
      "",
      "--json",
      "",
      "  A true or false value.",
      "",
      "  Print JSON",
      "",
      "--settings file...",
      "",
      "  A file.",
      "",
      "  A settings file",
      "",
      "  This option may be repeated zero or more times.",
      ""
    ].join("\n")
    const tidied = HelpText.tidy(page, ["armature", "tools", "list"])
    expect(tidied).toContain("$ armature tools list [--json] [--settings file...]\n")
    expect(tidied).toContain("--json\n\n  Print JSON\n\n--settings file...\n\n  A settings file\n")
    expect(tidied).not.toMatch(/A true or false value|A file\./)
  })
})
