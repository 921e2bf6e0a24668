/**
 * Runs every benchmark in bench/ one after another; each prints JSON lines.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"

const dir = import.meta.dirname
const only = process.argv[2]
for (const file of Fs.readdirSync(dir)
  .filter((f) => f.endsWith(".bench.ts"))
  .sort()) {
  if (only !== undefined && !file.includes(only)) continue
  const result = spawnSync(process.execPath, ["--import", "tsx", Path.join(dir, file)], { stdio: "inherit" })
  if (result.status !== 0) process.exitCode = result.status ?? 1
}
