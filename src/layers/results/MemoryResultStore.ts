/**
 * A ResultStore that keeps everything in memory: results pass through unchanged, and spills keep a bounded head
 * and tail and drop the middle. For tests and embedders that persist nothing.
 */
import { StringDecoder } from "node:string_decoder"
import { Effect, Layer, Option } from "effect"
import * as HeadTail from "../../domain/HeadTail.js"
import { ResultStore, type Spill, type SpillOptions } from "../../services/ResultStore.js"

/** A spill that never writes a file: it keeps the head and tail and drops the middle. */
export const memorySpill = (options: SpillOptions): Effect.Effect<Spill> =>
  Effect.sync(() => {
    const buffer = HeadTail.make(options.headChars, options.tailChars)
    const decoder = new StringDecoder("utf8")
    let bytes = 0
    const writeBytes = (chunk: Uint8Array) =>
      Effect.sync(() => {
        bytes += chunk.byteLength
        buffer.append(decoder.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)))
      })
    return {
      write: (chunk) => writeBytes(Buffer.from(chunk, "utf8")),
      writeBytes,
      lastLines: (n) => Effect.sync(() => buffer.lastLines(n)),
      snapshot: Effect.sync(() => buffer.snapshot()),
      finish: Effect.sync(() => {
        buffer.append(decoder.end())
        return { ...buffer.snapshot(), path: Option.none(), bytes }
      })
    }
  })

/** Keeps every result as it is; spills keep only head and tail in memory and persist nothing. */
export const layer = Layer.succeed(
  ResultStore,
  ResultStore.of({ process: (r) => Effect.succeed(r.content), openSpill: memorySpill })
)
