#!/usr/bin/env node
// Checks the shape of the sources with the TypeScript compiler API:
// - no import cycle among the files of src/, of any kind: value imports, `import type`, `export … from`, `import("…")`
//   types and dynamic imports all count (a cycle is printed as the chain of files that closes it);
// - no function longer than 300 lines including the functions nested in it, and none longer than 120 lines of its
//   own (its lines minus those of the functions nested in it).
// A file may be as long as its one concept needs: there is no limit on a file's lines.
// Prints each offender; exits 1 when there is one. `--json` prints every file's figures and imports instead.
import * as Fs from "node:fs"
import * as Path from "node:path"
import ts from "typescript"

export const limits = { functionLines: 300, ownLines: 120 }

const root = Path.resolve(import.meta.dirname, "..")

const walk = (dir) =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = Path.join(dir, entry.name)
    return entry.isDirectory() ? walk(path) : entry.name.endsWith(".ts") ? [path] : []
  })

const isFunction = (node) =>
  ts.isFunctionDeclaration(node) ||
  ts.isFunctionExpression(node) ||
  ts.isArrowFunction(node) ||
  ts.isMethodDeclaration(node) ||
  ts.isConstructorDeclaration(node) ||
  ts.isGetAccessorDeclaration(node) ||
  ts.isSetAccessorDeclaration(node)

/** The lines of a node (first to last line it spans). */
const linesOf = (source, node) => {
  const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line
  const end = source.getLineAndCharacterOfPosition(node.getEnd()).line
  return { start, end, count: end - start + 1 }
}

const nameOf = (source, node) => {
  if (node.name !== undefined) return node.name.getText(source)
  const parent = node.parent
  if (parent !== undefined && ts.isVariableDeclaration(parent)) return parent.name.getText(source)
  if (parent !== undefined && ts.isPropertyAssignment(parent)) return parent.name.getText(source)
  if (parent !== undefined && ts.isCallExpression(parent)) {
    const callee = parent.expression.getText(source)
    return `<function passed to ${callee.length > 40 ? `${callee.slice(0, 40)}…` : callee}>`
  }
  return "<anonymous>"
}

/** The files of src/ a relative module specifier names (`./a.js` is `./a.ts`), if it names one. */
const resolveImport = (file, specifier) => {
  if (!specifier.startsWith(".")) return undefined
  const base = Path.resolve(Path.dirname(file), specifier)
  for (const candidate of [base.replace(/\.js$/, ".ts"), `${base}.ts`, Path.join(base, "index.ts")]) {
    if (Fs.existsSync(candidate) && Fs.statSync(candidate).isFile()) return candidate
  }
  return undefined
}

/** Every module a file imports, of any kind: its import and export declarations, `import("…")` types and calls. */
const importsOf = (source) => {
  const specifiers = []
  const visit = (node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier !== undefined) {
      if (ts.isStringLiteral(node.moduleSpecifier)) specifiers.push(node.moduleSpecifier.text)
    } else if (ts.isImportTypeNode(node)) {
      const arg = node.argument
      if (ts.isLiteralTypeNode(arg) && ts.isStringLiteral(arg.literal)) specifiers.push(arg.literal.text)
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments.length > 0 &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      specifiers.push(node.arguments[0].text)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return specifiers
}

/** Measures one file: its lines, every function's total and own lines, and the files of src/ it imports. */
export const measure = (file) => {
  const text = Fs.readFileSync(file, "utf8")
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const functions = []
  const visit = (node, enclosing) => {
    if (isFunction(node)) {
      const lines = linesOf(source, node)
      const record = { name: nameOf(source, node), line: lines.start + 1, total: lines.count, nested: new Set() }
      functions.push(record)
      // own lines: the function's lines minus the lines covered by directly nested functions
      ts.forEachChild(node, (child) => visit(child, record))
      if (enclosing !== undefined) {
        for (let l = lines.start; l <= lines.end; l++) enclosing.nested.add(l)
      }
      return
    }
    ts.forEachChild(node, (child) => visit(child, enclosing))
  }
  visit(source, undefined)
  return {
    file: Path.relative(root, file),
    lines: text.split("\n").length - (text.endsWith("\n") ? 1 : 0),
    imports: [
      ...new Set(
        importsOf(source)
          .map((specifier) => resolveImport(file, specifier))
          .filter((target) => target !== undefined)
          .map((target) => Path.relative(root, target))
      )
    ],
    functions: functions.map((f) => ({ name: f.name, line: f.line, total: f.total, own: f.total - f.nested.size }))
  }
}

/**
 * The import cycles among the measured files: one per strongly connected component of the import graph (Tarjan), as
 * a chain of files from the component's first file back to itself.
 */
export const cycles = (measured) => {
  const graph = new Map(measured.map((m) => [m.file, m.imports]))
  const index = new Map()
  const low = new Map()
  const stack = []
  const onStack = new Set()
  const components = []
  let counter = 0
  const connect = (v) => {
    index.set(v, counter)
    low.set(v, counter)
    counter++
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue
      if (!index.has(w)) {
        connect(w)
        low.set(v, Math.min(low.get(v), low.get(w)))
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v), index.get(w)))
      }
    }
    if (low.get(v) === index.get(v)) {
      const component = []
      let w
      do {
        w = stack.pop()
        onStack.delete(w)
        component.push(w)
      } while (w !== v)
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) components.push(component.sort())
    }
  }
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) connect(v)
  // a shortest chain from the component's first file back to it, through files of the component only
  return components.map((component) => {
    const members = new Set(component)
    const start = component[0]
    const previous = new Map()
    const queue = [start]
    let closing
    while (queue.length > 0 && closing === undefined) {
      const v = queue.shift()
      for (const w of graph.get(v) ?? []) {
        if (!members.has(w)) continue
        if (w === start) {
          closing = v
          break
        }
        if (!previous.has(w)) {
          previous.set(w, v)
          queue.push(w)
        }
      }
    }
    const chain = [start]
    for (let v = closing; v !== undefined && v !== start; v = previous.get(v)) chain.splice(1, 0, v)
    chain.push(start)
    return { files: component, chain }
  })
}

export const offenders = (measured) =>
  measured.flatMap((m) => [
    ...m.functions.flatMap((f) => [
      ...(f.total > limits.functionLines
        ? [`${m.file}:${f.line} ${f.name}: ${f.total} lines with nested functions (limit ${limits.functionLines})`]
        : []),
      ...(f.own > limits.ownLines ? [`${m.file}:${f.line} ${f.name}: ${f.own} lines of its own (limit ${limits.ownLines})`] : [])
    ])
  ])

if (import.meta.url === `file://${process.argv[1]}`) {
  const measured = walk(Path.join(root, "src")).map(measure)
  if (process.argv.includes("--json")) {
    for (const m of measured) console.log(JSON.stringify(m))
  } else {
    const found = [
      ...cycles(measured).map(
        (c) => `import cycle (${c.files.length} files): ${c.chain.join(" -> ")}${c.files.length > c.chain.length - 1 ? ` (and ${c.files.length - c.chain.length + 1} more: ${c.files.filter((f) => !c.chain.includes(f)).join(", ")})` : ""}`
      ),
      ...offenders(measured)
    ]
    for (const line of found) console.log(line)
    console.log(found.length === 0 ? `shape ok: ${measured.length} files` : `${found.length} shape offences`)
    process.exitCode = found.length === 0 ? 0 : 1
  }
}
