#!/usr/bin/env node
// Builds what the package ships, into dist/:
// - the library: ESM .js and .d.ts of every module under src/ (tsc -p tsconfig.build.json), with the few
//   @effect/platform-node modules it uses bundled into dist/layers/platform/ (see vendorPlatform); then the same
//   modules as CommonJS, with their declarations, in dist/cjs/ (a package.json there says "commonjs");
// - the CLI: src/programs/main.ts bundled by esbuild into dist/cli/ with its dependencies inlined and
//   tree-shaken, so `armature` starts without resolving thousands of files. Code that only some commands need
//   (the MCP SDK, the Anthropic SDK) sits behind dynamic imports and lands in chunks loaded on demand;
// - dist/cli/answers.json: what `--version` and `--help` print, for bin/armature.mjs to answer without the bundle.
//
// `node scripts/build.mjs` builds both (the `prepare` script: `npm ci`, `npm pack`); `node scripts/build.mjs cli`
// only the CLI bundle (before `npm test`, in a few seconds). ARMATURE_METAFILE=path also writes esbuild's metafile
// of the CLI bundle there (to see what a start loads); ARMATURE_NO_MINIFY=1 keeps the CLI bundle's names readable
// (for a start-up profile: `node --cpu-prof bin/armature.mjs ...`).
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { build, transform } from "esbuild"

const root = Path.resolve(import.meta.dirname, "..")
const only = process.argv[2]

// @effect/platform-node's index re-exports undici (a CommonJS megabyte esbuild cannot tree-shake) and the cluster
// modules; the CLI imports the index for a few Node layers. Resolve the index to one that re-exports only the
// modules without those, so they are bundled only where they are imported directly (lazily, by WebFetch).
const platformNodeIndex = {
  name: "platform-node-index",
  setup(build) {
    const skip = new Set(["Undici", "NodeClusterHttp", "NodeClusterSocket", "NodeHttpClient"])
    build.onResolve({ filter: /^@effect\/platform-node$/ }, () => ({ path: "index", namespace: "platform-node" }))
    build.onLoad({ filter: /.*/, namespace: "platform-node" }, () => {
      const dir = Path.join(root, "node_modules/@effect/platform-node/dist/esm")
      const names = Fs.readdirSync(dir)
        .filter((f) => /^Node\w+\.js$|^Undici\.js$/.test(f))
        .map((f) => f.slice(0, -3))
        .filter((name) => !skip.has(name))
      return {
        contents: names.map((name) => `export * as ${name} from "@effect/platform-node/${name}"`).join("\n"),
        resolveDir: root,
        loader: "js"
      }
    })
  }
}

// @effect/cli parses YAML and TOML files for `Options.fileParse`/`Args.fileParse`, which no armature command uses;
// the two parsers are 150 kB that every start would compile. The CLI bundle gets a stand-in that says so instead.
const unusedFileParsers = {
  name: "unused-file-parsers",
  setup(build) {
    build.onResolve({ filter: /^(yaml|toml)$/ }, (args) => ({ path: args.path, namespace: "unused-file-parsers" }))
    build.onLoad({ filter: /.*/, namespace: "unused-file-parsers" }, (args) => ({
      contents: `export const parse = () => { throw new Error("the armature CLI does not parse ${args.path} files") }`,
      loader: "js"
    }))
  }
}

// effect's Schema refers to fast-check (through effect/FastCheck) to build property-test generators, which the CLI
// never builds: bundled, fast-check was 45 kB that every start compiled and evaluated. The CLI bundle gets a
// stand-in whose functions say so if they are ever called.
const fastCheckNames = Object.keys(await import("fast-check")).filter((name) => name !== "default")
const noFastCheck = {
  name: "no-fast-check",
  setup(build) {
    build.onResolve({ filter: /^fast-check$/ }, () => ({ path: "fast-check", namespace: "no-fast-check" }))
    build.onLoad({ filter: /.*/, namespace: "no-fast-check" }, () => ({
      contents: [
        'const unavailable = () => { throw new Error("the armature CLI does not generate property-test values (fast-check)") }',
        ...fastCheckNames.map((name) => `export const ${name} = unavailable`)
      ].join("\n"),
      loader: "js"
    }))
  }
}

