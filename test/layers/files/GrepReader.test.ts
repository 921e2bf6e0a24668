import * as NodeFs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck, Fiber } from "effect"
import { splitText } from "../../../src/domain/LineSearch.js"
import * as GrepEngine from "../../../src/layers/files/GrepEngine.js"
import * as GrepReader from "../../../src/layers/files/GrepReader.js"

const dir = NodeFs.mkdtempSync(Path.join(Os.tmpdir(), "armature-grep-reader-"))
let serial = 0
afterAll(() => NodeFs.rmSync(dir, { recursive: true, force: true }))
const write = (bytes: Uint8Array): string => {
  const path = Path.join(dir, `f${serial++}`)
  NodeFs.writeFileSync(path, bytes)
  return path
}

// Bytes biased towards what makes decoding and line splitting interesting: line feeds, a byte-order mark,
// truncated and invalid UTF-8 sequences, surrogates encoded in UTF-8, ASCII letters.
const tricky = [0x0a, 0x0d, 0xef, 0xbb, 0xbf, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0xed, 0xa0, 0x80, 0xff]
const byteArb = FastCheck.oneof(
  FastCheck.constantFrom(...tricky),
  FastCheck.integer({ min: 0x61, max: 0x63 }),
  FastCheck.integer({ min: 1, max: 255 })
)
const bytesArb = FastCheck.array(byteArb, { maxLength: 80 }).map((b) => Uint8Array.from(b))

const decoder = new TextDecoder("utf-8")

describe("GrepReader", () => {
  it.prop(
    "a file's text is what a WHATWG UTF-8 decoder gives; a file with a NUL byte is skipped",
    [bytesArb, FastCheck.boolean()],
    ([bytes, nul]) => {
      const content = nul ? Uint8Array.from([...bytes, 0, 0x61]) : bytes
      const found = GrepReader.readCandidates(NodeFs, GrepReader.makeState(), [write(content)], [])
      expect(found).toEqual(nul ? [] : [[0, decoder.decode(content)]])
    },
    { fastCheck: { numRuns: 300 } }
  )

  it.prop(
    "matching by line finds exactly the lines of the decoded text that hold the literals and match",
    [bytesArb, FastCheck.constantFrom("ab", "a\\w*b", "b+c", "ca\\S", "ab\\W?bc", "ca.*ab")],
    ([bytes, pattern]) => {
      const path = write(bytes)
      const literals = GrepEngine.literalsOf({ pattern, caseInsensitive: false })
      const line = new RegExp(pattern, "u")
      const text = decoder.decode(bytes)
      const expected = splitText(text)
        .map((t, i) => [i + 1, t] as const)
        .filter(([, t]) => line.test(t))
      const found = GrepReader.readCandidates(NodeFs, GrepReader.makeState(), [path], literals, {
        source: line.source,
        flags: line.flags,
        firstOnly: false
      })
      // a pattern without a literal of two characters or more is matched on the whole text by the caller
      if (literals.length === 0) expect(found).toEqual([[0, text]])
      else expect(found).toEqual(expected.length === 0 ? [] : [[0, expected]])
    },
    { fastCheck: { numRuns: 300 } }
  )

  it("reads a file larger than its buffer to the end, and skips one with a NUL after the first 64 KiB", () => {
    const big = Buffer.alloc(3 * 1024 * 1024 + 17, "x")
    big[big.length - 2] = 0x0a
    const binary = Buffer.alloc(200 * 1024, "y")
    binary[150 * 1024] = 0
    const state = { buffer: Buffer.allocUnsafe(1024) }
    const found = GrepReader.readCandidates(NodeFs, state, [write(big), write(binary)], [])
    expect(found).toEqual([[0, big.toString("latin1")]])
  })

  it.effect("worker threads find what the calling thread finds, batch by batch, in any order of arrival", () =>
    Effect.gen(function* () {
      const paths = Array.from({ length: 1000 }, (_, i) =>
        write(Buffer.from(i % 7 === 0 ? `one\nneedle ${i}\nthree\n` : `nothing ${i}\n`))
      )
      const literals = GrepEngine.literalsOf({ pattern: "needle", caseInsensitive: false })
      const linePattern = { source: "needle \\d+", flags: "u", firstOnly: false }
      const collect = (
        read: (
          onFound: (offset: number, found: ReadonlyArray<GrepReader.Candidate>) => void
        ) => Effect.Effect<void, unknown>
      ) =>
        Effect.gen(function* () {
          const all: Array<readonly [string, unknown]> = []
          yield* read((offset, found) => {
            for (const [index, lines] of found) all.push([paths[offset + index], lines])
          })
          return all.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        })
      const here = yield* collect((onFound) => GrepReader.readHere(paths, literals, linePattern, onFound))
      const workers = yield* collect((onFound) => GrepReader.readParallel(paths, literals, linePattern, onFound, 3))
      expect(here).toHaveLength(143)
      expect(here.find(([path]) => path === paths[7])).toEqual([paths[7], [[2, "needle 7"]]])
      expect(workers).toEqual(here)
      // The same paths handed over in uneven steps while the readers already run, as a walk finds them.
      const growing: Array<string> = []
      let ended = false
      let wake = () => {}
      const feed: GrepReader.Feed = { paths: growing, done: () => ended, subscribe: (f) => (wake = f) }
      const fed = yield* Effect.fork(collect((onFound) => GrepReader.readFed(feed, literals, linePattern, onFound, 2)))
      for (const step of [1, 150, 349, 0, 260, 240]) {
        growing.push(...paths.slice(growing.length, growing.length + step))
        wake()
        // a turn of the event loop (not the test clock), in which the workers' answers arrive
        yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      }
      ended = true
      wake()
      expect(growing).toHaveLength(1000)
      expect(yield* Fiber.join(fed)).toEqual(here)
    })
  )
})
