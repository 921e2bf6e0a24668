/**
 * The third-party modules the package carries in dist/vendor/ instead of depending on them (scripts/build.mjs
 * writes them): turndown with its DOM parser, ajv, and web-tree-sitter's runtime. As dependencies they were 15 MB
 * of an application's node_modules (tests and sources of domino, debug builds and source maps of web-tree-sitter);
 * bundled they are under 1 MB. They are loaded through the package's own name (`effect-armature/vendor/…`), which
 * resolves from the ES-module build, the CommonJS build and the CLI bundle alike; a checkout without a build uses
 * the development dependency of the same name.
 */
import { createRequire } from "node:module"

const notThere = (error: unknown): boolean => {
  const code = (error as { code?: unknown } | null)?.code
  return code === "MODULE_NOT_FOUND" || code === "ERR_PACKAGE_PATH_NOT_EXPORTED"
}

/** `require` of the vendored copy `dist/vendor/<file>`, else of the package itself. */
export const load = <A>(file: string, pkg: string): A => {
  const require = createRequire(import.meta.url)
  try {
    return require(`effect-armature/vendor/${file}`) as A
  } catch (error) {
    if (!notThere(error)) throw error
    return require(pkg) as A
  }
}
