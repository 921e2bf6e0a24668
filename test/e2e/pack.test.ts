/**
 * The package as a user gets it: `npm pack`, then a fresh `npm init -y` project (CommonJS, as npm makes it) where
 * the README's install line runs as written, with the tarball in place of the registry name. Then: the node_modules
 * it made (size and package count, against the budget of 60 MB and 30 packages), a plain .mjs and a
 * `require`-ing .cjs that run a Glob call through `Armature.layerNode`, strict TypeScript (module nodenext) in both
 * module kinds type-checked against the shipped declarations, compiled and run, the README's library example
 * compiled and run as written, a scripted agent turn from `effect-armature/testing`, and the installed CLI.
 * Everything runs as asynchronous child processes; the install uses npm's cache first (`--prefer-offline`) and the
 * registry for what is not there.
 */
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { codeBlocks, type DocProgram, programs } from "../fixtures/DocBlocks.js"
import * as MessagesServer from "../fixtures/MessagesServer.js"

const run = promisify(execFile)
const root = Path.resolve(import.meta.dirname, "../..")
const fixtures = Path.join(root, "test/fixtures/pack")
const npm = process.platform === "win32" ? "npm.cmd" : "npm"
const minutes = (n: number) => n * 60_000
const readme = Fs.readFileSync(Path.join(root, "README.md"), "utf8")
const libraryPage = Fs.readFileSync(Path.join(root, "docs/library.md"), "utf8")
// Every ts block of docs/library.md, as the programs it makes (a block may continue an earlier one).
const libraryPrograms: ReadonlyArray<DocProgram> = programs(libraryPage)
const programFile = (program: DocProgram) => `library-${program.line}${program.isTest ? ".test" : ""}.mts`

let project = ""
let tarball = ""
let tarballFiles: Array<{ path: string; size: number }> = []
let installedBytes = 0
let installedPackages: ReadonlyArray<string> = []

const sh = async (command: string, args: ReadonlyArray<string>, cwd: string, timeout = minutes(10)) => {
  try {
    return await run(command, [...args], {
      cwd,
      timeout,
      maxBuffer: 64 * 1024 * 1024,
      // No user settings of this machine (~/.claude) in the consumer's runs; npm keeps its usual cache.
      env: { ...process.env, HOME: project, npm_config_cache: Path.join(Os.homedir(), ".npm") }
    })
  } catch (error) {
    const e = error as { message: string; stdout?: string; stderr?: string }
    throw new Error(`${command} ${args.join(" ")} failed: ${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`)
  }
}

