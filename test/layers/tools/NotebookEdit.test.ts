import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Notebook from "../../../src/domain/Notebook.js"
import * as AgentLoop from "../../../src/layers/agent/AgentLoop.js"
import type { ModelRequest } from "../../../src/services/LanguageModel.js"
import { ScriptedLanguageModel, TestEngine } from "../../../src/testing/index.js"

const { text, toolUse, turn } = ScriptedLanguageModel
const tempDir = () => Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-notebook-")))

/** A notebook as Jupyter 7 writes one (nbformat 4.5: cells with ids, outputs on code cells). */
const sample = {
  cells: [
    { cell_type: "markdown", id: "intro", metadata: {}, source: ["# Title\n", "Some text"] },
    {
      cell_type: "code",
      execution_count: 3,
      id: "calc",
      metadata: { tags: ["x"] },
      outputs: [{ output_type: "stream", name: "stdout", text: ["2\n"] }],
      source: "print(1 + 1)"
    }
  ],
  metadata: { kernelspec: { display_name: "Python 3", language: "python", name: "python3" } },
  nbformat: 4,
  nbformat_minor: 5
}

/**
 * The rules of the nbformat 4.5 schema a cell edit can break: the top-level fields, each cell's required fields by
 * type (outputs and execution_count on code cells only), source as a string or list of strings, ids unique and of
 * 1-64 characters from [a-zA-Z0-9-_]. Returns the problems found.
 */
const nbformatProblems = (nb: Record<string, unknown>): ReadonlyArray<string> => {
  const problems: Array<string> = []
  if (nb.nbformat !== 4 || typeof nb.nbformat_minor !== "number") problems.push("nbformat")
  if (typeof nb.metadata !== "object" || nb.metadata === null) problems.push("metadata")
  const cells = nb.cells as ReadonlyArray<Record<string, unknown>>
  const ids = new Set<string>()
  cells.forEach((cell, i) => {
    const where = `cell ${i}`
    if (typeof cell.id !== "string" || !/^[a-zA-Z0-9-_]{1,64}$/.test(cell.id)) problems.push(`${where}: id`)
    else if (ids.has(cell.id)) problems.push(`${where}: duplicate id`)
    else ids.add(cell.id)
    if (typeof cell.metadata !== "object" || cell.metadata === null) problems.push(`${where}: metadata`)
    const source = cell.source
    if (!(typeof source === "string" || (Array.isArray(source) && source.every((s) => typeof s === "string")))) {
      problems.push(`${where}: source`)
    }
    const allowed = new Set(
      cell.cell_type === "code"
        ? ["cell_type", "id", "metadata", "source", "outputs", "execution_count"]
        : cell.cell_type === "markdown" || cell.cell_type === "raw"
          ? ["cell_type", "id", "metadata", "source", "attachments"]
          : []
    )
    if (allowed.size === 0) problems.push(`${where}: cell_type`)
    for (const key of Object.keys(cell)) if (!allowed.has(key)) problems.push(`${where}: ${key} not allowed`)
    if (cell.cell_type === "code") {
      if (!Array.isArray(cell.outputs)) problems.push(`${where}: outputs`)
      if (!(cell.execution_count === null || Number.isInteger(cell.execution_count))) {
        problems.push(`${where}: execution_count`)
      }
    }
  })
  return problems
}

const lastText = (request: ModelRequest): string => JSON.stringify(request.messages.at(-1))

