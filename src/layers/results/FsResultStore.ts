/**
 * The file-system ResultStore (docs/tools.md, "Size of results"): results above `min(maxResultSizeChars, 50_000)`
 * characters are written to `<state dir>/tool-results/{tool_use_id}.txt` (`.json` for block arrays) and replaced by a
 * preview, or — with the head/tail strategy — by their first and last 40 % around a summary of the middle. Streaming
 * tools spill through `openSpill`, which keeps memory bounded whatever the output size.
 */
import * as NodeFs from "node:fs"
import * as Path from "node:path"
import { StringDecoder } from "node:string_decoder"
import { FileSystem } from "@effect/platform"
import { Effect, Layer, Option, Scope } from "effect"
import { contentSize, type ToolResultContent } from "../../domain/Blocks.js"
import * as HeadTail from "../../domain/HeadTail.js"
import * as PersistedOutput from "../../domain/PersistedOutput.js"
import { ResultStore, ResultStoreError, type Spill, type SpillOptions } from "../../services/ResultStore.js"
import { Session } from "../../services/Session.js"
import { Settings } from "../../services/Settings.js"
import { Summarizer } from "../../services/Summarizer.js"
import * as Spans from "../observability/Spans.js"

/** How a result above the threshold is shown to the model (the full content is persisted either way). */
export type Strategy =
  | { readonly _tag: "persist" }
  | { readonly _tag: "head-tail"; readonly summarize: (text: string) => Effect.Effect<string> }

/** Options of the store. */
export interface Options {
  /** The state directory; files go to `<stateDir>/tool-results/`. */
  readonly stateDir: string
  readonly strategy?: Strategy | undefined
  /**
   * The most bytes saved for one call (default: `ARMATURE_MAX_SAVED_OUTPUT`, else the settings'
   * `maxSavedOutputBytes`, else 64 MiB); output past it is counted and its tail kept, but not written.
   */
  readonly maxSavedBytes?: number | undefined
}

/** The cap on saved output: the option, else `ARMATURE_MAX_SAVED_OUTPUT` (`64M`, bytes…), else the settings' key. */
const maxSavedBytesOf = (option: number | undefined) =>
  Effect.gen(function* () {
    if (option !== undefined) return option
    const env = process.env.ARMATURE_MAX_SAVED_OUTPUT
    const fromEnv = env === undefined || env.trim() === "" ? undefined : PersistedOutput.parseSize(env)
    if (fromEnv !== undefined) return fromEnv
    const settings = yield* Effect.serviceOption(Settings)
    const configured = Option.getOrUndefined(settings)?.settings.maxSavedOutputBytes
    return configured ?? PersistedOutput.defaultMaxSavedBytes
  })

/** The share of the threshold kept from each end by the head/tail strategy. */
export const headTailShare = 0.4

/** The text of the head/tail strategy for a string result. */
export const headTailText = (options: {
  readonly text: string
  readonly threshold: number
  readonly summary: string
  readonly path: string
}): string => {
  const keep = Math.floor(options.threshold * headTailShare)
  const head = options.text.slice(0, keep)
  const middle = options.text.slice(keep, options.text.length - keep)
  const tail = options.text.slice(options.text.length - keep)
  const lines = middle.length === 0 ? 0 : middle.split("\n").length - (middle.endsWith("\n") ? 1 : 0)
  return `${head}\n... [${lines} lines (${middle.length} characters) omitted; summary follows] ...\n${options.summary}\n... [continued; full output saved to: ${options.path}] ...\n${tail}`
}

const storeError = (path: string) => (e: { readonly message: string }) =>
  new ResultStoreError({ path, reason: e.message })

/** The length a UTF-8 byte sequence has as a JavaScript string (UTF-16 code units), without decoding it. */
export const utf16Units = (bytes: Uint8Array): number => {
  let units = 0
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]
    if ((b & 0xc0) !== 0x80) units += b >= 0xf0 ? 2 : 1
  }
  return units
}

