#!/usr/bin/env node
// Entry point. Runs the CLI bundle (dist/cli/main.js, built by `npm ci`/`npm pack` through scripts/build.mjs).
// In a checkout whose TypeScript sources are newer than the bundle (or with ARMATURE_FROM_SOURCE=1), it runs
// the sources through tsx instead, so an edited checkout never runs stale code. An installed package has no
// sources and always runs the bundle.
//
// `armature --version` (`-v`) and `armature --help` (`-h`, or no arguments) print text the build stored in
// dist/cli/answers.json by running the bundle itself, so they answer without loading the bundle.
import * as Fs from "node:fs"
import * as Path from "node:path"

const root = Path.resolve(import.meta.dirname, "..")
const bundle = Path.join(root, "dist", "cli", "main.js")
const answers = Path.join(root, "dist", "cli", "answers.json")
const sources = Path.join(root, "src")

// Run on every start in a checkout: plain string paths (Path.join's normalising was most of its time).
const newestSource = (dir) => {
  let newest = 0
  for (const entry of Fs.readdirSync(dir, { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`
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

/** The stored answer for these arguments, if there is one (plain or coloured, as the CLI would choose). */
const quickAnswer = (args) => {
  const name =
    args.length === 0 || (args.length === 1 && (args[0] === "--help" || args[0] === "-h"))
      ? "help"
      : args.length === 1 && (args[0] === "--version" || args[0] === "-v")
        ? "version"
        : undefined
  if (name === undefined) return undefined
  let stored
  try {
    stored = JSON.parse(Fs.readFileSync(answers, "utf8"))[name]
  } catch {
    return undefined
  }
  const colour = process.stdout.isTTY === true && (process.env.NO_COLOR === undefined || process.env.NO_COLOR === "")
  return colour ? stored?.colour : stored?.plain
}

if (useSources()) {
  const { register } = await import("tsx/esm/api")
  register()
  await import("../src/programs/main.ts")
} else {
  const answer = quickAnswer(process.argv.slice(2))
  if (answer !== undefined) process.stdout.write(answer)
  else await import(bundle)
}
