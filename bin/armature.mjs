#!/usr/bin/env node
// Entry point. Runs the CLI bundle (dist/cli/main.js, built by `npm ci`/`npm pack` through scripts/build.mjs).
// In a checkout whose TypeScript sources are newer than the bundle (or with ARMATURE_FROM_SOURCE=1), it runs
// the sources through tsx instead, so an edited checkout never runs stale code. An installed package has no
// sources and always runs the bundle.
import * as Fs from "node:fs"
import * as Path from "node:path"

const root = Path.resolve(import.meta.dirname, "..")
const bundle = Path.join(root, "dist", "cli", "main.js")
const sources = Path.join(root, "src")

const newestSource = (dir) => {
  let newest = 0
  for (const entry of Fs.readdirSync(dir, { withFileTypes: true })) {
    const path = Path.join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : Fs.statSync(path).mtimeMs)
  }
  return newest
}

const useSources = () => {
  if (!Fs.existsSync(sources)) return false
  if (process.env.ARMATURE_FROM_SOURCE === "1") return true
  try {
    return Fs.statSync(bundle).mtimeMs < newestSource(sources)
  } catch {
    return true
  }
}

if (useSources()) {
  const { register } = await import("tsx/esm/api")
  register()
  await import("../src/programs/main.ts")
} else {
  await import(bundle)
}
