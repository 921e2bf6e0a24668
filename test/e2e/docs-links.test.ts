/**
 * The documentation holds together: every page of docs/ is listed by docs/index.md, and every relative link of the
 * README and the pages points at a file that exists (and, with a #fragment, at a heading of that page).
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"

const root = Path.resolve(import.meta.dirname, "../..")
const docs = Path.join(root, "docs")
const pages = Fs.readdirSync(docs).filter((f) => f.endsWith(".md"))

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchor = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-")

/** The text outside fenced code blocks. */
const prose = (markdown: string) => markdown.replace(/^```[^\n]*\n[\s\S]*?^```\s*$/gm, "")

const links = (file: string) =>
  [...prose(Fs.readFileSync(file, "utf8")).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1])
    .filter((target) => !/^[a-z]+:/.test(target))

describe("the documentation", () => {
  it("docs/index.md lists every page of docs/", () => {
    const index = Fs.readFileSync(Path.join(docs, "index.md"), "utf8")
    const listed = new Set(links(Path.join(docs, "index.md")).map((t) => t.split("#")[0]))
    expect(pages.filter((p) => p !== "index.md" && !listed.has(p))).toEqual([])
    expect(index).not.toMatch(/missing from a checkout/)
  })

  it("every relative link of README.md and docs/*.md resolves, fragments included", () => {
    const broken: Array<string> = []
    for (const file of [Path.join(root, "README.md"), ...pages.map((p) => Path.join(docs, p))]) {
      for (const target of links(file)) {
        const [path, fragment] = target.split("#")
        const resolved = path === "" ? file : Path.resolve(Path.dirname(file), path)
        if (!Fs.existsSync(resolved)) {
          broken.push(`${Path.relative(root, file)}: ${target}`)
          continue
        }
        if (fragment !== undefined && resolved.endsWith(".md")) {
          const headings = prose(Fs.readFileSync(resolved, "utf8"))
            .split("\n")
            .filter((line) => /^#+ /.test(line))
            .map((line) => anchor(line.replace(/^#+ /, "")))
          if (!headings.includes(fragment)) broken.push(`${Path.relative(root, file)}: ${target} (no such heading)`)
        }
      }
    }
    expect(broken).toEqual([])
  })

  it("every src/ path docs/architecture.md names exists", () => {
    const page = Fs.readFileSync(Path.join(docs, "architecture.md"), "utf8")
    const named = [...page.matchAll(/`(src\/[^`\s]+)`/g)].map((m) => m[1])
    expect(named.length).toBeGreaterThan(10)
    expect(named.filter((p) => !Fs.existsSync(Path.join(root, p)))).toEqual([])
  })
})
