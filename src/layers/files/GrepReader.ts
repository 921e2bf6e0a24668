/**
 * The reading half of the built-in Grep engine: open each file, skip it when it is binary (a NUL byte, as ripgrep
 * decides) or lacks one of the pattern's required literals, and decode the rest as UTF-8. On a large tree this is
 * most of a search's time (system calls and decoding), so it is spread over worker threads, one per core, while
 * the calling thread only matches the texts that come back; a small search reads on the calling thread.
 *
 * The reader is one self-contained function: the workers run its source text, so the same code reads on both
 * sides. Workers are started per search, in a scope that terminates them.
 */
import * as NodeFs from "node:fs"
import * as Os from "node:os"
import { Worker } from "node:worker_threads"
import { Effect, Schema } from "effect"

/**
 * What the reader found in one file, by its index in the list it was given: the file's whole text, or (given a
 * line pattern) its matching lines as line number and text, in order.
 */
export type Candidate = readonly [index: number, found: string | ReadonlyArray<readonly [number, string]>]

/**
 * A pattern the reader can match line by line itself: a match never crosses a line end (not multi-line) and no
 * context lines are asked for. Every match contains `literals`, so only lines holding the first one are decoded.
 */
export interface LinePattern {
  readonly source: string
  readonly flags: string
  /** Stop at a file's first matching line (files_with_matches). */
  readonly firstOnly: boolean
}

/** What one reader keeps between files: a buffer reused for every file, grown to the largest. */
export interface ReaderState {
  buffer: Buffer
}

/** A fresh reader state. */
export const makeState = (): ReaderState => ({ buffer: Buffer.allocUnsafe(1 << 20) })

/**
 * Reads `paths` and, for the files that are readable, not binary and contain every literal (in order of `paths`),
 * returns their text, or with a line pattern and at least one literal, their matching lines. Text is what a
 * WHATWG UTF-8 decoder gives (a leading byte-order mark dropped, invalid bytes replaced); a line is decoded on its
 * own, which gives the same text because a line feed always ends an invalid sequence. Self-contained: it uses only
 * its arguments and globals, because workers run its source.
 */
export const readCandidates = (
  fs: Pick<typeof NodeFs, "openSync" | "readSync" | "fstatSync" | "closeSync">,
  state: ReaderState,
  paths: ReadonlyArray<string>,
  literals: ReadonlyArray<Buffer>,
  linePattern?: LinePattern
): Array<Candidate> => {
  const head = 64 * 1024
  const out: Array<Candidate> = []
  if (state.buffer.length < head) state.buffer = Buffer.allocUnsafe(head)
  const lineRegex =
    linePattern === undefined || literals.length === 0 ? undefined : new RegExp(linePattern.source, linePattern.flags)
  for (let i = 0; i < paths.length; i++) {
    let fd: number
    try {
      fd = fs.openSync(paths[i], "r")
    } catch {
      continue
    }
    let filled = 0
    let text = true
    try {
      // The first 64 KiB decide most files; only a file that fills them is measured and read to its end.
      filled = fs.readSync(fd, state.buffer, 0, head, 0)
      if (state.buffer.subarray(0, filled).includes(0)) text = false
      else if (filled === head) {
        const size = fs.fstatSync(fd).size
        for (;;) {
          // room for the rest (or, for a file that grew, another 64 KiB), keeping what was read
          if (state.buffer.length <= Math.max(size, filled)) {
            const bigger = Buffer.allocUnsafe(Math.max(size + 1, filled + head, state.buffer.length * 2))
            state.buffer.copy(bigger, 0, 0, filled)
            state.buffer = bigger
          }
          const n = fs.readSync(fd, state.buffer, filled, state.buffer.length - filled, filled)
          if (n === 0) break
          if (state.buffer.subarray(filled, filled + n).includes(0)) {
            text = false
            break
          }
          filled += n
        }
      }
    } catch {
      text = false
    } finally {
      fs.closeSync(fd)
    }
    if (!text) continue
    const bytes = state.buffer.subarray(0, filled)
    if (!literals.every((literal) => bytes.includes(literal))) continue
    const bom = filled >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0
    if (lineRegex === undefined) {
      out.push([i, bytes.toString("utf8", bom, filled)])
      continue
    }
    // Each line holding the first literal, with its number (line feeds counted up to it), if it holds the
    // others and its text matches.
    const lines: Array<readonly [number, string]> = []
    let lineNo = 1
    let counted = 0
    let at = bytes.indexOf(literals[0])
    while (at !== -1) {
      const start = at === 0 ? 0 : bytes.lastIndexOf(10, at - 1) + 1
      for (let nl = bytes.indexOf(10, counted); nl !== -1 && nl < start; nl = bytes.indexOf(10, nl + 1)) lineNo++
      counted = start
      const newline = bytes.indexOf(10, at)
      const end = newline === -1 ? filled : newline
      const line = bytes.subarray(start, end)
      if (literals.every((literal) => line.includes(literal))) {
        const lineText = bytes.toString("utf8", start === 0 ? bom : start, end)
        if (lineRegex.test(lineText)) {
          lines.push([lineNo, lineText])
          if (linePattern?.firstOnly === true) break
        }
      }
      at = newline === -1 ? -1 : bytes.indexOf(literals[0], newline + 1)
    }
    if (lines.length > 0) out.push([i, lines])
  }
  return out
}

/** A batch for a worker, and its answer. */
interface Job {
  readonly id: number
  readonly paths: ReadonlyArray<string>
  readonly literals: ReadonlyArray<Buffer>
  readonly linePattern: LinePattern | undefined
}
interface Answer {
  readonly id: number
  readonly found: ReadonlyArray<Candidate>
}

