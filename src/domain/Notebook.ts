/**
 * Jupyter notebooks (nbformat 4) as NotebookEdit changes them: find a cell by its id, replace its source, insert a
 * cell after it, or delete it, keeping the file valid nbformat (docs/tools.md). Pure: reading and writing the file
 * are the tool's.
 */

/** A notebook cell as stored (only the fields NotebookEdit touches are named). */
export interface Cell {
  readonly cell_type: string
  readonly id?: string
  readonly source: string | ReadonlyArray<string>
  readonly metadata: Record<string, unknown>
  readonly execution_count?: number | null
  readonly outputs?: ReadonlyArray<unknown>
  readonly [key: string]: unknown
}

/** A notebook as stored. */
export interface Notebook {
  readonly cells: ReadonlyArray<Cell>
  readonly nbformat: number
  readonly nbformat_minor: number
  readonly metadata: Record<string, unknown>
  readonly [key: string]: unknown
}

/** What to do, NotebookEdit's input without the path. */
export interface Edit {
  readonly cell_id?: string | undefined
  readonly new_source: string
  readonly cell_type?: "code" | "markdown" | undefined
  readonly edit_mode?: "replace" | "insert" | "delete" | undefined
}

/** The notebook after an edit, and what the edit did. */
export interface Edited {
  readonly notebook: Notebook
  readonly cellId: string
  readonly cellType: string
  readonly oldSource: string | undefined
  readonly mode: "replace" | "insert" | "delete"
}

/** A notebook that cannot be edited as asked, with the reason for the model. */
export interface Refusal {
  readonly refusal: string
}

/** Whether a result is a refusal. */
export const isRefusal = (u: Edited | Notebook | Refusal): u is Refusal => "refusal" in u

/** Parses a notebook file's text: JSON with nbformat 4 and a list of cells. */
export const parse = (text: string): Notebook | Refusal => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (e) {
    return { refusal: `The notebook is not valid JSON: ${e instanceof Error ? e.message : String(e)}` }
  }
  if (typeof json !== "object" || json === null || !Array.isArray((json as { cells?: unknown }).cells)) {
    return { refusal: "The notebook has no list of cells: it is not a Jupyter notebook (nbformat 4)." }
  }
  const notebook = json as Notebook
  if (notebook.nbformat !== 4) {
    return {
      refusal: `The notebook is nbformat ${String(notebook.nbformat)}; only nbformat 4 notebooks can be edited.`
    }
  }
  return notebook
}

/** A cell's source as one string. */
const sourceText = (cell: Cell): string => (typeof cell.source === "string" ? cell.source : cell.source.join(""))

/** Whether the notebook's cells carry ids (nbformat 4.5 and later). */
const hasIds = (notebook: Notebook): boolean => notebook.nbformat_minor >= 5

/** A cell's id as the model sees it: its `id`, else `cell-N` (its index, from 0) for notebooks without ids. */
const cellIdOf = (cell: Cell, index: number): string => cell.id ?? `cell-${index}`

/** The index of the cell a `cell_id` names: by `id`, else `cell-N` / `N` by index. */
const findCell = (notebook: Notebook, cellId: string): number => {
  const byId = notebook.cells.findIndex((c) => c.id === cellId)
  if (byId >= 0) return byId
  const index = /^(?:cell-)?(\d+)$/.exec(cellId)
  if (index === null) return -1
  const n = Number(index[1])
  return n < notebook.cells.length ? n : -1
}

/** A new cell id: 8 hex digits not used in the notebook (nbformat: 1-64 of `[a-zA-Z0-9-_]`, unique). */
const newCellId = (notebook: Notebook, random: () => number = Math.random): string => {
  const taken = new Set(notebook.cells.map((c) => c.id))
  while (true) {
    const id = Math.floor(random() * 0x100000000)
      .toString(16)
      .padStart(8, "0")
    if (!taken.has(id)) return id
  }
}

/** A fresh cell of a type, as Jupyter writes one. */
const freshCell = (type: "code" | "markdown", source: string, id: string | undefined): Cell => {
  const base = { cell_type: type, ...(id === undefined ? {} : { id }), metadata: {}, source }
  return type === "code" ? { ...base, execution_count: null, outputs: [] } : base
}

/** A cell given a new source (and maybe a new type): a code cell loses its outputs, which no longer match. */
const replaced = (cell: Cell, source: string, type: "code" | "markdown" | undefined): Cell => {
  const target = type ?? cell.cell_type
  if (target === cell.cell_type && target !== "code") return { ...cell, source }
  if (target === "code") return { ...cell, cell_type: "code", source, execution_count: null, outputs: [] }
  const { execution_count: _count, outputs: _outputs, ...rest } = cell
  return { ...rest, cell_type: target, source }
}

/** Applies an edit; a refusal says what is missing or wrong. */
export const apply = (notebook: Notebook, edit: Edit, random: () => number = Math.random): Edited | Refusal => {
  const mode = edit.edit_mode ?? "replace"
  const index = edit.cell_id === undefined ? undefined : findCell(notebook, edit.cell_id)
  if (index === -1) {
    return {
      refusal: `Cell '${edit.cell_id}' not found in the notebook. Its cells: ${
        notebook.cells.map(cellIdOf).join(", ") || "(none)"
      }.`
    }
  }
  const cells = [...notebook.cells]
  if (mode === "insert") {
    if (edit.cell_type === undefined) return { refusal: "cell_type is required when edit_mode is insert." }
    const id = hasIds(notebook) ? newCellId(notebook, random) : undefined
    const at = index === undefined ? 0 : index + 1
    cells.splice(at, 0, freshCell(edit.cell_type, edit.new_source, id))
    return {
      notebook: { ...notebook, cells },
      cellId: id ?? `cell-${at}`,
      cellType: edit.cell_type,
      oldSource: undefined,
      mode
    }
  }
  if (index === undefined) return { refusal: `cell_id is required when edit_mode is ${mode}.` }
  const cell = cells[index]!
  const cellId = cellIdOf(cell, index)
  if (mode === "delete") {
    cells.splice(index, 1)
    return { notebook: { ...notebook, cells }, cellId, cellType: cell.cell_type, oldSource: sourceText(cell), mode }
  }
  cells[index] = replaced(cell, edit.new_source, edit.cell_type)
  return {
    notebook: { ...notebook, cells },
    cellId,
    cellType: cells[index]!.cell_type,
    oldSource: sourceText(cell),
    mode
  }
}

/** The text a notebook is written as: Jupyter's one-space indentation and a final newline. */
export const render = (notebook: Notebook): string => `${JSON.stringify(notebook, null, 1)}\n`
