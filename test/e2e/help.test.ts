/**
 * Every command's `--help` is written for people: each option says what it is for (none of @effect/cli's
 * placeholders such as "A user-defined piece of text."), an option that may be left out is bracketed in the usage
 * line, and the page ends with examples of that command.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { runCli } from "../fixtures/Cli.js"

const commands = [
  [],
  ["exec"],
  ["tools"],
  ["tools", "list"],
  ["tools", "schema"],
  ["tools", "search"],
  ["permissions"],
  ["permissions", "check"],
  ["run"],
  ["resume"],
  ["sessions"],
  ["serve"],
  ["mcp"],
  ["mcp", "serve"],
  ["mcp", "login"],
  ["mcp", "logout"],
  ["mcp", "list"],
  ["sandbox"],
  ["sandbox", "check"],
  ["timeline"]
]

const placeholders = [
  "A user-defined piece of text.",
  "A true or false value.",
  "An integer.",
  "A file.",
  "A directory.",
  "One of the following:"
]

/** The options of a page: each header line (`--flag value`, `(-h, --help)`, `<ARG>`) with the lines under it. */
const optionBlocks = (page: string) => {
  const lines = page.split("\n")
  const start = lines.findIndex((l) => l === "OPTIONS" || l === "ARGUMENTS")
  const end = lines.findIndex((l, i) => i > start && (l === "EXAMPLES" || l === "COMMANDS"))
  const section = lines.slice(start, end === -1 ? lines.length : end)
  return section.flatMap((line, i) =>
    /^(--|\(-|<)/.test(line)
      ? [
          {
            header: line,
            body:
              section.slice(i + 1).findIndex((l) => /^(--|\(-|<)/.test(l)) === -1
                ? section.slice(i + 1)
                : section.slice(i + 1, i + 1 + section.slice(i + 1).findIndex((l) => /^(--|\(-|<)/.test(l)))
          }
        ]
      : []
  )
}

describe("help pages for people", () => {
  it("every command's --help: real descriptions, optional options bracketed, examples", async () => {
    const cwd = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-help-")))
    const pages: Array<readonly [string, string]> = []
    for (let i = 0; i < commands.length; i += 4) {
      const batch = commands.slice(i, i + 4)
      const results = await Promise.all(batch.map((command) => runCli([...command, "--help"], cwd)))
      results.forEach((result, j) => {
        expect(result.code, `${batch[j].join(" ")}: ${result.stderr}`).toBe(0)
        pages.push([["armature", ...batch[j]].join(" "), result.stdout])
      })
    }
    for (const [path, page] of pages) {
      for (const text of placeholders) expect(page, `${path}: ${text}`).not.toContain(text)
      const usage = page.split("\n").filter((l) => l.startsWith("$ ") || l.startsWith("    "))
      // an option that may be repeated zero times is optional, and bracketed like the others
      for (const line of usage) expect(line, path).not.toMatch(/(^|\s)--[a-z-]+ [a-z]+\.\.\.(\s|$)/)
      if (path !== "armature" && !["tools", "permissions", "mcp", "sandbox"].includes(path.split(" ")[1] ?? "")) {
        expect(page, path).toContain(`$ ${path}`)
      }
      const options = optionBlocks(page)
      if (path.split(" ").length > 1) expect(options.length, path).toBeGreaterThan(0)
      for (const option of options) {
        const said = option.body.map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("This "))
        expect(said.length, `${path} ${option.header}: no description`).toBeGreaterThan(0)
      }
      const examples = page.split("EXAMPLES\n")[1]
      expect(examples, `${path}: no EXAMPLES`).toBeDefined()
      const listed = (examples ?? "").split("\n").filter((l) => l.startsWith("  $ "))
      expect(listed.length, path).toBeGreaterThan(0)
      const command = path.split(" ").slice(1)
      if (command.length > 0) {
        for (const example of listed) expect(example).toMatch(/armature /)
        expect(
          listed.some((l) => l.includes(`armature ${command[0]}`)),
          path
        ).toBe(true)
      }
    }
  }, 300_000)
})