/** A page's one install line starting with `prefix` (in its sh blocks), as words, without its comment. */
const installLine = (text: string, prefix = "npm install effect-armature "): ReadonlyArray<string> => {
  const lines = codeBlocks(text)
    .filter((block) => block.lang === "sh")
    .flatMap((block) => block.code.split("\n"))
    .filter((line) => line.startsWith(prefix))
  if (lines.length !== 1) throw new Error(`expected one "${prefix.trim()}" line, found ${lines.length}`)
  return lines[0].split("#")[0].trim().split(/\s+/)
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
  const built = ["dist/index.js", "dist/cjs/index.js", "dist/cli/main.js"].map((f) => Path.join(root, f))
  if (!built.every(isFresh)) await sh(process.execPath, ["scripts/build.mjs"], root, minutes(15))
  const packed = await sh(npm, ["pack", "--ignore-scripts", "--json", "--pack-destination", project], root)
  const [info] = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string; size: number }> }>
  tarball = Path.join(project, info.filename)
  tarballFiles = info.files
  await sh(npm, ["init", "-y"], project)
  // The README's line as written, with the tarball for the package's registry name.
  const [, , ...packages] = installLine(readme)
  const args = packages.map((p) => (p === "effect-armature" ? tarball : p))
  await sh(npm, ["install", "--prefer-offline", "--no-audit", "--no-fund", ...args], project, minutes(15))
  installedBytes = await sizeOf(Path.join(project, "node_modules"))
  const hidden = JSON.parse(Fs.readFileSync(Path.join(project, "node_modules/.package-lock.json"), "utf8"))
  installedPackages = Object.keys(hidden.packages).filter((key) => key.startsWith("node_modules/"))
  for (const file of Fs.readdirSync(fixtures)) Fs.copyFileSync(Path.join(fixtures, file), Path.join(project, file))
  // The README's library example, as written, for the TypeScript consumer to compile and run.
  const example = codeBlocks(readme).find((block) => block.lang === "ts" && block.code.includes("Armature.layerNode"))
  if (example === undefined) throw new Error("README.md has no ts block with Armature.layerNode")
  Fs.writeFileSync(Path.join(project, "readme.mts"), example.code)
  Fs.mkdirSync(Path.join(project, "examples"))
  Fs.writeFileSync(Path.join(project, "examples/weather.ts"), "// a file for the README example's Glob call\n")
  // For the TypeScript consumers (not counted above). Nothing else: the shipped declarations name no types of
  // Armature's own dependencies beyond Node's.
  await sh(
    npm,
    ["install", "--prefer-offline", "--no-audit", "--no-fund", "-D", "typescript@5.9.3", "@types/node@20.19.43"],
    project
  )
  // docs/library.md's programs, and what they need beyond the library: the README's testing-kit line as written,
  // and the Anthropic SDK (an optional peer) for the agent loop's program.
  for (const program of libraryPrograms) Fs.writeFileSync(Path.join(project, programFile(program)), program.code)
  Fs.writeFileSync(
    Path.join(project, "tsconfig.docs.json"),
    JSON.stringify({
      extends: "./tsconfig.json",
      compilerOptions: { outDir: "out-docs" },
      files: libraryPrograms.map(programFile)
    })
  )
  const [, , ...kit] = installLine(readme, "npm install -D vitest")
  await sh(npm, ["install", "--prefer-offline", "--no-audit", "--no-fund", ...kit, "@anthropic-ai/sdk@1.14.0"], project)
}, minutes(30))

afterAll(async () => {
  if (project !== "") await Fs.promises.rm(project, { recursive: true, force: true })
}, minutes(5))