const buildCli = async () => {
  const outdir = Path.join(root, "dist/cli")
  Fs.rmSync(outdir, { recursive: true, force: true })
  const result = await build({
    entryPoints: { main: Path.join(root, "src/programs/main.ts") },
    outdir,
    bundle: true,
    splitting: true,
    treeShaking: true,
    minify: process.env.ARMATURE_NO_MINIFY !== "1",
    platform: "node",
    format: "esm",
    target: "node20",
    // web-tree-sitter finds its .wasm next to its own module.
    // The sandbox runtime finds its seccomp helpers and proxy agent next to its own module, and is an optional peer.
    // better-sqlite3 (durable sessions) finds its native addon next to its own module.
    external: ["web-tree-sitter", "@anthropic-ai/sandbox-runtime", "better-sqlite3"],
    // Bundled CommonJS dependencies may call require() for Node's built-ins.
    banner: { js: 'import { createRequire as __armatureRequire } from "node:module";const require = __armatureRequire(import.meta.url);' },
    chunkNames: "chunks/[name]-[hash]",
    plugins: [platformNodeIndex, unusedFileParsers, noFastCheck],
    sourcemap: "linked",
    logLevel: "warning",
    metafile: process.env.ARMATURE_METAFILE !== undefined
  })
  if (result.metafile !== undefined) Fs.writeFileSync(process.env.ARMATURE_METAFILE, JSON.stringify(result.metafile))
}

// `armature --version` and the top-level help print the same text on every run, yet the full CLI takes half a second
// to start. The build runs the bundle it just wrote once for each (plain, and as on a terminal, with colour) and
// stores what it printed; bin/armature.mjs prints that for exactly these arguments without loading the bundle.
// test/e2e/cli.test.ts checks that the stored answers equal what the full CLI prints.
const quickAnswers = { version: ["--version"], help: ["--help"] }

// Run before the bundle: stdout counts as a terminal (the text keeps its colour; the width does not matter).
const asTerminal = 'data:text/javascript,Object.defineProperty(process.stdout,"isTTY",{value:true})'

const printed = (args, colour) =>
  new Promise((resolve, reject) => {
    const main = Path.join(root, "dist/cli/main.js")
    const child = spawn(process.execPath, [...(colour ? ["--import", asTerminal] : []), main, ...args], {
      cwd: root,
      env: { ...process.env, NO_COLOR: "" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    const out = []
    const err = []
    child.stdout.on("data", (chunk) => out.push(chunk))
    child.stderr.on("data", (chunk) => err.push(chunk))
    child.on("error", reject)
    child.on("close", (code) =>
      code === 0 && err.length === 0
        ? resolve(Buffer.concat(out).toString("utf8"))
        : reject(new Error(`dist/cli/main.js ${args.join(" ")} exited ${code}: ${Buffer.concat(err).toString()}`))
    )
  })

const renderQuickAnswers = async () => {
  const entries = await Promise.all(
    Object.entries(quickAnswers).map(async ([name, args]) => {
      const [plain, colour] = await Promise.all([printed(args, false), printed(args, true)])
      return [name, { plain, colour }]
    })
  )
  Fs.writeFileSync(Path.join(root, "dist/cli/answers.json"), `${JSON.stringify(Object.fromEntries(entries))}\n`)
}

const buildLibrary = () =>
  new Promise((resolve, reject) => {
    for (const entry of Fs.readdirSync(Path.join(root, "dist"), { withFileTypes: true })) {
      if (entry.name !== "cli" && entry.name !== "grammars") Fs.rmSync(Path.join(root, "dist", entry.name), { recursive: true, force: true })
    }
    const tsc = spawn(process.execPath, [Path.join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], {
      cwd: root,
      stdio: "inherit"
    })
    tsc.on("error", reject)
    tsc.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`tsc -p tsconfig.build.json exited ${code}`))))
  })
    .then(stripComments)
    .then(vendorPlatform)
    .then(vendorPackages)
    .then(buildCommonJs)

