import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck, Option, TestClock } from "effect"
import type * as Tool from "../../../src/domain/Tool.js"
import * as ResultCacheLive from "../../../src/layers/results/ResultCacheLive.js"
import { disabled, ResultCache } from "../../../src/services/ResultCache.js"
import { fakeTool } from "../../fixtures/SearchFixtures.js"

const read = (key: string): Tool.Resource => ({ key, access: "read" })
const write = (key: string): Tool.Resource => ({ key, access: "write" })

const tools = Effect.all({
  read: fakeTool({ name: "Read", readOnly: true }),
  glob: fakeTool({ name: "Glob", readOnly: true }),
  fetch: fakeTool({ name: "WebFetch", readOnly: true }),
  writer: fakeTool({ name: "Notes", readOnly: false })
})

const cached = (tool: Tool.Any, input: unknown) =>
  Effect.flatMap(ResultCache, (cache) => Effect.map(cache.lookup(tool, input), Option.getOrNull))

describe("ResultCacheLive", () => {
  it("stable JSON ignores key order", () => {
    expect(ResultCacheLive.stableJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: undefined } })).toBe(
      '{"a":{"d":[1,{"x":1,"y":2}]},"b":1}'
    )
    expect(ResultCacheLive.cacheKey("Read", { b: 1, a: 2 })).toBe(ResultCacheLive.cacheKey("Read", { a: 2, b: 1 }))
  })

  it.prop("stable JSON round-trips JSON values and ignores key order", [FastCheck.jsonValue()], ([value]) => {
    const reversed = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(reversed)
        : typeof v === "object" && v !== null
          ? Object.fromEntries(
              Object.entries(v)
                .reverse()
                .map(([k, x]) => [k, reversed(x)])
            )
          : v
    const json = ResultCacheLive.stableJson(value)
    expect(ResultCacheLive.stableJson(reversed(value))).toBe(json)
    expect(ResultCacheLive.stableJson(JSON.parse(json))).toBe(json)
  })

  it("keys overlap when equal or one is a path prefix of the other", () => {
    expect(ResultCacheLive.overlaps("/a/b", "/a/b")).toBe(true)
    expect(ResultCacheLive.overlaps("/a", "/a/b")).toBe(true)
    expect(ResultCacheLive.overlaps("/a/b/c", "/a")).toBe(true)
    expect(ResultCacheLive.overlaps("/", "/a")).toBe(true)
    expect(ResultCacheLive.overlaps("/ab", "/a")).toBe(false)
    expect(ResultCacheLive.overlaps("/a/b", "/a/c")).toBe(false)
  })

  it.effect("caches read-only calls of allow-listed tools only, by tool and input", () =>
    Effect.gen(function* () {
      const { fetch, read: readTool, writer } = yield* tools
      const cache = yield* ResultCache
      yield* cache.store(readTool, { path: "/a/b", n: 1 }, "contents of b", [read("/a/b")])
      expect(yield* cached(readTool, { n: 1, path: "/a/b" })).toBe("contents of b")
      expect(yield* cached(readTool, { path: "/a/b", n: 2 })).toBeNull()
      yield* cache.store(fetch, { path: "x" }, "page", [read("url:x")])
      expect(yield* cached(fetch, { path: "x" })).toBeNull()
      yield* cache.store(writer, { path: "x" }, "w", [])
      expect(yield* cached(writer, { path: "x" })).toBeNull()
    }).pipe(Effect.provide(ResultCacheLive.layer({ tools: ["Read", "Glob", "Notes"] })))
  )

  it.effect("a write invalidates entries that read the path or a directory containing it", () =>
    Effect.gen(function* () {
      const { glob, read: readTool } = yield* tools
      const cache = yield* ResultCache
      yield* cache.store(readTool, { path: "/a/b" }, "b", [read("/a/b")])
      yield* cache.store(readTool, { path: "/a/c" }, "c", [read("/a/c")])
      yield* cache.store(glob, { path: "/a" }, "a/*", [read("/a")])
      yield* cache.store(glob, { path: "/z" }, "z/*", [read("/z")])
      yield* cache.invalidate([read("/a/c"), write("/a/b")])
      expect(yield* cached(readTool, { path: "/a/b" })).toBeNull()
      expect(yield* cached(glob, { path: "/a" })).toBeNull()
      expect(yield* cached(readTool, { path: "/a/c" })).toBe("c")
      expect(yield* cached(glob, { path: "/z" })).toBe("z/*")
      yield* cache.invalidate([write("/z/new/file")])
      expect(yield* cached(glob, { path: "/z" })).toBeNull()
      expect(yield* cached(readTool, { path: "/a/c" })).toBe("c")
      yield* cache.invalidate([write("/")])
      expect(yield* cached(readTool, { path: "/a/c" })).toBeNull()
    }).pipe(Effect.provide(ResultCacheLive.layer({ tools: ["Read", "Glob"] })))
  )

  it.effect("a write with unknown resources clears everything; entries with no reads die on any write", () =>
    Effect.gen(function* () {
      const { glob, read: readTool } = yield* tools
      const cache = yield* ResultCache
      yield* cache.store(readTool, { path: "/a" }, "a", [read("/a")])
      yield* cache.store(glob, { path: "?" }, "unknown reads", [])
      yield* cache.invalidate([write("/elsewhere")])
      expect(yield* cached(glob, { path: "?" })).toBeNull()
      expect(yield* cached(readTool, { path: "/a" })).toBe("a")
      yield* cache.invalidate([read("/a")])
      expect(yield* cached(readTool, { path: "/a" })).toBeNull()
    }).pipe(Effect.provide(ResultCacheLive.layer({ tools: ["Read", "Glob"] })))
  )

  it.effect("evicts the least recently used entry beyond maxEntries", () =>
    Effect.gen(function* () {
      const { read: readTool } = yield* tools
      const cache = yield* ResultCache
      yield* cache.store(readTool, { path: "/1" }, "1", [read("/1")])
      yield* cache.store(readTool, { path: "/2" }, "2", [read("/2")])
      expect(yield* cached(readTool, { path: "/1" })).toBe("1")
      yield* cache.store(readTool, { path: "/3" }, "3", [read("/3")])
      expect(yield* cached(readTool, { path: "/2" })).toBeNull()
      expect(yield* cached(readTool, { path: "/1" })).toBe("1")
      expect(yield* cached(readTool, { path: "/3" })).toBe("3")
    }).pipe(Effect.provide(ResultCacheLive.layer({ tools: ["Read"], maxEntries: 2 })))
  )

  it.effect("entries expire after the ttl", () =>
    Effect.gen(function* () {
      const { read: readTool } = yield* tools
      const cache = yield* ResultCache
      yield* cache.store(readTool, { path: "/1" }, "1", [read("/1")])
      yield* TestClock.adjust("59 seconds")
      expect(yield* cached(readTool, { path: "/1" })).toBe("1")
      yield* TestClock.adjust("1 second")
      expect(yield* cached(readTool, { path: "/1" })).toBeNull()
    }).pipe(Effect.provide(ResultCacheLive.layer({ tools: ["Read"], ttl: "60 seconds" })))
  )

  it.effect("the disabled layer caches nothing", () =>
    Effect.gen(function* () {
      const { read: readTool } = yield* tools
      const cache = yield* ResultCache
      yield* cache.store(readTool, { path: "/1" }, "1", [read("/1")])
      expect(yield* cached(readTool, { path: "/1" })).toBeNull()
    }).pipe(Effect.provide(disabled))
  )
})