/**
 * The worker: answers each job with `readCandidates` over its own state. (`__name` is the helper a TypeScript
 * runner that keeps function names may have put into the function's text; here it does nothing.)
 */
const workerSource = `"use strict";
const __name = (f) => f;
const { parentPort } = require("node:worker_threads");
const fs = require("node:fs");
const readCandidates = (${readCandidates.toString()});
const state = { buffer: Buffer.allocUnsafe(1 << 20) };
parentPort.on("message", (job) => {
  const literals = job.literals.map((l) => Buffer.from(l.buffer, l.byteOffset, l.byteLength));
  parentPort.postMessage({ id: job.id, found: readCandidates(fs, state, job.paths, literals, job.linePattern) });
});
`

/**
 * Below this many files a search reads on the calling thread: starting the workers (tens of milliseconds on an idle
 * machine, much more on a busy one) would cost more than splitting the reading saves.
 */
export const parallelFrom = 2000

/**
 * Whether reading on worker threads can pay off now: the machine has cores for the walk on the calling thread and
 * at least two readers, and its load (the 1-minute average) leaves two of them over. On a busy machine the workers
 * only compete for the same cores and start much more slowly; there a search of a few thousand files read on worker
 * threads took three to four times as long as on the calling thread. On a quiet 2-core machine they did not pay off
 * either: over node_modules (14,970 files) the calling thread took 236 ms, one, two and three workers 270-330,
 * 240-290 and 270-310 ms (files with matches; content by type 104 ms against 173 ms with two workers).
 * (Where no load average exists, on Windows, it reads 0.)
 */
export const spareCore = (): boolean => {
  const cores = Os.availableParallelism()
  return cores >= 3 && cores - Os.loadavg()[0] >= 2
}

/** Files per job: small enough to balance the workers, large enough that messages are few. */
const batch = 200

/** How many workers a search uses: one per core, at most 8. */
export const workerCount = (): number => Math.max(1, Math.min(8, Os.availableParallelism()))

const startWorker = Effect.acquireRelease(
  Effect.sync(() => new Worker(workerSource, { eval: true })),
  (worker) => Effect.promise(() => worker.terminate())
)

/** A worker thread failed (it could not start, or it crashed). */
export class ReaderError extends Schema.TaggedError<ReaderError>()("ReaderError", { message: Schema.String }) {}

/**
 * The paths of a search as its walk finds them: `paths` only grows, `done` tells that no more will come, and
 * `subscribe` registers the function to call after either changed.
 */
export interface Feed {
  readonly paths: ReadonlyArray<string>
  readonly done: () => boolean
  readonly subscribe: (wake: () => void) => void
}

/** A feed of paths that are all known. */
export const feedOf = (paths: ReadonlyArray<string>): Feed => ({ paths, done: () => true, subscribe: () => {} })

/**
 * Reads the files of `feed` on `workers` worker threads (started for this call and terminated when it ends or is
 * interrupted) and hands each batch's candidates to `onFound` on the calling thread, as they arrive. While the feed
 * is still growing, a worker gets only full batches and waits for the walk between them.
 */
export const readFed = (
  feed: Feed,
  literals: ReadonlyArray<Buffer>,
  linePattern: LinePattern | undefined,
  onFound: (offset: number, found: ReadonlyArray<Candidate>) => void,
  workers: number = workerCount()
): Effect.Effect<void, ReaderError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const pool = yield* Effect.all(Array.from({ length: workers }, () => startWorker))
      yield* Effect.async<void, ReaderError>((resume) => {
        let next = 0
        let pending = 0
        let done = false
        const idle: Array<Worker> = []
        const finish = (result: Effect.Effect<void, ReaderError>) => {
          if (done) return
          done = true
          resume(result)
        }
        const give = (worker: Worker) => {
          const available = feed.paths.length - next
          const ended = feed.done()
          if (available >= batch || (ended && available > 0)) {
            const size = Math.min(batch, available)
            const job: Job = { id: next, paths: feed.paths.slice(next, next + size), literals, linePattern }
            next += size
            pending++
            worker.postMessage(job)
          } else if (!ended) idle.push(worker)
          else if (pending === 0) finish(Effect.void)
        }
        for (const worker of pool) {
          worker.on("message", (answer: Answer) => {
            pending--
            onFound(answer.id, answer.found)
            give(worker)
          })
          worker.on("error", (error) => finish(Effect.fail(new ReaderError({ message: error.message }))))
          worker.on("exit", (code) =>
            finish(Effect.fail(new ReaderError({ message: `a reader thread exited (${code})` })))
          )
        }
        feed.subscribe(() => {
          for (const worker of idle.splice(0)) give(worker)
        })
        for (const worker of pool) give(worker)
      })
    })
  )

/** Reads all of `paths` on worker threads: `readFed` over a feed that is complete from the start. */
export const readParallel = (
  paths: ReadonlyArray<string>,
  literals: ReadonlyArray<Buffer>,
  linePattern: LinePattern | undefined,
  onFound: (offset: number, found: ReadonlyArray<Candidate>) => void,
  workers: number = workerCount()
): Effect.Effect<void, ReaderError> => readFed(feedOf(paths), literals, linePattern, onFound, workers)

/** Reads the files on the calling thread (a small search), in slices that let other fibers run. */
export const readHere = (
  paths: ReadonlyArray<string>,
  literals: ReadonlyArray<Buffer>,
  linePattern: LinePattern | undefined,
  onFound: (offset: number, found: ReadonlyArray<Candidate>) => void
): Effect.Effect<void> =>
  Effect.gen(function* () {
    const state = makeState()
    for (let offset = 0; offset < paths.length; offset += batch) {
      onFound(offset, readCandidates(NodeFs, state, paths.slice(offset, offset + batch), literals, linePattern))
      yield* Effect.yieldNow()
    }
  })
