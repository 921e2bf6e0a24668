/**
 * The shape of an MCP tool in Armature: its input Schema (any object, validated by ajv against the server's JSON
 * Schema with readable issues) and its result content mapped to tool_result blocks.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import type * as AjvModule from "ajv"
import type { ErrorObject } from "ajv"
import { Option, ParseResult, Schema, SchemaAST } from "effect"
import type { ResultContentBlock } from "../../domain/Blocks.js"
import * as Vendored from "../platform/Vendored.js"

// ---------------------------------------------------------------------------------------------------------------
// Input: any object, validated by ajv against the server's own JSON Schema, with readable issues.

// ajv: the copy in dist/vendor/, see Vendored.ts.
const { Ajv } = Vendored.load<typeof AjvModule>("ajv.cjs", "ajv")
const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false })

const expectedAst = (type: unknown): Schema.Schema.AnyNoContext => {
  switch (type) {
    case "string":
      return Schema.String
    case "number":
      return Schema.Number
    case "integer":
      return Schema.Int
    case "boolean":
      return Schema.Boolean
    case "array":
      return Schema.Array(Schema.Unknown)
    case "null":
      return Schema.Null
    default:
      return Schema.Object
  }
}

const pointerPath = (instancePath: string): Array<PropertyKey> =>
  instancePath === ""
    ? []
    : instancePath
        .slice(1)
        .split("/")
        .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
        .map((s) => (/^\d+$/.test(s) ? Number(s) : s))

const valueAt = (input: unknown, path: ReadonlyArray<PropertyKey>): unknown =>
  path.reduce<unknown>(
    (v, k) => (typeof v === "object" && v !== null ? (v as Record<PropertyKey, unknown>)[k] : undefined),
    input
  )

const withPath = (path: ReadonlyArray<PropertyKey>, input: unknown, issue: ParseResult.ParseIssue) =>
  path.length === 0 ? issue : new ParseResult.Pointer(path as [PropertyKey, ...Array<PropertyKey>], input, issue)

const issueOf = (input: unknown, error: ErrorObject): ParseResult.ParseIssue => {
  const path = pointerPath(error.instancePath)
  const params = error.params as Record<string, unknown>
  if (error.keyword === "required" && typeof params.missingProperty === "string") {
    return withPath(
      [...path, params.missingProperty],
      input,
      new ParseResult.Missing(new SchemaAST.Type(SchemaAST.unknownKeyword))
    )
  }
  if (error.keyword === "additionalProperties" && typeof params.additionalProperty === "string") {
    const key = params.additionalProperty
    return withPath([...path, key], input, new ParseResult.Unexpected(valueAt(input, [...path, key])))
  }
  const actual = valueAt(input, path)
  if (error.keyword === "type") return withPath(path, input, new ParseResult.Type(expectedAst(params.type).ast, actual))
  return withPath(path, input, new ParseResult.Type(Schema.Unknown.ast, actual, error.message ?? error.keyword))
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The input Schema of an MCP tool: accepts any object and, when the server's JSON Schema compiles, validates it
 * with ajv, turning each ajv error into a ParseResult issue (missing, unexpected, wrong type) at its path.
 */
export const inputSchemaOf = (jsonSchema: Record<string, unknown>): Schema.Schema<Record<string, unknown>> => {
  const { $schema: _ignored, ...rest } = jsonSchema
  const validate = Option.liftThrowable(() => ajv.compile(rest))()
  return Schema.declare([], {
    decode: () => (input, _options, ast) => {
      if (!isObject(input)) return ParseResult.fail(new ParseResult.Type(ast, input, "Expected an object"))
      if (Option.isNone(validate) || validate.value(input) === true) return ParseResult.succeed(input)
      const errors = validate.value.errors ?? []
      const issues = errors.map((e) => issueOf(input, e))
      return issues.length === 0
        ? ParseResult.fail(new ParseResult.Type(ast, input, "Invalid input"))
        : ParseResult.fail(new ParseResult.Composite(ast, input, issues as [ParseResult.ParseIssue]))
    },
    encode: () => (input) => ParseResult.succeed(input)
  }).annotations({
    identifier: "McpToolInput",
    jsonSchema: { type: "object", properties: {} }
  }) as unknown as Schema.Schema<Record<string, unknown>>
}

// ---------------------------------------------------------------------------------------------------------------
// Output: MCP content blocks to tool_result content.

/** Maps an MCP tool result's content to tool_result blocks (text and image; others described in text). */
export const toContent = (result: CallToolResult): ReadonlyArray<ResultContentBlock> => {
  const blocks = result.content.map((block): ResultContentBlock => {
    switch (block.type) {
      case "text":
        return { type: "text", text: block.text }
      case "image":
        return { type: "image", source: { type: "base64", media_type: block.mimeType, data: block.data } }
      case "audio":
        return { type: "text", text: `[audio ${block.mimeType}, ${block.data.length} base64 characters]` }
      case "resource":
        return {
          type: "text",
          text:
            "text" in block.resource && typeof block.resource.text === "string"
              ? block.resource.text
              : `[resource ${block.resource.uri}${block.resource.mimeType ? ` (${block.resource.mimeType})` : ""}]`
        }
      default:
        return { type: "text", text: `[resource link: ${block.name} ${block.uri}]` }
    }
  })
  if (blocks.length === 0 && result.structuredContent !== undefined) {
    return [{ type: "text", text: JSON.stringify(result.structuredContent) }]
  }
  return blocks
}

/** The text blocks of a result, joined by newlines. */
export const textOf = (blocks: ReadonlyArray<ResultContentBlock>): string =>
  blocks
    .filter((b) => b.type === "text")
    .map((b) => b.text)
    .join("\n")
