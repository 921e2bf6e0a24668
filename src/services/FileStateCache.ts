/**
 * The file-state cache (docs/tools.md, Write and Edit): what each file looked like when the model last read (or wrote)
 * it, so Write and Edit can refuse to overwrite a file the model has not seen, or that changed since.
 */
import { Context, type Effect, type Option } from "effect"

/** What a file looked like when it was last read or written by a tool: its mtime and a hash of its bytes. */
export interface FileRecord {
  readonly mtimeMs: number
  readonly hash: string
}

/** The text sent to the model when it writes an existing file it has not read in this session. */
export const notReadMessage = "File has not been read yet. Read it first before writing to it."

/** The text sent to the model when a file changed on disk since it was read. */
export const modifiedMessage =
  "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it."

/** The port: one instance per session, keyed by absolute path. */
export class FileStateCache extends Context.Tag("armature/FileStateCache")<
  FileStateCache,
  {
    /** Records the state of a file after a Read, Write or Edit. */
    readonly record: (path: string, record: FileRecord) => Effect.Effect<void>
    /** The last recorded state of a file. */
    readonly get: (path: string) => Effect.Effect<Option.Option<FileRecord>>
    /** Forgets a file (e.g. after it was deleted). */
    readonly forget: (path: string) => Effect.Effect<void>
  }
>() {}
