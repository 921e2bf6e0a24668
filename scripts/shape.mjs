#!/usr/bin/env node
// Measures the shape of the sources with the TypeScript compiler API: no file in src/ longer than 450 lines, no
// function longer than 300 lines including the functions nested in it, and none longer than 120 lines of its own
// (its lines minus those of the functions nested in it). Prints each offender; exits 1 when there is one.
// `--json` prints every file's figures instead.
import * as Fs from "node:fs"
import * as Path from "node:path"
import ts from "typescript"

export const limits = { fileLines: 450, functionLines: 300, ownLines: 120 }

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

/** Measures one file: its lines and every function's total and own lines. */
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
    functions: functions.map((f) => ({ name: f.name, line: f.line, total: f.total, own: f.total - f.nested.size }))
  }
}

export const offenders = (measured) =>
  measured.flatMap((m) => [
    ...(m.lines > limits.fileLines ? [`${m.file}: ${m.lines} lines (limit ${limits.fileLines})`] : []),
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
    const found = offenders(measured)
    for (const line of found) console.log(line)
    console.log(found.length === 0 ? `shape ok: ${measured.length} files` : `${found.length} shape offences`)
    process.exitCode = found.length === 0 ? 0 : 1
  }
}
