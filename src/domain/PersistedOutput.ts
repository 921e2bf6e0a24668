/**
 * The texts of large-result handling (docs/tools.md, "Size of results"): human sizes, the 2 KB preview and the
 * `<persisted-output>` block.
 */

/** The largest threshold any tool gets, whatever its `maxResultSizeChars`. */
const maxThresholdChars = 50_000

/** Characters of the preview shown in place of a persisted result. */
const previewChars = 2_000

/** The persistence threshold of a tool: `min(maxResultSizeChars, 50_000)`; `Infinity` means never. */
export const thresholdOf = (maxResultSizeChars: number): number =>
  maxResultSizeChars === Number.POSITIVE_INFINITY
    ? Number.POSITIVE_INFINITY
    : Math.min(maxResultSizeChars, maxThresholdChars)

/**
 * A size in bytes for humans, base 1024 with one decimal: `512 bytes`, `61.0KB`, `1.2MB`, `1.0GB`.
 */
export const formatSize = (bytes: number): string => {
  if (bytes < 1024) return `${bytes} bytes`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`
  if (bytes < 1024 * 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)}MB`
  return `${(bytes / (1024 * 1024 * 1024)).toFixed(1)}GB`
}

/** The first 2,000 characters, cut at the last newline when that newline falls past the middle. */
export const preview = (text: string, chars: number = previewChars): string => {
  if (text.length <= chars) return text
  const cut = text.slice(0, chars)
  const newline = cut.lastIndexOf("\n")
  return newline > chars / 2 ? cut.slice(0, newline) : cut
}

/** The most bytes saved for one call's output by default (64 MiB); the rest is counted, not written. */
export const defaultMaxSavedBytes = 64 * 1024 * 1024

/** A size as written in settings or the environment: bytes, or a number with K, M or G (KiB, MiB, GiB; `64M`). */
export const parseSize = (text: string): number | undefined => {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmg]?)(?:i?b)?\s*$/i.exec(text)
  if (match === null) return undefined
  const unit = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[match[2].toLowerCase() as "" | "k" | "m" | "g"]
  const bytes = Math.floor(Number(match[1]) * unit)
  return bytes > 0 ? bytes : undefined
}

/**
 * Where an output was saved, as the model reads it: the whole of it, or — when the cap on saved output cut it —
 * how much of it and the cap.
 */
export const savedTo = (options: {
  readonly bytes: number
  readonly path: string
  readonly savedBytes?: number | undefined
}) =>
  options.savedBytes === undefined || options.savedBytes >= options.bytes
    ? `Full output saved to: ${options.path}`
    : `Only its first ${formatSize(options.savedBytes)} (the cap on saved output per call) saved to: ${options.path}`

/** The block that replaces a persisted result (the exact text the model receives). */
export const persistedOutput = (options: {
  readonly bytes: number
  readonly path: string
  readonly preview: string
  readonly savedBytes?: number | undefined
}) =>
  `<persisted-output>\nOutput too large (${formatSize(options.bytes)}). ${savedTo(options)}\n\nPreview (first 2KB):\n${options.preview}\n...\n</persisted-output>`

/** A tool_use id made safe as a file name (no separators, no dots): anything else becomes `_`. */
export const fileStem = (toolUseId: string): string => {
  const safe = toolUseId.replace(/[^A-Za-z0-9_-]/g, "_")
  return safe.length === 0 ? "_" : safe
}
