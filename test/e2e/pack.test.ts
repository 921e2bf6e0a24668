/**
 * The package as a user gets it: `npm pack`, the tarball installed into an empty project (the Effect peers come
 * from the registry), then a plain .mjs that runs a Glob call through `Armature.layerNode`, a strict TypeScript
 * consumer type-checked against the shipped declarations, and a scripted agent turn from `effect-armature/testing`.
 * Everything runs as asynchronous child processes; the install needs the npm registry.
 */
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

const run = promisify(execFile)
const root = Path.resolve(import.meta.dirname, "../..")
const fixtures = Path.join(root, "test/fixtures/pack")
const npm = process.platform === "win32" ? "npm.cmd" : "npm"
const minutes = (n: number) => n * 60_000

let project = ""
let tarball = ""
let installedBytes = 0

const sh = async (command: string, args: ReadonlyArray<string>, cwd: string, timeout = minutes(10)) => {
  try {
    return await run(command, [...args], {
      cwd,
      timeout,
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, HOME: project }
    })
  } catch (error) {
    const e = error as { message: string; stdout?: string; stderr?: string }
    throw new Error(`${command} ${args.join(" ")} failed: ${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`)
  }
}

// Apparent size in bytes, by `du` in a child process (a walk of node_modules here would block the worker).
const sizeOf = async (dir: string): Promise<number> => {
  const { stdout } = await sh("du", ["-s", "--apparent-size", "--block-size=1", dir], project)
  return Number(stdout.split("\t")[0])
}

const newest = (dir: string): number => {
  let time = 0
  for (const entry of Fs.readdirSync(dir, { withFileTypes: true })) {
    const path = Path.join(dir, entry.name)
    time = Math.max(time, entry.isDirectory() ? newest(path) : Fs.statSync(path).mtimeMs)
  }
  return time
}

const isFresh = (built: string): boolean =>
  Fs.existsSync(built) && Fs.statSync(built).mtimeMs >= newest(Path.join(root, "src"))

beforeAll(async () => {
  project = Fs.mkdtempSync(Path.join(Os.tmpdir(), "armature-pack-"))
  // `npm pack` would run the full build (`prepare`); run it here only when dist/ is older than the sources.
  if (!isFresh(Path.join(root, "dist/index.js")) || !isFresh(Path.join(root, "dist/cli/main.js"))) {
    await sh(process.execPath, ["scripts/build.mjs"], root, minutes(15))
  }
  const packed = await sh(npm, ["pack", "--ignore-scripts", "--json", "--pack-destination", project], root)
  const [info] = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>
  tarball = Path.join(project, info.filename)
  Fs.writeFileSync(
    Path.join(project, "package.json"),
    JSON.stringify({ name: "consumer", private: true, type: "module" }, null, 2)
  )
  for (const file of Fs.readdirSync(fixtures)) Fs.copyFileSync(Path.join(fixtures, file), Path.join(project, file))
  await sh(npm, ["install", "--no-audit", "--no-fund", tarball], project, minutes(15))
  installedBytes = await sizeOf(Path.join(project, "node_modules"))
  // For the TypeScript consumer (not counted in the size above). Nothing else: the shipped declarations import
  // only the @effect/platform-node modules they use (not its index, whose socket server declarations need
  // @types/ws), and no types of Armature's own dependencies beyond Node's.
  await sh(npm, ["install", "--no-audit", "--no-fund", "typescript@5.9.3", "@types/node@20.19.43"], project)
}, minutes(30))

afterAll(async () => {
  if (project !== "") await Fs.promises.rm(project, { recursive: true, force: true })
}, minutes(5))

describe("the packed package", () => {
  it("ships the compiled library, the CLI bundle and no sources or tests", async () => {
    const listing = await sh("tar", ["-tzf", tarball], project)
    const files = listing.stdout.split("\n").filter((f) => f !== "")
    expect(files).toContain("package/dist/index.js")
    expect(files).toContain("package/dist/index.d.ts")
    expect(files).toContain("package/dist/testing/index.js")
    expect(files).toContain("package/dist/cli/main.js")
    expect(files).toContain("package/bin/armature.mjs")
    expect(files).toContain("package/dist/grammars/tree-sitter-bash.wasm")
    expect(files.filter((f) => f.startsWith("package/src/") || f.startsWith("package/test/"))).toEqual([])
    const installed = JSON.parse(
      Fs.readFileSync(Path.join(project, "node_modules/effect-armature/package.json"), "utf8")
    )
    expect(Object.keys(installed.dependencies ?? {})).not.toContain("tsx")
    expect(Object.keys(installed.dependencies ?? {})).not.toContain("esbuild")
    expect(Object.keys(installed.peerDependencies)).toEqual(
      expect.arrayContaining(["effect", "@effect/platform", "@effect/platform-node", "@effect/cli"])
    )
    // One copy of Effect: the consumer's.
    expect(Fs.existsSync(Path.join(project, "node_modules/effect-armature/node_modules/effect"))).toBe(false)
    const megabytes = installedBytes / 1024 / 1024
    console.log(JSON.stringify({ name: "consumer node_modules", megabytes: Math.round(megabytes) }))
    expect(megabytes).toBeLessThan(100)
  })

  it(
    "a plain .mjs imports armature, builds Armature.layerNode and runs a Glob call",
    async () => {
      const { stdout } = await sh(process.execPath, ["glob.mjs"], project)
      const [result] = JSON.parse(stdout) as Array<{ tool_use_id: string; content: string; is_error?: boolean }>
      expect(result.tool_use_id).toBe("g1")
      expect(result.is_error).toBeUndefined()
      // Glob answers with paths relative to the working directory.
      expect(result.content.split("\n").sort()).toEqual(["agent.mjs", "glob.mjs"])
    },
    minutes(5)
  )

  it(
    "a strict TypeScript consumer type-checks against the shipped declarations",
    async () => {
      const tsc = Path.join(project, "node_modules/typescript/bin/tsc")
      await sh(process.execPath, [tsc, "-p", "tsconfig.json"], project, minutes(18))
    },
    minutes(20)
  )

  it(
    "effect-armature/testing runs a scripted agent turn",
    async () => {
      const { stdout } = await sh(process.execPath, ["agent.mjs"], project)
      expect(JSON.parse(stdout)).toMatchObject({ type: "result", subtype: "success", num_turns: 2, result: "found: 2" })
    },
    minutes(5)
  )

  it(
    "the installed CLI runs from the bundle",
    async () => {
      const { stdout } = await sh(process.execPath, ["node_modules/.bin/armature", "--version"], project)
      expect(stdout.trim()).toBe("0.1.0")
    },
    minutes(5)
  )
})