// The library's .js files without the sources' comments: the documentation is in the .d.ts files (kept as tsc
// wrote them), and the comments were a quarter of the .js (0.31 of 1.23 MB), shipped twice with dist/cjs/.
// esbuild rewrites each file on its own (no bundling, same module format), keeping /* @__PURE__ */ annotations.
const stripComments = async () => {
  const skip = ["cli", "grammars", "cjs", "vendor"]
  const files = (dir) =>
    Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = Path.join(dir, entry.name)
      if (entry.isDirectory()) return skip.includes(Path.relative(Path.join(root, "dist"), path)) ? [] : files(path)
      return path.endsWith(".js") ? [path] : []
    })
  await Promise.all(
    files(Path.join(root, "dist")).map(async (file) => {
      const { code } = await transform(await Fs.promises.readFile(file, "utf8"), {
        loader: "js",
        format: "esm",
        target: "node20"
      })
      await Fs.promises.writeFile(file, code)
    })
  )
}

// The library imports five modules of @effect/platform-node (the file system, path, command executor, terminal and
// stream adapter) through src/layers/platform/NodePlatform.ts. Depending on @effect/platform-node would install its
// peers (cluster, rpc, sql, workflow, experimental) and dependencies (@parcel/watcher, undici, ws,
// kubernetes-types): more than half of an application's node_modules. Instead, dist/layers/platform/NodePlatform.js
// is rebuilt with what it imports from @effect/platform-node inlined; `effect`, `@effect/platform` and Node's
// built-ins stay imports, so the application's one copy of Effect is the one used.
const vendored = ["layers/platform/NodePlatform.js"]
const vendorPlatform = async () => {
  const keep = /^(effect|@effect\/platform)(\/|$)|^node:/
  const inlinePlatformNode = {
    name: "inline-platform-node",
    setup(build) {
      build.onResolve({ filter: /.*/ }, (args) =>
        args.kind === "entry-point" || args.path.startsWith(".") || !keep.test(args.path) ? undefined : { external: true }
      )
    }
  }
  await Promise.all(
    vendored.map((file) =>
      build({
        entryPoints: [Path.join(root, "dist", file)],
        outfile: Path.join(root, "dist", file),
        allowOverwrite: true,
        bundle: true,
        platform: "node",
        format: "esm",
        target: "node20",
        plugins: [inlinePlatformNode],
        banner: { js: "// Bundles modules of @effect/platform-node and @effect/platform-node-shared (MIT licence, Effectful Technologies Inc.)." },
        logLevel: "warning"
      })
    )
  )
}

// dist/vendor/: third-party modules the package carries instead of depending on them (loaded through
// src/layers/platform/Vendored.ts): turndown with its DOM parser domino (7.9 MB installed, mostly domino's tests)
// and ajv with its dependencies (1.5 MB), each bundled and minified into one CommonJS file; web-tree-sitter's
// runtime, its .wasm and its declarations (5.7 MB installed with debug builds and source maps). The declarations of
// the shell modules name web-tree-sitter's `Node`; they are pointed at the copy.
const vendorPackages = async () => {
  const out = Path.join(root, "dist/vendor")
  Fs.mkdirSync(out, { recursive: true })
  const bundled = [
    ["turndown.cjs", 'module.exports = require("turndown")', "turndown (MIT) and @mixmark-io/domino (BSD-2-Clause)"],
    ["ajv.cjs", 'module.exports = require("ajv")', "ajv, fast-uri, fast-deep-equal, json-schema-traverse (MIT)"]
  ]
  await Promise.all(
    bundled.map(([file, contents, licence]) =>
      build({
        stdin: { contents, resolveDir: root, loader: "js" },
        outfile: Path.join(out, file),
        bundle: true,
        minify: true,
        platform: "node",
        format: "cjs",
        target: "node20",
        banner: { js: `// Bundles ${licence}; their licences are in node_modules of the build and on the registry.` },
        legalComments: "inline",
        logLevel: "warning"
      })
    )
  )
  const wts = Path.join(root, "node_modules/web-tree-sitter")
  Fs.copyFileSync(Path.join(wts, "tree-sitter.cjs"), Path.join(out, "web-tree-sitter.cjs"))
  Fs.copyFileSync(Path.join(wts, "tree-sitter.wasm"), Path.join(out, "tree-sitter.wasm"))
  Fs.copyFileSync(Path.join(wts, "web-tree-sitter.d.ts"), Path.join(out, "web-tree-sitter.d.ts"))
  Fs.copyFileSync(Path.join(wts, "LICENSE"), Path.join(out, "web-tree-sitter.LICENSE"))
  const declarations = (dir) =>
    Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = Path.join(dir, entry.name)
      return entry.isDirectory() ? declarations(path) : path.endsWith(".d.ts") ? [path] : []
    })
  for (const file of declarations(Path.join(root, "dist/layers"))) {
    const text = Fs.readFileSync(file, "utf8")
    if (!text.includes('from "web-tree-sitter"')) continue
    const copy = Path.relative(Path.dirname(file), Path.join(out, "web-tree-sitter.js")).split(Path.sep).join("/")
    Fs.writeFileSync(file, text.replaceAll('from "web-tree-sitter"', `from "${copy}"`))
  }
}

