/**
 * What a finished call produced, before the executor yields it, and the texts made from failures. An outcome
 * records whether the tool *ran and failed* — only such a failure may cancel the call's siblings; a refusal
 * (permission, hook, input validation, unknown tool) is an error for that call alone. See docs/executor.md.
 */
import { Cause } from "effect"
import type { ResultContentBlock, ToolResultContent } from "./Blocks.js"
import type * as Tool from "./Tool.js"

/** A finished call. */
export interface Outcome {
  readonly content: ToolResultContent
  readonly isError: boolean
  /** False when a hook asked to stop the turn after this call. */
  readonly continue: boolean
  readonly stopReason: string | undefined
  /** A change of the session's context (the working directory) that the call asked for. */
  readonly modifier: Tool.ContextModifier | undefined
  /** True when the tool itself ran and failed (a failure, a defect or a timeout): the cause of a cascade. */
  readonly executionFailed: boolean
  /** Who refused the call, when it was refused (for spans and metrics; the content says why). */
  readonly denied?: DenialReason | undefined
  /** Why the call was cancelled, when the engine cancelled it (for spans and metrics). */
  readonly cancelled?: CancelCause | undefined
}

/** Who refused a call: a permission rule or mode, a PreToolUse or PermissionRequest hook, or the approver. */
export type DenialReason = "policy" | "pre_tool_use_hook" | "permission_request_hook" | "approver"

/** Why the engine cancelled a call: a sibling's failure, the user's interrupt, an abort, or a discarded turn. */
export type CancelCause = "sibling_error" | "user_interrupt" | "abort" | "discard"

/** How a call ended, in one word: the colour of its bar and the `armature.outcome` of its span. */
export type OutcomeKind = "ok" | "error" | "denied" | "cancelled" | "interrupted"

/** The kind of a finished call. */
export const kindOf = (outcome: Outcome): OutcomeKind =>
  !outcome.isError
    ? "ok"
    : outcome.cancelled === "sibling_error"
      ? "cancelled"
      : outcome.cancelled !== undefined
        ? "interrupted"
        : outcome.denied !== undefined
          ? "denied"
          : "error"

/** An error result for a call that did not run (or whose run does not count as a failure). */
export const errorOutcome = (content: string): Outcome => ({
  content,
  isError: true,
  continue: true,
  stopReason: undefined,
  modifier: undefined,
  executionFailed: false
})

/**
 * Wraps an error text the way every tool error reaches the model, `<tool_use_error>…</tool_use_error>`, so that a
 * refusal keeps its explanation (rule, hook, source) in the same form as other errors. Already wrapped texts stay.
 */
export const toolUseError = (text: string): string =>
  text.startsWith("<tool_use_error>") ? text : `<tool_use_error>${text}</tool_use_error>`

/** A refusal: permission denied, hook block, approval rejected. An error for this call alone. */
export const refused = (text: string, by: DenialReason): Outcome => ({
  ...errorOutcome(toolUseError(text)),
  denied: by
})

/** An error result for a call the engine cancelled. */
export const cancelledOutcome = (content: string, cause: CancelCause): Outcome => ({
  ...errorOutcome(content),
  cancelled: cause
})

/** The text of an unexpected defect. */
export const defectText = (cause: Cause.Cause<unknown>): string => {
  const squashed = Cause.squash(cause)
  return `Error: ${squashed instanceof Error ? squashed.message : String(squashed)}`
}

/** True when a result has nothing to show. */
export const isEmptyContent = (content: ToolResultContent): boolean =>
  typeof content === "string" ? content.trim() === "" : content.length === 0

/** Appends a text block to a result. */
export const appendText = (content: ToolResultContent, text: string): ToolResultContent => {
  const blocks: Array<ResultContentBlock> =
    typeof content === "string" ? [{ type: "text", text: content }] : [...content]
  return [...blocks, { type: "text", text }]
}
