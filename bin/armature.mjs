#!/usr/bin/env node
// Entry point. Runs the bundle built by `npm ci` (scripts/build.mjs) when it is at least as new as every source
// file; otherwise loads the TypeScript sources through tsx, so an edited checkout never runs stale code.
import * as Fs from "node:fs"
import * as Path from "node:path"

const root = Path.resolve(import.meta.dirname, "..")
const bundle = Path.join(root, "dist", "armature.mjs")

const newestSource = (dir) => {
  let newest = 0
  for (const entry of Fs.readdirSync(dir, { withFileTypes: true })) {
    const path = Path.join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : Fs.statSync(path).mtimeMs)
  }
  return newest
}

const bundleIsFresh = () => {
  try {
    return Fs.statSync(bundle).mtimeMs >= newestSource(Path.join(root, "src"))
  } catch {
    return false
  }
}

if (process.env.ARMATURE_FROM_SOURCE !== "1" && bundleIsFresh()) {
  await import(bundle)
} else {
  const { register } = await import("tsx/esm/api")
  register()
  await import("../src/programs/main.ts")
}
