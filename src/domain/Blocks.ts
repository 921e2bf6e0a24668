/**
 * Anthropic Messages API content blocks that Armature consumes (`tool_use`) and produces (`tool_result`).
 */
import { Schema } from "effect"

/** A plain text block. */
export const TextBlock = Schema.Struct({
  type: Schema.Literal("text"),
  text: Schema.String
})
export type TextBlock = typeof TextBlock.Type

/** An image block with base64 data. */
export const ImageBlock = Schema.Struct({
  type: Schema.Literal("image"),
  source: Schema.Struct({
    type: Schema.Literal("base64"),
    media_type: Schema.String,
    data: Schema.String
  })
})
export type ImageBlock = typeof ImageBlock.Type

/** A reference to a deferred tool, returned by ToolSearch. */
export const ToolReferenceBlock = Schema.Struct({
  type: Schema.Literal("tool_reference"),
  tool_name: Schema.String
})
export type ToolReferenceBlock = typeof ToolReferenceBlock.Type

/** A block allowed inside a tool_result's content. */
export const ResultContentBlock = Schema.Union(TextBlock, ImageBlock, ToolReferenceBlock)
export type ResultContentBlock = typeof ResultContentBlock.Type

/** The content of a tool_result: a string or an array of blocks. */
export const ToolResultContent = Schema.Union(Schema.String, Schema.Array(ResultContentBlock))
export type ToolResultContent = typeof ToolResultContent.Type

/** One call emitted by the model. */
export const ToolUse = Schema.Struct({
  type: Schema.Literal("tool_use"),
  id: Schema.NonEmptyString,
  name: Schema.NonEmptyString,
  input: Schema.Unknown
})
export type ToolUse = typeof ToolUse.Type

/** One result sent back to the model. */
export const ToolResult = Schema.Struct({
  type: Schema.Literal("tool_result"),
  tool_use_id: Schema.String,
  content: ToolResultContent,
  is_error: Schema.optional(Schema.Boolean)
})
export type ToolResult = typeof ToolResult.Type

/** A thinking block, passed through untouched. */
export const ThinkingBlock = Schema.Struct({
  type: Schema.Literal("thinking", "redacted_thinking")
}).pipe(Schema.extend(Schema.Record({ key: Schema.String, value: Schema.Unknown })))

/** An assistant message as returned by the Messages API. */
export const AssistantMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  content: Schema.Array(Schema.Union(TextBlock, ToolUse, ThinkingBlock))
})
export type AssistantMessage = typeof AssistantMessage.Type

/** Builds a tool_result block. */
export const toolResult = (toolUseId: string, content: ToolResultContent, isError: boolean): ToolResult =>
  isError
    ? { type: "tool_result", tool_use_id: toolUseId, content, is_error: true }
    : { type: "tool_result", tool_use_id: toolUseId, content }

/** The text of a result's content, joining text blocks; other blocks are shown by type. */
export const contentText = (content: ToolResultContent): string =>
  typeof content === "string"
    ? content
    : content
        .map((block) =>
          block.type === "text" ? block.text : block.type === "tool_reference" ? block.tool_name : `[${block.type}]`
        )
        .join("\n")

/** The size in characters of a result's content, as counted for large-result handling. */
export const contentSize = (content: ToolResultContent): number =>
  typeof content === "string" ? content.length : JSON.stringify(content).length