describe("NotebookEdit through the agent loop (scripted model, real .ipynb files)", () => {
  it.effect("replace, insert and delete cells by id; the file stays valid nbformat; Edit rules allow it", () => {
    const dir = tempDir()
    const file = Path.join(dir, "analysis.ipynb")
    Fs.writeFileSync(file, `${JSON.stringify(sample, null, 1)}\n`)
    return Effect.gen(function* () {
      const requests = yield* ScriptedLanguageModel.ScriptedRequests
      const result = yield* AgentLoop.run({ prompt: "edit the notebook" })
      expect(result).toMatchObject({ subtype: "success", result: "edited" })
      const all = yield* requests.all
      expect(lastText(all[2]!)).toContain("Replaced the source of cell calc (code)")
      expect(lastText(all[3]!)).toMatch(/Inserted a markdown cell with id [0-9a-f]{8}/)
      expect(lastText(all[4]!)).toContain("Deleted cell intro")
      const nb = JSON.parse(Fs.readFileSync(file, "utf8"))
      expect(nbformatProblems(nb)).toEqual([])
      expect(nb.cells.map((c: Notebook.Cell) => c.cell_type)).toEqual(["code", "markdown"])
      // the replaced code cell lost its stale outputs and count, and kept its id and metadata
      expect(nb.cells[0]).toEqual({
        cell_type: "code",
        execution_count: null,
        id: "calc",
        metadata: { tags: ["x"] },
        outputs: [],
        source: "print(2 + 2)"
      })
      expect(nb.cells[1].source).toBe("## Result\nIt is 4.")
      expect(nb.metadata).toEqual(sample.metadata)
    }).pipe(
      Effect.provide(
        TestEngine.layer({
          cwd: dir,
          allowedTools: ["Edit(*.ipynb)"],
          script: [
            turn(toolUse("Read", { file_path: file })),
            turn(toolUse("NotebookEdit", { notebook_path: file, cell_id: "calc", new_source: "print(2 + 2)" })),
            turn(
              toolUse("NotebookEdit", {
                notebook_path: file,
                cell_id: "calc",
                new_source: "## Result\nIt is 4.",
                cell_type: "markdown",
                edit_mode: "insert"
              })
            ),
            turn(
              toolUse("NotebookEdit", { notebook_path: file, cell_id: "intro", new_source: "", edit_mode: "delete" })
            ),
            turn(text("edited"))
          ]
        })
      )
    )
  })

  it.effect(
    "refusals the model can act on: unread notebook, unknown cell, insert without cell_type, not .ipynb",
    () => {
      const dir = tempDir()
      const file = Path.join(dir, "n.ipynb")
      const before = `${JSON.stringify(sample, null, 1)}\n`
      Fs.writeFileSync(file, before)
      return Effect.gen(function* () {
        const requests = yield* ScriptedLanguageModel.ScriptedRequests
        yield* AgentLoop.run({ prompt: "edit" })
        const all = yield* requests.all
        expect(lastText(all[1]!)).toContain("has not been read")
        expect(lastText(all[3]!)).toContain("Cell 'nope' not found in the notebook. Its cells: intro, calc.")
        expect(lastText(all[4]!)).toContain("cell_type is required when edit_mode is insert")
        expect(lastText(all[5]!)).toContain("is not a Jupyter notebook (.ipynb)")
        expect(Fs.readFileSync(file, "utf8")).toBe(before)
      }).pipe(
        Effect.provide(
          TestEngine.layer({
            cwd: dir,
            allowAll: true,
            script: [
              turn(toolUse("NotebookEdit", { notebook_path: file, cell_id: "calc", new_source: "x" })),
              turn(toolUse("Read", { file_path: file })),
              turn(toolUse("NotebookEdit", { notebook_path: file, cell_id: "nope", new_source: "x" })),
              turn(toolUse("NotebookEdit", { notebook_path: file, new_source: "x", edit_mode: "insert" })),
              turn(toolUse("NotebookEdit", { notebook_path: Path.join(dir, "a.py"), cell_id: "0", new_source: "x" })),
              turn(text("done"))
            ]
          })
        )
      )
    }
  )

  it("notebooks without cell ids (nbformat 4.4): cells are named cell-N and inserted cells get no id", () => {
    const old = { ...sample, nbformat_minor: 4, cells: sample.cells.map(({ id: _id, ...cell }) => cell) }
    const edited = Notebook.apply(old as unknown as Notebook.Notebook, {
      cell_id: "cell-0",
      new_source: "x = 1",
      cell_type: "code",
      edit_mode: "insert"
    })
    if (Notebook.isRefusal(edited)) throw new Error(edited.refusal)
    expect(edited.cellId).toBe("cell-1")
    expect(edited.notebook.cells[1]).toEqual({
      cell_type: "code",
      metadata: {},
      source: "x = 1",
      execution_count: null,
      outputs: []
    })
  })
})
