/**
 * Search speed against the standard tools, measured in the same run, one JSON object per line:
 * {name, tree, files, ms, baseline, baseline_ms, ratio} where ratio is ours / theirs (median of interleaved runs).
 * Trees: a generated project of 3,200 files (with .gitignore'd and hidden parts), and node_modules.
 * - Glob "**\/*.js" (ours, with mtimes and sorting) vs `find -name '*.js' -printf '%T@ %p'` and `rg --files -g`;
 * - Grep files_with_matches and content-by-type: the built-in engine and the rg engine vs bare `rg` with the same
 *   filters.
 * Run: node --import tsx bench/GlobGrep.bench.ts [tree]
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { Effect } from "effect"
import * as GrepEngine from "../src/layers/files/GrepEngine.js"
import * as Glob from "../src/layers/tools/Glob.js"
import * as Grep from "../src/layers/tools/Grep.js"

const runs = Number(process.env.BENCH_RUNS ?? 5)

const median = (xs: ReadonlyArray<number>): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

const time = async (f: () => Promise<unknown>): Promise<number> => {
  const start = performance.now()
  await f()
  return performance.now() - start
}

const command = (cmd: string, args: ReadonlyArray<string>, cwd: string) =>
  new Promise<void>((resolve) => {
    const child = ChildProcess.spawn(cmd, args, { cwd, stdio: ["ignore", "pipe", "ignore"] })
    child.stdout.on("data", () => {})
    child.on("close", () => resolve())
    child.on("error", () => resolve())
  })

/** Times ours and theirs alternately, `runs` times each after one warm-up of each; returns the medians. */
const compare = async (ours: () => Promise<unknown>, theirs: () => Promise<unknown>) => {
  await ours()
  await theirs()
  const a: Array<number> = []
  const b: Array<number> = []
  for (let i = 0; i < runs; i++) {
    a.push(await time(ours))
    b.push(await time(theirs))
  }
  return { ours: median(a), theirs: median(b) }
}

const report = (name: string, tree: string, baseline: string, r: { ours: number; theirs: number }) =>
  console.log(
    JSON.stringify({
      name,
      tree,
      ms: Math.round(r.ours * 10) / 10,
      baseline,
      baseline_ms: Math.round(r.theirs * 10) / 10,
      ratio: Math.round((r.ours / r.theirs) * 100) / 100
    })
  )

/** A project of 3,200 files: 40 packages × 80 files (js, ts, md, json), plus ignored and hidden directories. */
const generate = (root: string) => {
  Fs.writeFileSync(Path.join(root, ".gitignore"), "build/\n*.log\n")
  for (let p = 0; p < 40; p++) {
    const dir = Path.join(root, "packages", `pkg${p}`, "src")
    Fs.mkdirSync(dir, { recursive: true })
    for (let f = 0; f < 80; f++) {
      const ext = ["js", "ts", "md", "json"][f % 4]
      const lines = Array.from({ length: 120 }, (_, i) =>
        i % 37 === 5
          ? `function readFileSync${i}(path) { return createHash("sha1") }`
          : `const v${i} = "value ${p}/${f}/${i}" + compute(${i})`
      )
      Fs.writeFileSync(Path.join(dir, `file${f}.${ext}`), `${lines.join("\n")}\n`)
    }
  }
  for (const skipped of ["build", ".cache"]) {
    const dir = Path.join(root, skipped)
    Fs.mkdirSync(dir, { recursive: true })
    for (let f = 0; f < 200; f++) Fs.writeFileSync(Path.join(dir, `out${f}.js`), "function readFileSync() {}\n")
  }
}

const benchTree = async (tree: string, root: string) => {
  report(
    "Glob **/*.js",
    tree,
    "find -name '*.js' -printf '%T@ %p'",
    await compare(
      () => Effect.runPromise(Glob.find("**/*.js", root)),
      () => command("find", [root, "-name", "*.js", "-type", "f", "-printf", "%T@ %p\\n"], root)
    )
  )
  const rg = GrepEngine.hasRg()
  if (rg) {
    report(
      "Glob **/*.js",
      tree,
      "rg --files -g '*.js'",
      await compare(
        () => Effect.runPromise(Glob.find("**/*.js", root)),
        () => command("rg", ["--files", "-g", "*.js", root], root)
      )
    )
  }
  const files = { pattern: "createHash", output_mode: "files_with_matches" as const, head_limit: 0 }
  const content = { pattern: "function\\s+\\w+Sync\\(", output_mode: "content" as const, type: "js", head_limit: 0 }
  const cases = [
    ["Grep files_with_matches createHash", files, ["-l", "createHash"]],
    ["Grep content type js", content, ["-n", "--type", "js", "function\\s+\\w+Sync\\("]]
  ] as const
  for (const [name, input, args] of cases) {
    const bare = () => command("rg", [...args, root], root)
    if (!rg) {
      console.log(JSON.stringify({ name: `${name} (rg missing: no baseline)`, tree }))
      continue
    }
    report(
      `${name} (built-in engine)`,
      tree,
      "rg",
      await compare(() => Effect.runPromise(Grep.search("builtin", input, root)), bare)
    )
    report(
      `${name} (rg engine)`,
      tree,
      "rg",
      await compare(() => Effect.runPromise(Grep.search("rg", input, root)), bare)
    )
  }
}

const main = async () => {
  const given = process.argv[2]
  const generated = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-globgrep-"))
  try {
    generate(generated)
    await benchTree("generated 3,200 files", generated)
    // The real path: `find` does not descend into a starting point that is a symbolic link (a worktree's
    // node_modules often is one), and would compare against an empty listing.
    await benchTree("node_modules", Fs.realpathSync(Path.resolve(given ?? "node_modules")))
  } finally {
    Fs.rmSync(generated, { recursive: true, force: true })
  }
}

main()
