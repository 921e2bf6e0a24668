/**
 * Turns Schema decoding failures into Claude Code's InputValidationError lines, which models know.
 */
import { Option, type ParseResult, SchemaAST } from "effect"

const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>((acc, key) => {
    if (typeof key === "number") return `${acc}[${key}]`
    const name = String(key)
    return acc === "" ? name : `${acc}.${name}`
  }, "")

const actualType = (u: unknown): string => (u === null ? "null" : Array.isArray(u) ? "array" : typeof u)

/** A short name for the type an AST expects, as a model would write it. */
const expectedType = (ast: SchemaAST.AST): string => {
  switch (ast._tag) {
    case "StringKeyword":
    case "TemplateLiteral":
      return "string"
    case "NumberKeyword":
      return "number"
    case "BooleanKeyword":
      return "boolean"
    case "BigIntKeyword":
      return "bigint"
    case "Literal":
      return JSON.stringify(ast.literal)
    case "Enums":
      return ast.enums.map(([, v]) => JSON.stringify(v)).join(" | ")
    case "Union":
      return [...new Set(ast.types.map(expectedType))].join(" | ")
    case "TypeLiteral":
      return ast.indexSignatures.length > 0 && ast.propertySignatures.length === 0 ? "object" : "object"
    case "TupleType":
      return "array"
    case "Refinement":
      return expectedType(ast.from)
    case "Transformation":
      return expectedType(ast.from)
    case "Suspend":
      return expectedType(ast.f())
    case "UndefinedKeyword":
    case "VoidKeyword":
      return "undefined"
    default:
      return Option.getOrElse(SchemaAST.getIdentifierAnnotation(ast), () => "unknown")
  }
}

const refinementText = (ast: SchemaAST.Refinement): string =>
  Option.getOrElse(
    Option.orElse(SchemaAST.getDescriptionAnnotation(ast), () => SchemaAST.getTitleAnnotation(ast)),
    () => "a valid value"
  )

const paramLabel = (path: ReadonlyArray<PropertyKey>): string =>
  path.length === 0 ? "The input" : `The parameter \`${formatPath(path)}\``

const collect = (issue: ParseResult.ParseIssue, path: ReadonlyArray<PropertyKey>, out: Array<string>): void => {
  switch (issue._tag) {
    case "Pointer": {
      const keys = Array.isArray(issue.path) ? issue.path : [issue.path]
      collect(issue.issue, [...path, ...keys], out)
      return
    }
    case "Composite": {
      if (SchemaAST.isUnion(issue.ast)) {
        const issues = Array.isArray(issue.issues) ? issue.issues : [issue.issues]
        const onlyTypes = issues.every((i) => i._tag === "Type" || (i._tag === "Refinement" && i.kind === "From"))
        if (onlyTypes) {
          out.push(
            `${paramLabel(path)} type is expected as \`${expectedType(issue.ast)}\` but provided as \`${actualType(issue.actual)}\``
          )
          return
        }
      }
      const issues = Array.isArray(issue.issues) ? issue.issues : [issue.issues]
      for (const sub of issues) collect(sub, path, out)
      return
    }
    case "Missing":
      out.push(`The required parameter \`${formatPath(path)}\` is missing`)
      return
    case "Unexpected":
      out.push(`An unexpected parameter \`${formatPath(path)}\` was provided`)
      return
    case "Type":
      if (SchemaAST.isLiteral(issue.ast) || SchemaAST.isUnion(issue.ast)) {
        const actual = typeof issue.actual === "string" ? JSON.stringify(issue.actual) : actualType(issue.actual)
        out.push(`${paramLabel(path)} is expected to be \`${expectedType(issue.ast)}\` but provided as \`${actual}\``)
        return
      }
      out.push(
        `${paramLabel(path)} type is expected as \`${expectedType(issue.ast)}\` but provided as \`${actualType(issue.actual)}\``
      )
      return
    case "Refinement":
      if (issue.kind === "From") {
        collect(issue.issue, path, out)
        return
      }
      out.push(
        `${paramLabel(path)} is invalid: expected ${refinementText(issue.ast)}, got ${JSON.stringify(issue.actual)}`
      )
      return
    case "Transformation":
      collect(issue.issue, path, out)
      return
    case "Forbidden":
      out.push(`${paramLabel(path)} could not be checked`)
      return
  }
}

/** One line per issue, in the wording models already know. */
const issueLines = (issue: ParseResult.ParseIssue): ReadonlyArray<string> => {
  const out: Array<string> = []
  collect(issue, [], out)
  return out.length > 0 ? out : ["The input is invalid"]
}

/** The full InputValidationError text: one line per issue, wrapped in `<tool_use_error>`. */
export const inputValidationError = (toolName: string, issue: ParseResult.ParseIssue): string => {
  const lines = issueLines(issue)
  return `<tool_use_error>InputValidationError: ${toolName} failed due to the following ${lines.length === 1 ? "issue" : "issues"}:\n${lines.join("\n")}</tool_use_error>`
}
