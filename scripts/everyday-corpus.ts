/**
 * Runs the everyday-command corpus (scripts/everyday-corpus.json) and prints one summary line per settings;
 * `--verbose` prints every decision that does not fit its expectation, `--all` every decision.
 *
 *   node --import tsx scripts/everyday-corpus.ts [--verbose] [--all] [S1 …]
 */
import { Effect } from "effect"
import * as Everyday from "../test/fixtures/EverydayCorpus.js"

const argv = process.argv.slice(2)
const only = argv.filter((a) => !a.startsWith("--"))
const started = Date.now()
const results = await Effect.runPromise(Everyday.run(Everyday.loadCorpus(), only.length === 0 ? undefined : only))
for (const r of results) {
  if (argv.includes("--all") || (argv.includes("--verbose") && !Everyday.fits(r.expected, r.behavior))) {
    console.log(`${r.settings} expected ${r.expected} got ${r.behavior}: ${r.command}  — ${r.reason}`)
  }
}
console.log(JSON.stringify({ ...Everyday.summarize(results), seconds: (Date.now() - started) / 1000 }))
