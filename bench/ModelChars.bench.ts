/**
 * Characters sent to the model: runs real tool calls through the executor (built-in tools, the file-system result
 * store, permissive policy) in a generated project and prints one JSON line per call with the length of the
 * tool_result content the model receives:
 * - Bash printing 200,000 characters;
 * - Grep (content and files_with_matches) over a 50-file tree;
 * - Glob matching 100 files;
 * - Read of a 500-line file;
 * - Write (new file, overwrite) and Edit success texts.
 * Run: node --import tsx bench/ModelChars.bench.ts
 */
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { contentText } from "../src/domain/Blocks.js"
import type { ToolCall } from "../src/domain/ExecutorEvent.js"
import * as StreamingExecutor from "../src/layers/executor/StreamingExecutor.js"
import * as ProcessGroup from "../src/layers/process/ProcessGroup.js"
import * as ToolRegistryLive from "../src/layers/registry/ToolRegistryLive.js"
import * as FsResultStore from "../src/layers/results/FsResultStore.js"
import * as SessionLive from "../src/layers/session/SessionLive.js"
import * as TreeSitterShellAnalyzer from "../src/layers/shell/TreeSitterShellAnalyzer.js"
import * as BuiltinTools from "../src/layers/tools/index.js"
import * as Approver from "../src/services/Approver.js"
import * as Hooks from "../src/services/Hooks.js"
import * as PermissionPolicy from "../src/services/PermissionPolicy.js"
import { ToolExecutor } from "../src/services/ToolExecutor.js"

/** Writes the project: 50 source files in 5 directories, 100 `.md` notes, a 500-line file. */
const makeProject = async (root: string) => {
  for (let d = 0; d < 5; d++) {
    const dir = Path.join(root, "src", `module${d}`)
    await Fs.mkdir(dir, { recursive: true })
    for (let f = 0; f < 10; f++) {
      const lines = Array.from({ length: 60 }, (_, i) =>
        i % 20 === 3
          ? `  // TODO: handle case ${i} of file ${f}`
          : `export const value${i} = compute(${i}, "${d}-${f}")`
      )
      await Fs.writeFile(Path.join(dir, `file${f}.ts`), `${lines.join("\n")}\n`)
    }
  }
  for (let d = 0; d < 4; d++) {
    const dir = Path.join(root, "notes", `part${d}`)
    await Fs.mkdir(dir, { recursive: true })
    for (let f = 0; f < 25; f++) await Fs.writeFile(Path.join(dir, `note${f}.md`), `# Note ${d}.${f}\n`)
  }
  const long = Array.from({ length: 500 }, (_, i) => `line ${i + 1}: the quick brown fox jumps over the lazy dog`)
  await Fs.writeFile(Path.join(root, "long.txt"), `${long.join("\n")}\n`)
}

const call = (id: string, name: string, input: Record<string, unknown>): ToolCall => ({
  type: "tool_use",
  id,
  name,
  input
})

const main = async () => {
  const base = await Fs.mkdtemp(Path.join(Os.tmpdir(), "armature-chars-"))
  const root = Path.join(base, "project")
  await makeProject(root)
  const layer = StreamingExecutor.layer({ maxConcurrency: 1 }).pipe(
    Layer.provideMerge(BuiltinTools.layer),
    Layer.provideMerge(ToolRegistryLive.layer),
    Layer.provideMerge(
      Layer.mergeAll(PermissionPolicy.allowAll, Approver.headless, Hooks.none, FsResultStore.layerDir(base))
    ),
    Layer.provideMerge(
      Layer.mergeAll(SessionLive.layer({ cwd: root }), TreeSitterShellAnalyzer.layer, ProcessGroup.layer)
    ),
    Layer.provideMerge(NodeContext.layer)
  )
  const long = Path.join(root, "long.txt")
  const calls: ReadonlyArray<readonly [string, ToolCall]> = [
    ["Bash printing 200,000 characters", call("bash", "Bash", { command: "head -c 200000 /dev/zero | tr '\\0' x" })],
    ["Grep content over 50 files", call("grep", "Grep", { pattern: "TODO", output_mode: "content" })],
    ["Grep files_with_matches over 50 files", call("grepf", "Grep", { pattern: "TODO" })],
    ["Glob of 100 files", call("glob", "Glob", { pattern: "notes/**/*.md" })],
    ["Read of a 500-line file", call("read", "Read", { file_path: long })],
    ["Write of a new file", call("write", "Write", { file_path: Path.join(root, "new.txt"), content: "hello\n" })],
    [
      "Edit of one line",
      call("edit", "Edit", { file_path: long, old_string: "line 250: the quick", new_string: "line 250: a quick" })
    ]
  ]
  const results = await Effect.runPromise(
    Effect.flatMap(ToolExecutor, (executor) => executor.runBatchCollect(calls.map(([, c]) => c))).pipe(
      Effect.provide(layer)
    )
  )
  results.forEach((result, i) => {
    const text = contentText(result.content)
    console.log(
      JSON.stringify({
        name: `model-chars: ${calls[i][0]}`,
        chars: text.length,
        is_error: result.is_error === true,
        head: text.slice(0, 80)
      })
    )
  })
  await Fs.rm(base, { recursive: true, force: true })
}

main()
