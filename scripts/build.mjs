#!/usr/bin/env node
// Bundles the CLI into dist/armature.mjs (dependencies stay external) so `armature` starts without a TypeScript
// loader. Runs on `npm ci` (prepare) and before `npm test`; bin/armature.mjs falls back to tsx when the bundle is
// missing or older than the sources.
import * as Path from "node:path"
import { build } from "esbuild"

const root = Path.resolve(import.meta.dirname, "..")
await build({
  entryPoints: [Path.join(root, "src/programs/main.ts")],
  outfile: Path.join(root, "dist/armature.mjs"),
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  sourcemap: "linked",
  logLevel: "warning"
})