// dist/cjs/: every module of the library as CommonJS, converted file by file from the ESM build (relative imports
// stay relative, so dist/cjs mirrors dist/), for applications that `require("effect-armature")`. Dynamic imports
// become require() (Node 20.19+ can require the ES-module-only optional peers). `import.meta.url` becomes the
// file's URL. The declarations are copied next to them: under dist/cjs (a "commonjs" package scope), TypeScript
// reads them as CommonJS declarations, which is what a CommonJS consumer's `require` gets.
const buildCommonJs = async () => {
  const out = Path.join(root, "dist/cjs")
  const library = (dir) =>
    Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = Path.join(dir, entry.name)
      // Not the CLI bundle, not what only the CLI uses (programs, durable sessions: not shipped), not the output.
      const skip = ["cli", "grammars", "cjs", "programs", "layers/durable"]
      if (entry.isDirectory()) return skip.includes(Path.relative(Path.join(root, "dist"), path)) ? [] : library(path)
      return [path]
    })
  const files = library(Path.join(root, "dist"))
  await build({
    entryPoints: files.filter((f) => f.endsWith(".js")),
    outbase: Path.join(root, "dist"),
    outdir: out,
    bundle: false,
    platform: "node",
    format: "cjs",
    target: "node20",
    define: { "import.meta.url": "__armatureImportMetaUrl" },
    banner: { js: 'const __armatureImportMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
    logLevel: "warning"
  })
  for (const file of files.filter((f) => f.endsWith(".d.ts"))) {
    const to = Path.join(out, Path.relative(Path.join(root, "dist"), file))
    Fs.mkdirSync(Path.dirname(to), { recursive: true })
    Fs.copyFileSync(file, to)
  }
  Fs.writeFileSync(Path.join(out, "package.json"), `${JSON.stringify({ type: "commonjs" }, null, 2)}\n`)
}

// The bash grammar: only its .wasm is used, so the package ships that file (with its licence) instead of
// depending on tree-sitter-bash, whose sources and native bindings weigh 20 MB.
const copyGrammar = () => {
  const from = Path.join(root, "node_modules/tree-sitter-bash")
  const to = Path.join(root, "dist/grammars")
  Fs.mkdirSync(to, { recursive: true })
  Fs.copyFileSync(Path.join(from, "tree-sitter-bash.wasm"), Path.join(to, "tree-sitter-bash.wasm"))
  Fs.copyFileSync(Path.join(from, "LICENSE"), Path.join(to, "tree-sitter-bash.LICENSE"))
}

Fs.mkdirSync(Path.join(root, "dist"), { recursive: true })
const cli = () => buildCli().then(renderQuickAnswers)
if (only === "cli") {
  await cli()
} else {
  await Promise.all([cli(), buildLibrary()])
}
copyGrammar()
