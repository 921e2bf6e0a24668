import { describe, expect, it } from "@effect/vitest"
import * as Skill from "../../src/domain/Skill.js"

const file = "/p/.claude/skills/pdf/SKILL.md"
const parse = (text: string) => Skill.parse(file, "/p/.claude/skills/pdf", "pdf", text, "project")
const problem = (text: string) => {
  const parsed = parse(text)
  return Skill.isProblem(parsed) ? Skill.problemText(parsed) : "parsed"
}

describe("Skill.parse", () => {
  it("reads name, description and allowed-tools (a string or a list); the directory names a nameless skill", () => {
    expect(
      parse("---\nname: pdf-tools\ndescription: Fills PDF forms\nallowed-tools: Read, Bash(pdftk:*)\n---\nBody\n")
    ).toMatchObject({
      name: "pdf-tools",
      description: "Fills PDF forms",
      allowedTools: ["Read", "Bash(pdftk:*)"],
      body: "Body"
    })
    expect(parse("---\ndescription: d\nallowed-tools:\n  - Read\n  - Grep\n---\nB")).toMatchObject({
      name: "pdf",
      allowedTools: ["Read", "Grep"]
    })
  })

  it("names the file and line of what is wrong", () => {
    expect(problem("no front matter")).toBe(
      `${file}:1: front matter: the file must start with a "---" line opening the front matter`
    )
    expect(problem("---\nname: x\nthis is not yaml\n---\nB")).toBe(
      `${file}:3: line 3: expected "key: value", found "this is not yaml"`
    )
    expect(problem("---\nname: x\n---\nB")).toBe(
      `${file}:1: description: missing: the model chooses a skill by its description`
    )
    expect(problem("---\nname: Bad_Name\ndescription: d\n---\nB")).toContain(`${file}:2: name: "Bad_Name"`)
    expect(problem("---\ndescription: d\nallowed-tools: Bash(git push\n---\nB")).toContain(
      `${file}:3: allowed-tools: "Bash(git push"`
    )
  })

  it("puts arguments in place of $ARGUMENTS, or after the body", () => {
    const skill = parse("---\ndescription: d\n---\nGreet $ARGUMENTS.") as Skill.Skill
    expect(Skill.loadedText(skill, "Ada")).toBe("Base directory for this skill: /p/.claude/skills/pdf\n\nGreet Ada.")
    const plain = parse("---\ndescription: d\n---\nGreet.") as Skill.Skill
    expect(Skill.loadedText(plain, "Ada")).toBe(
      "Base directory for this skill: /p/.claude/skills/pdf\n\nGreet.\n\nARGUMENTS: Ada"
    )
  })

  it("grants its allowed tools as allow rules anchored at the project", () => {
    const skill = parse("---\ndescription: d\nallowed-tools: Bash(git log:*)\n---\nB") as Skill.Skill
    expect(Skill.grantedRules(skill, "/p")).toMatchObject([
      { behavior: "allow", tool: "Bash", content: "git log:*", root: "/p", source: `skill pdf (${file})` }
    ])
  })
})
