/**
 * Summarizes the middle of a long result for the head/tail strategy of the large-result store, which keeps a
 * result's head and tail around a summary of what was cut (see FsResultStore).
 */
import { Context, Effect, Layer } from "effect"

/** The port: a short text standing in for `text`. A small-model summarizer can implement it too. */
export class Summarizer extends Context.Tag("armature/Summarizer")<
  Summarizer,
  {
    readonly summarize: (text: string) => Effect.Effect<string>
  }
>() {}

const stopWords = new Set([
  "the",
  "and",
  "for",
  "with",
  "that",
  "this",
  "from",
  "are",
  "was",
  "not",
  "but",
  "have",
  "has",
  "you",
  "all",
  "can",
  "will",
  "its",
  "into",
  "than",
  "then",
  "there"
])

/**
 * A statistics summary: line and character counts and the ten most frequent terms (words of three or more
 * letters, case-folded, common English words left out), e.g.
 * `1,204 lines, 48,120 characters. Most frequent terms: error (310), timeout (122), retry (40)`.
 */
export const statistics = (text: string, topTerms = 10): string => {
  const lines = text.length === 0 ? 0 : text.split("\n").length - (text.endsWith("\n") ? 1 : 0)
  const counts = new Map<string, number>()
  for (const match of text.matchAll(/[A-Za-z_][A-Za-z0-9_]{2,}/g)) {
    const term = match[0].toLowerCase()
    if (stopWords.has(term)) continue
    counts.set(term, (counts.get(term) ?? 0) + 1)
  }
  const terms = [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, topTerms)
    .map(([term, n]) => `${term} (${n})`)
  const counted = `${lines.toLocaleString("en-US")} lines, ${text.length.toLocaleString("en-US")} characters.`
  return terms.length === 0 ? counted : `${counted} Most frequent terms: ${terms.join(", ")}`
}

/** The default summarizer: statistics only, no model call. */
export const layerStatistics = Layer.succeed(
  Summarizer,
  Summarizer.of({ summarize: (text) => Effect.sync(() => statistics(text)) })
)
