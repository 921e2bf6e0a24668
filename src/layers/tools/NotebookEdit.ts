/**
 * NotebookEdit: replaces, inserts or deletes one cell of a Jupyter notebook (Claude Code's input: notebook_path,
 * cell_id, new_source, cell_type, edit_mode), with Edit's read-before-write and staleness rules and an atomic write;
 * the file stays valid nbformat 4. For permissions it is an edit: `Edit(...)` rules and acceptEdits cover it.
 * See docs/tools.md.
 */
import * as Path from "node:path"
import { Effect, Option, Schema } from "effect"
import * as Notebook from "../../domain/Notebook.js"
import * as Tool from "../../domain/Tool.js"
import { FileStateCache } from "../../services/FileStateCache.js"
import * as FileAccess from "../files/FileAccess.js"
import * as ToolRegistryLive from "../registry/ToolRegistryLive.js"

/** The tool's name. */
export const name = "NotebookEdit"

const Input = Schema.Struct({
  notebook_path: Schema.String.annotations({
    description: "The absolute path of the Jupyter notebook (.ipynb) to edit."
  }),
  cell_id: Schema.optional(
    Schema.String.annotations({
      description:
        "The id of the cell to edit. With edit_mode insert, the new cell goes after this cell, or first when absent."
    })
  ),
  new_source: Schema.String.annotations({ description: "The new source of the cell." }),
  cell_type: Schema.optional(
    Schema.Literal("code", "markdown").annotations({
      description: "The cell's type (code or markdown); default: the cell's current type. Required with insert."
    })
  ),
  edit_mode: Schema.optional(
    Schema.Literal("replace", "insert", "delete").annotations({
      description: "replace (default), insert or delete."
    })
  )
})

/** NotebookEdit's decoded input. */
export type Input = typeof Input.Type

const description = `Edits one cell of a Jupyter notebook (.ipynb): replaces its source, inserts a new cell, or deletes it.

Use it instead of Edit or Write for notebooks: it keeps the notebook's JSON valid. Read the notebook first (Read
shows its JSON, where each cell has an "id"); the edit is refused if you have not read it in this session, or if it
changed since.

Parameters:
- notebook_path: the ABSOLUTE path of the notebook.
- cell_id: the cell's "id" (in notebooks without ids, "cell-N" names the N-th cell, counting from 0).
- new_source: the cell's new source (ignored for delete).
- cell_type: "code" or "markdown"; default the cell's current type; required to insert. A code cell whose source
  changes loses its outputs and execution count.
- edit_mode: "replace" (default), "insert" (the new cell goes after cell_id, or first without it) or "delete".

Result: which cell was replaced, inserted (with its new id) or deleted.`

/** The one-line result of an edit. */
const resultText = (path: string, edited: Notebook.Edited): string => {
  switch (edited.mode) {
    case "insert":
      return `Inserted a ${edited.cellType} cell with id ${edited.cellId} into ${path}.`
    case "delete":
      return `Deleted cell ${edited.cellId} from ${path}.`
    case "replace":
      return `Replaced the source of cell ${edited.cellId} (${edited.cellType}) in ${path}.`
  }
}

/** Makes NotebookEdit; it checks and updates the session's FileStateCache. */
export const make = Effect.gen(function* () {
  const cache = yield* FileStateCache

  /** Reads the notebook and computes the edit, failing with a message the model can act on. */
  const plan = (path: string, input: Input) =>
    Effect.gen(function* () {
      if (Path.extname(path) !== ".ipynb") {
        return yield* new FileAccess.FileError({
          message: `${path} is not a Jupyter notebook (.ipynb); use Edit for other files.`
        })
      }
      const found = yield* FileAccess.stat(path)
      if (Option.isNone(found)) {
        return yield* new FileAccess.FileError({
          message: FileAccess.notFoundMessage(yield* FileAccess.similarSibling(path))
        })
      }
      yield* FileAccess.checkFresh(cache, path, found.value)
      const text = new TextDecoder().decode(yield* FileAccess.readBytes(path))
      const notebook = Notebook.parse(text)
      if (Notebook.isRefusal(notebook)) return yield* new FileAccess.FileError({ message: notebook.refusal })
      const edited = Notebook.apply(notebook, input)
      if (Notebook.isRefusal(edited)) return yield* new FileAccess.FileError({ message: edited.refusal })
      return { edited, mode: found.value.mode & 0o7777 }
    })

  return yield* Tool.make({
    name,
    description,
    input: Input,
    output: Schema.String,
    failure: FileAccess.FileError,
    category: "file",
    searchHint: "jupyter notebook ipynb cell edit",
    isDestructive: (input) => input.edit_mode === "delete",
    resources: (input) => [{ key: Path.resolve(input.notebook_path), access: "write" }],
    summarize: (input) => input.notebook_path,
    validate: (input, ctx) => FileAccess.validateWrite(input.notebook_path, ctx.cwd, (path) => plan(path, input)),
    call: (input, ctx) =>
      Effect.gen(function* () {
        const path = FileAccess.resolvePath(ctx.cwd, input.notebook_path)
        const { edited, mode } = yield* plan(path, input)
        yield* FileAccess.writeAtomic(path, Buffer.from(Notebook.render(edited.notebook), "utf8"), mode, (r) =>
          cache.record(path, r)
        )
        return resultText(path, edited)
      })
  })
})

/** Registers NotebookEdit; requires ToolRegistry and FileStateCache. */
export const layer = ToolRegistryLive.register(make)
