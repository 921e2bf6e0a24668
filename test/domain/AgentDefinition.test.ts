import { describe, expect, it } from "@effect/vitest"
import * as AgentDefinition from "../../src/domain/AgentDefinition.js"

const file = "/p/.claude/agents/x.md"

describe("AgentDefinition.parse", () => {
  it("reads name, description, comma-separated tools, model and the body as the system prompt", () => {
    const parsed = AgentDefinition.parse(
      file,
      '---\nname: code-reviewer\ndescription: "Reviews code: finds bugs"\ntools: Read, Grep,Glob\nmodel: haiku\n---\n\nYou review code.\nBe brief.\n',
      "project"
    )
    expect(parsed).toEqual({
      name: "code-reviewer",
      description: "Reviews code: finds bugs",
      tools: ["Read", "Grep", "Glob"],
      model: "haiku",
      prompt: "You review code.\nBe brief.",
      source: "project",
      file
    })
  })

  it("absent tools and model `inherit` mean every tool but Agent and the parent's model; lists are accepted", () => {
    const all = AgentDefinition.parse(file, "---\nname: a\ndescription: d\nmodel: inherit\n---\nP", "user")
    expect(all).toMatchObject({ tools: undefined, model: undefined })
    const inline = AgentDefinition.parse(file, "---\nname: a\ndescription: d\ntools: [Read, Bash]\n---\nP", "user")
    expect(inline).toMatchObject({ tools: ["Read", "Bash"] })
    const block = AgentDefinition.parse(
      file,
      "---\nname: a\ndescription: d\ntools:\n  - Read\n  - Bash\n---\nP",
      "user"
    )
    expect(block).toMatchObject({ tools: ["Read", "Bash"] })
    const def = all as AgentDefinition.AgentDefinition
    expect(AgentDefinition.allowsTool(def, "Bash", false)).toBe(true)
    expect(AgentDefinition.allowsTool(def, "Agent", false)).toBe(false)
    expect(AgentDefinition.allowsTool(def, "Agent", true)).toBe(true)
    expect(AgentDefinition.allowsTool(inline as AgentDefinition.AgentDefinition, "Grep", true)).toBe(false)
    expect(AgentDefinition.modelOf(def, "claude-parent")).toBe("claude-parent")
  })

  it("a bad file is a problem naming the file and the field", () => {
    const problem = (text: string) => {
      const parsed = AgentDefinition.parse(file, text, "project")
      return AgentDefinition.isDefinitionProblem(parsed) ? AgentDefinition.problemText(parsed) : "parsed"
    }
    expect(problem("name: a\n")).toBe(
      `${file}: front matter: the file must start with a "---" line opening the front matter`
    )
    expect(problem("---\nname: a\ndescription: d\n")).toBe(`${file}: front matter: no closing "---" line`)
    expect(problem("---\ndescription: d\n---\nP")).toBe(`${file}: name: missing`)
    expect(problem("---\nname: a b\ndescription: d\n---\nP")).toBe(
      `${file}: name: "a b": use letters, digits, "-" and "_"`
    )
    expect(problem("---\nname: a\n---\nP")).toBe(`${file}: description: missing`)
    expect(problem("---\nname: a\ndescription: d\ntools: Read, 1x\n---\nP")).toBe(
      `${file}: tools: "1x" is not a tool name`
    )
    expect(problem("---\nname: a\ndescription: d\n---\n  \n")).toBe(
      `${file}: body: empty: the body is the sub-agent's system prompt`
    )
    expect(problem("---\nname: a\nnot a field\n---\nP")).toBe(
      `${file}: line 3: expected "key: value", found "not a field"`
    )
  })

  it("merge: later lists override earlier ones by name", () => {
    const project = { ...AgentDefinition.generalPurpose, description: "mine", source: "project" as const }
    expect(AgentDefinition.merge([AgentDefinition.generalPurpose], [project])).toEqual([project])
  })
})
