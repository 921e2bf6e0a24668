/**
 * Large-result handling (docs/tools.md, "Size of results"): results above a tool's threshold are persisted and replaced
 * by a preview, and tools that produce streams spill them to a file while keeping only a bounded head and tail in
 * memory.
 */
import { Context, type Effect, type Option, Schema, type Scope } from "effect"
import type { ToolResultContent } from "../domain/Blocks.js"
import type * as HeadTail from "../domain/HeadTail.js"

/** What the store is given for one result. */
export interface StoreRequest {
  readonly toolUseId: string
  readonly toolName: string
  readonly content: ToolResultContent
  readonly maxResultSizeChars: number
}

/** Writing a persisted result or a spill file failed. */
export class ResultStoreError extends Schema.TaggedError<ResultStoreError>()("ResultStoreError", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Could not save output to ${this.path}: ${this.reason}`
  }
}

/** How much of a stream a spill keeps in memory. */
export interface SpillOptions {
  /** Names the file: `<state dir>/tool-results/{toolUseId}.txt`. */
  readonly toolUseId: string
  /** Characters kept from the start. */
  readonly headChars: number
  /** Characters kept from the end. */
  readonly tailChars: number
}

/** What a finished spill holds. */
export interface Spilled extends HeadTail.Snapshot {
  /** The file with the complete output; present only when the output did not fit in head + tail. */
  readonly path: Option.Option<string>
  /** Bytes of the complete output (UTF-8). */
  readonly bytes: number
  /**
   * Bytes the file holds when the cap on saved output (FsResultStore's `maxSavedBytes`) cut it short of `bytes`;
   * absent when the file holds the whole output.
   */
  readonly savedBytes?: number | undefined
}

/**
 * A writer for streamed output: the first `headChars + tailChars` characters stay in memory; once the output
 * grows past them, everything (from the first character) goes to the file and memory keeps the head and tail.
 */
export interface Spill {
  readonly write: (chunk: string) => Effect.Effect<void, ResultStoreError>
  /**
   * Writes raw UTF-8 bytes (decoded across chunk boundaries for the head and tail, written to the file as they
   * are). Streaming tools should prefer it: bytes in flight live outside the JS heap.
   */
  readonly writeBytes: (chunk: Uint8Array) => Effect.Effect<void, ResultStoreError>
  /** The last `n` lines written so far (for progress reports). */
  readonly lastLines: (n: number) => Effect.Effect<string>
  readonly snapshot: Effect.Effect<HeadTail.Snapshot>
  /** Flushes and closes the file; the spill must not be written to afterwards. */
  readonly finish: Effect.Effect<Spilled, ResultStoreError>
}

/** The port. */
export class ResultStore extends Context.Tag("armature/ResultStore")<
  ResultStore,
  {
    /** Returns the content to send to the model: unchanged, or a persisted-output preview. */
    readonly process: (request: StoreRequest) => Effect.Effect<ToolResultContent>
    /** Opens a spill for a streaming tool; the file is closed when the scope closes. */
    readonly openSpill: (options: SpillOptions) => Effect.Effect<Spill, ResultStoreError, Scope.Scope>
  }
>() {}
