/**
 * The texts of large-result handling (docs/tools.md, "Size of results"): human sizes, the 2 KB preview and the
 * `<persisted-output>` block.
 */

/** The largest threshold any tool gets, whatever its `maxResultSizeChars`. */
export const maxThresholdChars = 50_000

/** Characters of the preview shown in place of a persisted result. */
export const previewChars = 2_000

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

/** The block that replaces a persisted result (the exact text the model receives). */
export const persistedOutput = (options: { readonly bytes: number; readonly path: string; readonly preview: string }) =>
  `<persisted-output>\nOutput too large (${formatSize(options.bytes)}). Full output saved to: ${options.path}\n\nPreview (first 2KB):\n${options.preview}\n...\n</persisted-output>`

/** A tool_use id made safe as a file name (no separators, no dots): anything else becomes `_`. */
export const fileStem = (toolUseId: string): string => {
  const safe = toolUseId.replace(/[^A-Za-z0-9_-]/g, "_")
  return safe.length === 0 ? "_" : safe
}
