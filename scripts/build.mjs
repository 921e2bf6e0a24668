#!/usr/bin/env node
// Builds what the package ships, into dist/:
// - the library: ESM .js, .d.ts and source maps of every module under src/ (tsc -p tsconfig.build.json);
// - the CLI: src/programs/main.ts bundled by esbuild into dist/cli/ with its dependencies inlined and
//   tree-shaken, so `armature` starts without resolving thousands of files. Code that only some commands need
//   (the MCP SDK, the Anthropic SDK) sits behind dynamic imports and lands in chunks loaded on demand.
//
// `node scripts/build.mjs` builds both (the `prepare` script: `npm ci`, `npm pack`); `node scripts/build.mjs cli`
// only the CLI bundle (before `npm test`, in a second or two).
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { build } from "esbuild"

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

const buildCli = async () => {
  const outdir = Path.join(root, "dist/cli")
  Fs.rmSync(outdir, { recursive: true, force: true })
  await build({
    entryPoints: { main: Path.join(root, "src/programs/main.ts") },
    outdir,
    bundle: true,
    splitting: true,
    treeShaking: true,
    minify: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // web-tree-sitter finds its .wasm next to its own module.
    // The sandbox runtime finds its seccomp helpers and proxy agent next to its own module, and is an optional peer.
    external: ["web-tree-sitter", "@anthropic-ai/sandbox-runtime"],
    // Bundled CommonJS dependencies may call require() for Node's built-ins.
    banner: { js: 'import { createRequire as __armatureRequire } from "node:module";const require = __armatureRequire(import.meta.url);' },
    chunkNames: "chunks/[name]-[hash]",
    plugins: [platformNodeIndex],
    sourcemap: "linked",
    logLevel: "warning"
  })
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
if (only === "cli") {
  await buildCli()
} else {
  await Promise.all([buildCli(), buildLibrary()])
}
copyGrammar()
