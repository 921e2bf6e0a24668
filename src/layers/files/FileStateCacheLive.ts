/**
 * The in-memory FileStateCache: one map per session, built with the session's layers.
 */
import { Effect, HashMap, Layer, Ref } from "effect"
import { type FileRecord, FileStateCache } from "../../services/FileStateCache.js"

/** Builds an empty cache. */
export const make = Effect.map(Ref.make(HashMap.empty<string, FileRecord>()), (records) =>
  FileStateCache.of({
    record: (path, record) => Ref.update(records, HashMap.set(path, record)),
    get: (path) => Effect.map(Ref.get(records), HashMap.get(path)),
    forget: (path) => Ref.update(records, HashMap.remove(path))
  })
)

/** A fresh, empty cache per layer build (build it once per session). */
export const layer = Layer.effect(FileStateCache, make)
