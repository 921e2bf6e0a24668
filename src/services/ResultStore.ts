/**
 * Large-result handling (SPEC §7): results above a tool's threshold are persisted and replaced by a preview.
 */
import { Context, Effect, Layer } from "effect"
import type { ToolResultContent } from "../domain/Blocks.js"

/** What the store is given for one result. */
export interface StoreRequest {
  readonly toolUseId: string
  readonly toolName: string
  readonly content: ToolResultContent
  readonly maxResultSizeChars: number
}

/** The port. */
export class ResultStore extends Context.Tag("armature/ResultStore")<
  ResultStore,
  {
    /** Returns the content to send to the model: unchanged, or a persisted-output preview. */
    readonly process: (request: StoreRequest) => Effect.Effect<ToolResultContent>
  }
>() {}

/** Keeps every result as it is. */
export const keepAll = Layer.succeed(ResultStore, ResultStore.of({ process: (r) => Effect.succeed(r.content) }))
