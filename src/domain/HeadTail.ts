/**
 * A bounded text accumulator: keeps the first `headChars` and the last `tailChars` characters of a stream of
 * chunks and counts the rest, so output of any size is summarized in constant memory.
 */

/** A snapshot of what an accumulator holds. */
export interface Snapshot {
  /** The first characters, up to `headChars`. */
  readonly head: string
  /** The last characters after the head, up to `tailChars`; empty while everything fits in the head. */
  readonly tail: string
  /** Every character seen. */
  readonly totalChars: number
  /** Characters seen but in neither `head` nor `tail`. */
  readonly omittedChars: number
}

/** The mutable accumulator. Not shared between fibers: each owner appends from one place. */
export interface HeadTail {
  readonly append: (chunk: string) => void
  readonly snapshot: () => Snapshot
  /** The last `n` lines seen (from the tail, or the head while nothing was cut). */
  readonly lastLines: (n: number) => string
}

/** Makes an accumulator. */
export const make = (headChars: number, tailChars: number): HeadTail => {
  let head = ""
  let tail = ""
  let total = 0
  const append = (chunk: string): void => {
    if (chunk.length === 0) return
    total += chunk.length
    let rest = chunk
    if (head.length < headChars) {
      const room = headChars - head.length
      head += rest.slice(0, room)
      rest = rest.slice(room)
    }
    if (rest.length === 0 || tailChars <= 0) return
    tail = rest.length >= tailChars ? rest.slice(rest.length - tailChars) : (tail + rest).slice(-tailChars)
  }
  const snapshot = (): Snapshot => ({
    head,
    tail,
    totalChars: total,
    omittedChars: total - head.length - tail.length
  })
  const lastLines = (n: number): string => {
    const text = total - head.length - tail.length > 0 ? tail : head + tail
    const lines = text.replace(/\n$/, "").split("\n")
    return lines.slice(-n).join("\n")
  }
  return { append, snapshot, lastLines }
}

/** A byte accumulator's rendering: the decoded head and tail and the bytes between them. */
export interface ByteSnapshot {
  readonly head: string
  readonly tail: string
  readonly omittedBytes: number
}

/** A bounded accumulator over raw UTF-8 bytes that decodes nothing until asked: no garbage per chunk. */
export interface ByteHeadTail {
  readonly append: (chunk: Uint8Array) => void
  readonly snapshot: () => ByteSnapshot
}

/** Makes a byte accumulator keeping the first `headBytes` and the last `tailBytes` bytes. */
export const makeBytes = (headBytes: number, tailBytes: number): ByteHeadTail => {
  const head = new Uint8Array(headBytes)
  let headLength = 0
  let ring: Array<Uint8Array> = []
  let ringBytes = 0
  let total = 0
  const append = (chunk: Uint8Array): void => {
    total += chunk.byteLength
    let rest = chunk
    if (headLength < headBytes) {
      const take = Math.min(headBytes - headLength, rest.byteLength)
      head.set(rest.subarray(0, take), headLength)
      headLength += take
      rest = rest.subarray(take)
    }
    if (rest.byteLength === 0) return
    ring.push(rest)
    ringBytes += rest.byteLength
    while (ring.length > 1 && ringBytes - ring[0].byteLength >= tailBytes) {
      ringBytes -= ring[0].byteLength
      ring = ring.slice(1)
    }
  }
  const snapshot = (): ByteSnapshot => {
    const all = Buffer.concat(ring)
    const tail = all.subarray(Math.max(0, all.byteLength - tailBytes))
    const cut = tail.byteLength < all.byteLength || total - headLength - all.byteLength > 0
    // A cut tail may start inside a character: skip its continuation bytes.
    let start = 0
    while (cut && start < tail.byteLength && start < 3 && (tail[start] & 0xc0) === 0x80) start++
    const headText = Buffer.from(head.subarray(0, headLength)).toString("utf8")
    return {
      head: cut ? headText.replace(/\uFFFD$/, "") : headText,
      tail: tail.subarray(start).toString("utf8"),
      omittedBytes: total - headLength - tail.byteLength
    }
  }
  return { append, snapshot }
}
