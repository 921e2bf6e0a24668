import { execFile } from "node:child_process"
import * as Path from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "@effect/vitest"

const root = Path.resolve(import.meta.dirname, "../..")
// Asynchronous so that the vitest worker stays responsive while the CLI starts.
const armature = async (...args: ReadonlyArray<string>): Promise<string> =>
  (await promisify(execFile)(process.execPath, ["bin/armature.mjs", ...args], { cwd: root, encoding: "utf8" })).stdout

describe("armature tools (process)", () => {
  it("tools schema prints the API tools array: built-ins sorted, object schemas with descriptions", async () => {
    const tools = JSON.parse(await armature("tools", "schema")) as Array<{
      name: string
      description: string
      input_schema: { type: string; properties: Record<string, { description?: string }> }
      defer_loading?: boolean
    }>
    const names = tools.map((t) => t.name)
    expect(names).toEqual([...names].sort())
    expect(names).toEqual(
      expect.arrayContaining(["Bash", "BashOutput", "Edit", "Glob", "Grep", "KillShell", "Read", "Sleep", "TodoWrite"])
    )
    expect(names).toEqual(expect.arrayContaining(["ToolSearch", "WebFetch", "Write"]))
    for (const tool of tools) {
      expect(tool.input_schema.type).toBe("object")
      for (const property of Object.values(tool.input_schema.properties))
        expect(property.description).toBeTypeOf("string")
    }
    expect(tools.find((t) => t.name === "WebFetch")?.defer_loading).toBe(true)
  }, 60_000)

  it("tools list prints every tool with its flags, and --json the same as data", async () => {
    const table = await armature("tools", "list")
    expect(table).toMatch(/^NAME\s+CATEGORY\s+DESCRIPTION/)
    expect(table).toMatch(/\nRead\s+file\s+.*\[read-only, concurrency-safe\]/)
    expect(table).toMatch(/\nBash\s+shell\s+.*\[cancels-siblings\]/)
    const rows = JSON.parse(await armature("tools", "list", "--json")) as Array<{ name: string; deferred: boolean }>
    expect(rows.find((r) => r.name === "WebFetch")?.deferred).toBe(true)
  }, 60_000)

  it("an unknown command exits 2 and names the commands", async () => {
    await expect(armature("frobnicate")).rejects.toMatchObject({
      code: 2,
      message: expect.stringMatching(/unknown command frobnicate; commands: exec, run/)
    })
  }, 60_000)
})
