/**
 * What a Grep search is and what it finds, as data: the query both engines of src/layers/files/GrepEngine.ts take
 * (rg and the built-in one) and the lines they produce, shared with the line matcher (LineSearch.ts).
 */

/** What the model may ask for. */
export type OutputMode = "content" | "files_with_matches" | "count"

/** A search, with paths already resolved. */
export interface Query {
  readonly pattern: string
  /** The absolute file or directory to search. */
  readonly path: string
  readonly globs: ReadonlyArray<string>
  readonly type: string | undefined
  readonly mode: OutputMode
  readonly caseInsensitive: boolean
  readonly multiline: boolean
  readonly before: number
  readonly after: number
}

/** One printed line of a file: a match line or a context line. */
export interface Line {
  readonly number: number
  readonly text: string
  readonly match: boolean
}

/** The matches in one file: lines (content mode) and the count ripgrep's `-c` prints. */
export interface FileResult {
  readonly path: string
  readonly count: number
  readonly lines: ReadonlyArray<Line>
}
