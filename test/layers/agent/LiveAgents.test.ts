import { describe, expect, it } from "@effect/vitest"
import * as AgentDefinition from "../../../src/domain/AgentDefinition.js"
import * as AgentDefinitions from "../../../src/layers/agent/AgentDefinitions.js"
import * as LiveAgents from "../../../src/layers/agent/LiveAgents.js"

const parsed = (file: string, name: string, description: string) =>
  AgentDefinition.parse(file, `---\nname: ${name}\ndescription: ${description}\n---\nPrompt of ${name}.\n`, "project")

describe("LiveAgents", () => {
  it("a reload's changes name what was added, changed and removed; nothing when the listing is the same", () => {
    const a = parsed("/p/a.md", "a", "A") as AgentDefinition.AgentDefinition
    const b = parsed("/p/b.md", "b", "B") as AgentDefinition.AgentDefinition
    const b2 = parsed("/p/b.md", "b", "B, changed") as AgentDefinition.AgentDefinition
    const c = parsed("/p/c.md", "c", "C") as AgentDefinition.AgentDefinition
    expect(LiveAgents.changes([a, b], [a, b])).toBe("")
    expect(LiveAgents.changes([a, b], [b2, c])).toBe("added c; changed b; removed a")
  })

  it("a broken file keeps the definition it last gave; one that was never good is left out; both are problems", () => {
    const good = parsed("/p/a.md", "a", "A") as AgentDefinition.AgentDefinition
    const readings: ReadonlyArray<AgentDefinitions.FileReading> = [
      { file: "/p/a.md", result: AgentDefinition.parse("/p/a.md", "---\nname a\n---\nbody\n", "project") },
      { file: "/p/new.md", result: AgentDefinition.parse("/p/new.md", "no front matter", "project") }
    ]
    const { definitions, problems } = AgentDefinitions.reconcile(readings, [good])
    expect(definitions).toEqual([good])
    expect(problems.map((p) => p.file)).toEqual(["/p/a.md", "/p/new.md"])
    expect(AgentDefinition.problemText(problems[0]!)).toContain("/p/a.md: line 2")
  })
})
