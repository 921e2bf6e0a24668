/**
 * Times Glob and the built-in Grep engine on node_modules against `find` and `rg` (when present), printing one JSON
 * object per line: {name, ms, ratio} where ratio is ours / theirs. Run: node --import tsx bench/GlobGrep.bench.ts
 */
import * as ChildProcess from "node:child_process"
import * as Path from "node:path"
import { Effect } from "effect"
import * as GrepEngine from "../src/layers/files/GrepEngine.js"
import * as Glob from "../src/layers/tools/Glob.js"
import * as Grep from "../src/layers/tools/Grep.js"

const root = Path.resolve(process.argv[2] ?? "node_modules")

const time = async (f: () => Promise<unknown>): Promise<number> => {
  const start = performance.now()
  await f()
  return Math.round((performance.now() - start) * 10) / 10
}

const command = (cmd: string, args: ReadonlyArray<string>) =>
  new Promise<void>((resolve) => {
    const child = ChildProcess.spawn(cmd, args, { stdio: ["ignore", "ignore", "ignore"] })
    child.on("close", () => resolve())
    child.on("error", () => resolve())
  })

const report = (name: string, ms: number, baseline: number | undefined) =>
  console.log(
    JSON.stringify({ name, ms, ratio: baseline === undefined ? null : Math.round((ms / baseline) * 100) / 100 })
  )

const main = async () => {
  const findMs = await time(() => command("find", [root, "-name", "*.js", "-type", "f"]))
  report("find -name '*.js'", findMs, undefined)
  const globMs = await time(() => Effect.runPromise(Glob.find("**/*.js", root)))
  report("Glob **/*.js", globMs, findMs)

  const input = { pattern: "createHash", output_mode: "files_with_matches" as const, head_limit: 0 }
  const rgMs = GrepEngine.hasRg() ? await time(() => Effect.runPromise(Grep.search("rg", input, root))) : undefined
  if (rgMs !== undefined) report("Grep (rg) createHash", rgMs, undefined)
  const builtinMs = await time(() => Effect.runPromise(Grep.search("builtin", input, root)))
  report("Grep (built-in) createHash", builtinMs, rgMs)

  const content = { pattern: "function\\s+\\w+Sync\\(", output_mode: "content" as const, type: "js", head_limit: 0 }
  const rgContentMs = GrepEngine.hasRg()
    ? await time(() => Effect.runPromise(Grep.search("rg", content, root)))
    : undefined
  if (rgContentMs !== undefined) report("Grep (rg) content type js", rgContentMs, undefined)
  const builtinContentMs = await time(() => Effect.runPromise(Grep.search("builtin", content, root)))
  report("Grep (built-in) content type js", builtinContentMs, rgContentMs)
}

main()