describe("the packed package", () => {
  it("ships the compiled library (ESM and CommonJS), the CLI bundle, and no sources, tests or source maps", () => {
    const files = tarballFiles.map((f) => f.path)
    for (const file of [
      "dist/index.js",
      "dist/index.d.ts",
      "dist/cjs/index.js",
      "dist/cjs/index.d.ts",
      "dist/cjs/package.json",
      "dist/testing/index.js",
      "dist/cjs/testing/index.js",
      "dist/cli/main.js",
      "bin/armature.mjs",
      "dist/grammars/tree-sitter-bash.wasm"
    ]) {
      expect(files).toContain(file)
    }
    for (const file of ["turndown.cjs", "ajv.cjs", "web-tree-sitter.cjs", "tree-sitter.wasm", "web-tree-sitter.d.ts"]) {
      expect(files).toContain(`dist/vendor/${file}`)
    }
    expect(files.filter((f) => f.startsWith("src/") || f.startsWith("test/") || f.endsWith(".map"))).toEqual([])
    const installed = JSON.parse(
      Fs.readFileSync(Path.join(project, "node_modules/effect-armature/package.json"), "utf8")
    )
    expect(installed.name).toBe("effect-armature")
    expect(installed.bin).toEqual({ armature: "bin/armature.mjs" })
    expect(installed.sideEffects).toEqual([])
    for (const entry of [".", "./testing", "./mcp", "./anthropic"]) {
      expect(Object.keys(installed.exports[entry])).toEqual(["import", "require", "default"])
      expect(Object.keys(installed.exports[entry].import)).toEqual(["types", "default"])
      expect(Object.keys(installed.exports[entry].require)).toEqual(["types", "default"])
    }
    expect(Object.keys(installed.peerDependencies)).not.toContain("@effect/cli")
    expect(Object.keys(installed.peerDependencies)).not.toContain("@effect/platform-node")
    // One copy of Effect: the consumer's.
    expect(Fs.existsSync(Path.join(project, "node_modules/effect-armature/node_modules/effect"))).toBe(false)
  })

  it("the documented install weighs at most 60 MB in at most 30 packages, and installs no SQLite", () => {
    const megabytes = installedBytes / 1024 / 1024
    const tarballMegabytes = tarballFiles.reduce((sum, f) => sum + f.size, 0) / 1024 / 1024
    console.log(
      JSON.stringify({
        name: "documented install",
        node_modules_mb: Math.round(megabytes * 10) / 10,
        packages: installedPackages.length,
        package_unpacked_mb: Math.round(tarballMegabytes * 10) / 10,
        package_files: tarballFiles.length
      })
    )
    expect(megabytes).toBeLessThanOrEqual(60)
    expect(installedPackages.length).toBeLessThanOrEqual(30)
    expect(installedPackages).not.toContain("node_modules/better-sqlite3")
    expect(installedPackages).not.toContain("node_modules/@effect/cli")
    // Carried in dist/vendor/ instead (bundled), or not used by the library at all.
    for (const name of ["@effect/cluster", "@effect/platform-node", "web-tree-sitter", "turndown", "ajv", "undici"]) {
      expect(installedPackages).not.toContain(`node_modules/${name}`)
    }
  })

  it(
    "the vendored modules work from the installed package: turndown (WebFetch) and ajv (MCP tool inputs)",
    async () => {
      const script = [
        'const Turndown = require("effect-armature/vendor/turndown.cjs")',
        'const { Ajv } = require("effect-armature/vendor/ajv.cjs")',
        'const markdown = new Turndown({ headingStyle: "atx" }).turndown("<h1>Title</h1><p>Some <b>bold</b> text</p>")',
        'const validate = new Ajv({ allErrors: true }).compile({ type: "object", required: ["a"] })',
        "console.log(JSON.stringify({ markdown, valid: validate({ a: 1 }), invalid: validate({}) }))"
      ].join("\n")
      const { stdout } = await sh(process.execPath, ["-e", script], project)
      expect(JSON.parse(stdout)).toEqual({ markdown: "# Title\n\nSome **bold** text", valid: true, invalid: false })
    },
    minutes(5)
  )

  it(
    "a plain .mjs imports effect-armature, builds Armature.layerNode and runs a Glob call",
    async () => {
      const { stdout } = await sh(process.execPath, ["glob.mjs"], project)
      const [result] = JSON.parse(stdout) as Array<{ tool_use_id: string; content: string; is_error?: boolean }>
      expect(result.tool_use_id).toBe("g1")
      expect(result.is_error).toBeUndefined()
      // Glob answers with paths relative to the working directory.
      expect(result.content.split("\n").sort()).toEqual(["glob.cjs", "glob.mjs"])
    },
    minutes(5)
  )

  it(
    "a CommonJS .cjs requires effect-armature and runs the same Glob call",
    async () => {
      const { stdout } = await sh(process.execPath, ["glob.cjs"], project)
      const [result] = JSON.parse(stdout) as Array<{ tool_use_id: string; content: string; is_error?: boolean }>
      expect(result.is_error).toBeUndefined()
      expect(result.content.split("\n").sort()).toEqual(["glob.cjs", "glob.mjs"])
    },
    minutes(5)
  )

  it(
    "strict TypeScript (nodenext) type-checks in both module kinds, and what tsc emits runs: CommonJS, ESM, the README example",
    async () => {
      const tsc = Path.join(project, "node_modules/typescript/bin/tsc")
      await sh(process.execPath, [tsc, "-p", "tsconfig.json"], project, minutes(18))
      // consumer.ts in a CommonJS project: tsc emits require() calls.
      expect(Fs.readFileSync(Path.join(project, "out/consumer.js"), "utf8")).toContain('require("effect-armature")')
      const cjs = await sh(process.execPath, ["out/consumer.js"], project)
      expect(JSON.parse(cjs.stdout)).toEqual([{ type: "tool_result", tool_use_id: "w", content: "Sunny in Oslo" }])
      const esm = await sh(process.execPath, ["out/consumer-esm.mjs"], project)
      expect(JSON.parse(esm.stdout)).toBe("echo: from ESM")
      const example = await sh(process.execPath, ["out/readme.mjs"], project)
      const results = JSON.parse(example.stdout) as Array<{ tool_use_id: string; content: unknown; is_error?: boolean }>
      expect(results.map((r) => r.tool_use_id)).toEqual(["w1", "g1", "b1"])
      expect(results[0].content).toBe("Sunny in Lisbon")
      expect(String(results[1].content)).toContain("examples/weather.ts")
      expect(results[2]).toMatchObject({ is_error: true })
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

  it("docs/library.md gives the README's install lines", () => {
    expect(installLine(libraryPage)).toEqual(installLine(readme))
    expect(installLine(libraryPage, "npm install -D vitest")).toEqual(installLine(readme, "npm install -D vitest"))
  })

  it(
    "every ts block of docs/library.md type-checks (strict, nodenext) and runs",
    async () => {
      const tsc = Path.join(project, "node_modules/typescript/bin/tsc")
      await sh(process.execPath, [tsc, "-p", "tsconfig.docs.json"], project, minutes(18))
      // What each program shows (by the section it is in); every program must run to exit 0.
      const outputs = new Map<number, string>()
      for (const program of libraryPrograms.filter((p) => !p.isTest)) {
        const out = Path.join("out-docs", programFile(program).replace(/\.mts$/, ".mjs"))
        const { stdout } = await sh(process.execPath, [out], project)
        outputs.set(program.line, stdout)
      }
      const shown = [...outputs.values()].join("\n")
      expect(shown).toContain("Sunny in Lisbon") // Define a tool, Compose the engine
      expect(shown).toContain("ACME: 101.5") // Failure policies
      expect(shown).toContain("failed after 3 retries")
      expect(shown).toContain("Glob: allow") // Replacing a part
      expect(shown).toContain("no sudo here") // In-process hooks
      expect(libraryPrograms.length).toBeGreaterThanOrEqual(7)
    },
    minutes(20)
  )

  it(
    "docs/library.md's agent loop runs against a Messages API (a scripted one on loopback)",
    async () => {
      const program = libraryPrograms.find((p) => p.code.includes("AgentLoop.run({") && !p.isTest)
      if (program === undefined) throw new Error("docs/library.md has no agent loop program")
      const out = Path.join("out-docs", programFile(program).replace(/\.mts$/, ".mjs"))
      const stdout = await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const server = yield* MessagesServer.make([
              MessagesServer.message([{ type: "tool_use", id: "g1", name: "Glob", input: { pattern: "src/**/*.ts" } }]),
              MessagesServer.message([{ type: "text", text: "No TypeScript files under src." }])
            ])
            const { stdout } = yield* Effect.promise(() =>
              run(process.execPath, [out], {
                cwd: project,
                timeout: minutes(5),
                env: { ...process.env, HOME: project, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url }
              })
            )
            expect(server.requests.length).toBe(2)
            return stdout
          })
        )
      )
      expect(stdout).toContain("success No TypeScript files under src.")
    },
    minutes(6)
  )

  it(
    "docs/library.md's test file passes under vitest with the README's testing kit",
    async () => {
      const tests = libraryPrograms.filter((p) => p.isTest).map(programFile)
      expect(tests.length).toBeGreaterThanOrEqual(1)
      const vitest = Path.join(project, "node_modules/vitest/vitest.mjs")
      const { stdout } = await sh(process.execPath, [vitest, "run", "--root", project, ...tests], project)
      // biome-ignore lint/suspicious/noControlCharactersInRegex: vitest colours its summary
      expect(stdout.replace(/\u001b\[[0-9;]*m/g, "")).toMatch(/Tests\s+1 passed/)
    },
    minutes(6)
  )

  it(
    "the installed CLI runs from the bundle",
    async () => {
      const { stdout } = await sh(process.execPath, ["node_modules/.bin/armature", "--version"], project)
      expect(stdout.trim()).toBe("0.1.0")
      const tools = await sh(process.execPath, ["node_modules/.bin/armature", "tools", "list"], project)
      expect(tools.stdout).toContain("Glob")
    },
    minutes(5)
  )
})
