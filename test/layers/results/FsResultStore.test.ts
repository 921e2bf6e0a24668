import * as Fs from "node:fs"
import * as Path from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as PersistedOutput from "../../../src/domain/PersistedOutput.js"
import * as FsResultStore from "../../../src/layers/results/FsResultStore.js"
import * as MemoryResultStore from "../../../src/layers/results/MemoryResultStore.js"
import * as SessionLive from "../../../src/layers/session/SessionLive.js"
import { ResultStore } from "../../../src/services/ResultStore.js"
import * as SummarizerModule from "../../../src/services/Summarizer.js"
import { Summarizer } from "../../../src/services/Summarizer.js"
import { tempDir } from "../../fixtures/ProcessTestKit.js"

const stateDir = tempDir("armature-results-")
const resultsDir = Path.join(stateDir, "tool-results")

const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${String(i + 1).padStart(5, "0")}`)

describe("PersistedOutput", () => {
  it("formats sizes in bytes, KB, MB and GB with one decimal", () => {
    expect(PersistedOutput.formatSize(512)).toBe("512 bytes")
    expect(PersistedOutput.formatSize(62_464)).toBe("61.0KB")
    expect(PersistedOutput.formatSize(1_258_291)).toBe("1.2MB")
    expect(PersistedOutput.formatSize(1_073_741_824)).toBe("1.0GB")
  })

  it("cuts the preview at the last newline only when it falls past the middle", () => {
    expect(PersistedOutput.preview(`${"a".repeat(1_500)}\n${"b".repeat(1_000)}`)).toBe("a".repeat(1_500))
    expect(PersistedOutput.preview(`${"a".repeat(900)}\n${"b".repeat(2_000)}`)).toBe(
      `${"a".repeat(900)}\n${"b".repeat(1_099)}`
    )
    expect(PersistedOutput.preview("short\ntext")).toBe("short\ntext")
  })

  it("thresholds are min(maxResultSizeChars, 50000), Infinity never", () => {
    expect(PersistedOutput.thresholdOf(100_000)).toBe(50_000)
    expect(PersistedOutput.thresholdOf(1_000)).toBe(1_000)
    expect(PersistedOutput.thresholdOf(Number.POSITIVE_INFINITY)).toBe(Number.POSITIVE_INFINITY)
  })

  it("makes tool_use ids safe as file names", () => {
    expect(PersistedOutput.fileStem("toolu_01AbC-x")).toBe("toolu_01AbC-x")
    expect(PersistedOutput.fileStem("../../etc/passwd")).toBe("______etc_passwd")
  })
})

describe("Summarizer.statistics", () => {
  it("counts lines and characters and lists the most frequent terms", () => {
    expect(SummarizerModule.statistics("Error: disk full\nerror: retry\nwarning: the disk\n")).toBe(
      "3 lines, 48 characters. Most frequent terms: disk (2), error (2), full (1), retry (1), warning (1)"
    )
    expect(SummarizerModule.statistics("1 2\n3")).toBe("2 lines, 5 characters.")
  })
})

layer(NodeFileSystem.layer)("FsResultStore", (it) => {
  const store = (strategy?: FsResultStore.Strategy) => FsResultStore.make({ stateDir, strategy })

  it.effect("keeps results at or under the threshold unchanged", () =>
    Effect.gen(function* () {
      const s = yield* store()
      const content = "x".repeat(50_000)
      expect(yield* s.process({ toolUseId: "t_equal", toolName: "T", content, maxResultSizeChars: 100_000 })).toBe(
        content
      )
      expect(Fs.existsSync(Path.join(resultsDir, "t_equal.txt"))).toBe(false)
    })
  )

  it.effect("Infinity never persists", () =>
    Effect.gen(function* () {
      const s = yield* store()
      const content = "y".repeat(200_000)
      const out = yield* s.process({
        toolUseId: "t_inf",
        toolName: "Read",
        content,
        maxResultSizeChars: Number.POSITIVE_INFINITY
      })
      expect(out).toBe(content)
      expect(Fs.existsSync(Path.join(resultsDir, "t_inf.txt"))).toBe(false)
    })
  )

  it.effect("persists text above the threshold and returns the exact preview block", () =>
    Effect.gen(function* () {
      const s = yield* store()
      const content = `${lines(6_000).join("\n")}\n`
      expect(content.length).toBe(66_000)
      const out = yield* s.process({ toolUseId: "toolu_big", toolName: "T", content, maxResultSizeChars: 100_000 })
      const path = Path.join(resultsDir, "toolu_big.txt")
      expect(out).toBe(
        `<persisted-output>\nOutput too large (64.5KB). Full output saved to: ${path}\n\nPreview (first 2KB):\n${lines(181).join("\n")}\n...\n</persisted-output>`
      )
      expect(Fs.readFileSync(path, "utf8")).toBe(content)
    })
  )

  it.effect("uses the tool's own threshold when it is lower than 50,000", () =>
    Effect.gen(function* () {
      const s = yield* store()
      const content = "z".repeat(1_001)
      const out = yield* s.process({ toolUseId: "t_low", toolName: "T", content, maxResultSizeChars: 1_000 })
      expect(out).toBe(
        `<persisted-output>\nOutput too large (1001 bytes). Full output saved to: ${Path.join(resultsDir, "t_low.txt")}\n\nPreview (first 2KB):\n${content}\n...\n</persisted-output>`
      )
    })
  )

  it.effect("persists block arrays as .json", () =>
    Effect.gen(function* () {
      const s = yield* store()
      const content = [
        { type: "text" as const, text: "a".repeat(30_000) },
        { type: "text" as const, text: "b".repeat(30_000) }
      ]
      const out = yield* s.process({
        toolUseId: "t_blocks",
        toolName: "mcp__x__y",
        content,
        maxResultSizeChars: 100_000
      })
      const path = Path.join(resultsDir, "t_blocks.json")
      const json = JSON.stringify(content, null, 2)
      expect(Fs.readFileSync(path, "utf8")).toBe(json)
      expect(out).toBe(
        `<persisted-output>\nOutput too large (58.7KB). Full output saved to: ${path}\n\nPreview (first 2KB):\n${json.slice(0, 2_000)}\n...\n</persisted-output>`
      )
    })
  )

  it.effect("the head/tail strategy keeps 40 % at each end around a summary of the middle", () =>
    Effect.gen(function* () {
      const s = yield* store({
        _tag: "head-tail",
        summarize: (text) => Effect.succeed(SummarizerModule.statistics(text))
      })
      const content = `${"H".repeat(400)}${"alpha beta\n".repeat(100)}${"T".repeat(400)}`
      const out = yield* s.process({ toolUseId: "t_ht", toolName: "T", content, maxResultSizeChars: 1_000 })
      const path = Path.join(resultsDir, "t_ht.txt")
      expect(out).toBe(
        `${"H".repeat(400)}\n... [100 lines (1100 characters) omitted; summary follows] ...\n100 lines, 1,100 characters. Most frequent terms: alpha (100), beta (100)\n... [continued; full output saved to: ${path}] ...\n${"T".repeat(400)}`
      )
      expect(Fs.readFileSync(path, "utf8")).toBe(content)
    })
  )

  it.effect("layerHeadTail takes the Summarizer service", () =>
    Effect.gen(function* () {
      const s = yield* ResultStore
      const out = yield* s.process({
        toolUseId: "t_ht2",
        toolName: "T",
        content: "q".repeat(1_200),
        maxResultSizeChars: 1_000
      })
      expect(out).toContain("\n... [1 lines (400 characters) omitted; summary follows] ...\nsummary of 400\n")
    }).pipe(
      Effect.provide(
        FsResultStore.layerHeadTail.pipe(
          Layer.provide(
            Layer.mergeAll(
              Layer.succeed(Summarizer, Summarizer.of({ summarize: (t) => Effect.succeed(`summary of ${t.length}`) })),
              SessionLive.layer({ cwd: stateDir, stateDir })
            )
          )
        )
      )
    )
  )

  it.scoped("a spill keeps small output in memory and writes nothing", () =>
    Effect.gen(function* () {
      const s = yield* store()
      const spill = yield* s.openSpill({ toolUseId: "t_spill_small", headChars: 10, tailChars: 5 })
      yield* spill.write("0123456789")
      yield* spill.write("abcde")
      const done = yield* spill.finish
      expect(done).toEqual({
        head: "0123456789",
        tail: "abcde",
        totalChars: 15,
        omittedChars: 0,
        path: Option.none(),
        bytes: 15
      })
      expect(Fs.existsSync(Path.join(resultsDir, "t_spill_small.txt"))).toBe(false)
    })
  )

  it.scoped("a spill streams everything to the file once it outgrows head + tail", () =>
    Effect.gen(function* () {
      const s = yield* store()
      const spill = yield* s.openSpill({ toolUseId: "t_spill_big", headChars: 10, tailChars: 5 })
      const chunks = ["0123456", "789abc", "defghij", "é-end"]
      for (const chunk of chunks) yield* spill.write(chunk)
      expect(yield* spill.lastLines(1)).toBe("é-end")
      const done = yield* spill.finish
      const path = Path.join(resultsDir, "t_spill_big.txt")
      expect(done).toEqual({
        head: "0123456789",
        tail: "é-end",
        totalChars: 25,
        omittedChars: 10,
        path: Option.some(path),
        bytes: 26
      })
      expect(Fs.readFileSync(path, "utf8")).toBe(chunks.join(""))
    })
  )

  it.scoped("a spill saves at most maxSavedBytes; the rest is counted and its tail kept", () =>
    Effect.gen(function* () {
      const s = yield* FsResultStore.make({ stateDir, maxSavedBytes: 1_000 })
      const spill = yield* s.openSpill({ toolUseId: "t_spill_capped", headChars: 10, tailChars: 5 })
      for (let i = 0; i < 100; i++) yield* spill.write(`${String(i).padStart(3, "0")}${"y".repeat(96)}\n`)
      const done = yield* spill.finish
      const path = Path.join(resultsDir, "t_spill_capped.txt")
      expect(Fs.statSync(path).size).toBe(1_000)
      expect(done).toMatchObject({ bytes: 10_000, savedBytes: 1_000, tail: "yyyy\n", path: Option.some(path) })
      const shown = PersistedOutput.persistedOutput({ ...done, path, preview: done.head })
      expect(shown).toContain(
        `Output too large (9.8KB). Only its first 1000 bytes (the cap on saved output per call) saved to: ${path}`
      )
    })
  )

  it.effect("a result larger than maxSavedBytes is saved up to the cap, and the preview says so", () =>
    Effect.gen(function* () {
      const s = yield* FsResultStore.make({ stateDir, maxSavedBytes: 60_000 })
      const content = "z".repeat(100_000)
      const shown = yield* s.process({ toolUseId: "t_capped", toolName: "T", content, maxResultSizeChars: 50_000 })
      const path = Path.join(resultsDir, "t_capped.txt")
      expect(Fs.statSync(path).size).toBe(60_000)
      expect(shown).toContain(
        "Output too large (97.7KB). Only its first 58.6KB (the cap on saved output per call) saved to:"
      )
    })
  )

  it("the cap's default is 64 MiB; sizes parse as bytes or with K, M, G", () => {
    expect(PersistedOutput.defaultMaxSavedBytes).toBe(64 * 1024 * 1024)
    expect(PersistedOutput.parseSize("64M")).toBe(64 * 1024 * 1024)
    expect(PersistedOutput.parseSize("1.5 KiB")).toBe(1536)
    expect(PersistedOutput.parseSize("2gb")).toBe(2 * 1024 ** 3)
    expect(PersistedOutput.parseSize("4096")).toBe(4096)
    expect(PersistedOutput.parseSize("lots")).toBeUndefined()
    expect(PersistedOutput.parseSize("0")).toBeUndefined()
  })

  it.scoped("keepAll spills keep head and tail in memory and never persist", () =>
    Effect.gen(function* () {
      const spill = yield* MemoryResultStore.memorySpill({ toolUseId: "t_mem", headChars: 3, tailChars: 2 })
      yield* spill.write("abcdefgh")
      const done = yield* spill.finish
      expect(done).toEqual({ head: "abc", tail: "gh", totalChars: 8, omittedChars: 3, path: Option.none(), bytes: 8 })
    })
  )
})