/** Builds the store. */
export const make = (options: Options) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const dir = Path.join(options.stateDir, "tool-results")
    const strategy: Strategy = options.strategy ?? { _tag: "persist" }
    const maxSavedBytes = yield* maxSavedBytesOf(options.maxSavedBytes)
    const ensureDir = fs.makeDirectory(dir, { recursive: true }).pipe(Effect.mapError(storeError(dir)))

    /** Writes the text, or its first `maxSavedBytes` bytes; returns its size and what was saved of it. */
    const persist = (path: string, text: string) =>
      Effect.suspend(() => {
        const bytes = Buffer.byteLength(text)
        const saved = bytes <= maxSavedBytes ? text : Buffer.from(text, "utf8").subarray(0, maxSavedBytes)
        return ensureDir.pipe(
          Effect.zipRight(typeof saved === "string" ? fs.writeFileString(path, saved) : fs.writeFile(path, saved)),
          Effect.mapError(storeError(path)),
          Effect.as({ bytes, savedBytes: bytes <= maxSavedBytes ? undefined : maxSavedBytes })
        )
      })

    const process = (request: {
      readonly toolUseId: string
      readonly toolName: string
      readonly content: ToolResultContent
      readonly maxResultSizeChars: number
    }): Effect.Effect<ToolResultContent> => {
      const threshold = PersistedOutput.thresholdOf(request.maxResultSizeChars)
      if (contentSize(request.content) <= threshold) return Effect.succeed(request.content)
      const isText = typeof request.content === "string"
      const text = typeof request.content === "string" ? request.content : JSON.stringify(request.content, null, 2)
      const path = Path.join(dir, `${PersistedOutput.fileStem(request.toolUseId)}.${isText ? "txt" : "json"}`)
      const shown = (saved: { bytes: number; savedBytes: number | undefined }): Effect.Effect<ToolResultContent> =>
        strategy._tag === "head-tail" && isText
          ? Effect.map(
              strategy.summarize(
                text.slice(Math.floor(threshold * headTailShare), text.length - Math.floor(threshold * headTailShare))
              ),
              (summary) => headTailText({ text, threshold, summary, path })
            )
          : Effect.succeed(PersistedOutput.persistedOutput({ ...saved, path, preview: PersistedOutput.preview(text) }))
      return persist(path, text).pipe(
        Effect.flatMap(shown),
        Spans.span(Spans.names.persist, {
          "gen_ai.tool.call.id": request.toolUseId,
          "armature.result.size": text.length,
          "armature.result.persisted_path": path
        }),
        // The model still gets a bounded result when the disk fails; the reason replaces the path.
        Effect.catchAll((e) =>
          Effect.succeed(
            `${PersistedOutput.preview(text)}\n...\n[Output too large (${PersistedOutput.formatSize(Buffer.byteLength(text))}) and could not be saved: ${e.reason}]`
          )
        )
      )
    }

    const openSpill = (spill: SpillOptions): Effect.Effect<Spill, ResultStoreError, Scope.Scope> =>
      Effect.gen(function* () {
        const scope = yield* Effect.scope
        const path = Path.join(dir, `${PersistedOutput.fileStem(spill.toolUseId)}.txt`)
        const buffer = HeadTail.make(spill.headChars, spill.tailChars)
        const inMemoryLimit = spill.headChars + spill.tailChars
        // Until the output outgrows head + tail, it is all in `buffer`; then the file is opened and gets it all.
        let file: Option.Option<FileSystem.File> = Option.none()
        let bytes = 0
        const decoder = new StringDecoder("utf8")
        // The raw bytes of the output while it all fits in memory (at most head + tail characters).
        let pending: Array<Buffer> = []
        const openFile = Effect.gen(function* () {
          yield* ensureDir
          const opened = yield* fs
            .open(path, { flag: "w" })
            .pipe(Effect.mapError(storeError(path)), Scope.extend(scope))
          file = Option.some(opened)
          return opened
        })
        const writeBytes = (chunk: Uint8Array): Effect.Effect<void, ResultStoreError> =>
          Effect.suspend(() => {
            if (chunk.byteLength === 0) return Effect.void
            const raw = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
            bytes += raw.byteLength
            if (Option.isSome(file)) {
              // Once on disk, chunks are counted and kept as raw bytes for the tail: nothing is decoded per chunk.
              unitsAfter += utf16Units(raw)
              recent.append(raw)
              return writeCapped(file.value, raw)
            }
            buffer.append(decoder.write(raw))
            pending.push(Buffer.from(raw))
            if (buffer.snapshot().totalChars <= inMemoryLimit) return Effect.void
            const all = Buffer.concat(pending)
            pending = []
            return Effect.flatMap(openFile, (opened) => writeCapped(opened, all))
          })
        // What the file holds: at most `maxSavedBytes`; the rest is only counted (and its tail kept in memory).
        let saved = 0
        const writeCapped = (opened: FileSystem.File, chunk: Buffer) => {
          const room = maxSavedBytes - saved
          if (room <= 0) return Effect.void
          const part = chunk.byteLength <= room ? chunk : chunk.subarray(0, room)
          saved += part.byteLength
          return writeNow(opened, part)
        }
        const write = (chunk: string) => writeBytes(Buffer.from(chunk, "utf8"))
        // Spill writes are synchronous on purpose: a chunk then dies in the tick it arrived, so pipe buffers are
        // reclaimed by the young-generation GC instead of piling up as promoted garbage (an async write keeps every
        // chunk alive across scavenges, and 1 GiB of output then grows the process by well over 100 MiB). Writes go
        // to the page cache, so each blocks for microseconds.
        const writeNow = (opened: FileSystem.File, bytes: Uint8Array) =>
          Effect.try({
            try: () => {
              let offset = 0
              while (offset < bytes.byteLength) offset += NodeFs.writeSync(opened.fd, bytes, offset)
            },
            catch: (e) => new ResultStoreError({ path, reason: e instanceof Error ? e.message : String(e) })
          })
        let unitsAfter = 0
        const recent = HeadTail.makeBytes(0, 3 * spill.tailChars + 3)
        const snapshot = (): HeadTail.Snapshot => {
          const base = buffer.snapshot()
          if (Option.isNone(file)) return base
          const tail = (base.tail + recent.snapshot().tail).slice(-spill.tailChars)
          const totalChars = base.totalChars + unitsAfter
          return { head: base.head, tail, totalChars, omittedChars: totalChars - base.head.length - tail.length }
        }
        const lastLines = (n: number): string => {
          const current = snapshot()
          const text = current.omittedChars > 0 ? current.tail : current.head + current.tail
          return text.replace(/\n$/, "").split("\n").slice(-n).join("\n")
        }
        return {
          write,
          writeBytes,
          lastLines: (n) => Effect.sync(() => lastLines(n)),
          snapshot: Effect.sync(snapshot),
          finish: Effect.gen(function* () {
            if (Option.isNone(file)) buffer.append(decoder.end())
            return {
              ...snapshot(),
              path: Option.map(file, () => path),
              bytes,
              savedBytes: Option.isSome(file) && saved < bytes ? saved : undefined
            }
          })
        } satisfies Spill
      })

    return ResultStore.of({ process, openSpill })
  })

/** The store under the session's state directory, persisting with a preview. Requires Session and FileSystem. */
export const layer = Layer.effect(
  ResultStore,
  Effect.flatMap(Session, (session) => make({ stateDir: session.stateDir }))
)

/**
 * The store under the session's state directory with the head 40 % + tail 40 % + summary strategy. Requires
 * Session, FileSystem and a Summarizer (e.g. `Summarizer.layerStatistics`).
 */
export const layerHeadTail = Layer.effect(
  ResultStore,
  Effect.gen(function* () {
    const session = yield* Session
    const summarizer = yield* Summarizer
    return yield* make({ stateDir: session.stateDir, strategy: { _tag: "head-tail", summarize: summarizer.summarize } })
  })
)

/** The store under a given state directory. Requires FileSystem. */
export const layerDir = (stateDir: string, strategy?: Strategy) =>
  Layer.effect(ResultStore, make({ stateDir, strategy }))
