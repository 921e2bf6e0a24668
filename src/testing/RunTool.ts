/**
 * Runs one tool outside the executor, with a fake context: decodes the input with the tool's Schema, runs its
 * validation and its handler, and returns the output, the `tool_result` content and the progress it emitted. For
 * unit tests of a tool's own behaviour; the permission pipeline, hooks and the executor are not involved. The
 * services the tool's `call` needs are left in the result's type, for the test to provide.
 */
import { Effect, type ParseResult, Ref, Schema } from "effect"
import type { ToolResultContent } from "../domain/Blocks.js"
import type { ToolFailure, ToolSchemaError, ToolValidationError } from "../domain/Errors.js"
import type { PermissionMode } from "../domain/Permission.js"
import * as Tool from "../domain/Tool.js"

/** The fake context's fields; everything is optional. */
export interface RunToolOptions {
  /** Default `toolu_test`. */
  readonly toolUseId?: string | undefined
  /** Default `process.cwd()`. */
  readonly cwd?: string | undefined
  /** Default `default`. */
  readonly permissionMode?: PermissionMode | undefined
  /** Completes to simulate the user interrupting the turn (default: never). */
  readonly interrupted?: Effect.Effect<void> | undefined
  /** Shared session state (default: a fresh one). */
  readonly state?: Tool.SessionState | undefined
}

/** What one run produced. */
export interface ToolRun<O> {
  readonly output: O
  /** The content of the `tool_result` block the model would see. */
  readonly content: ToolResultContent
  /** Every progress value the tool emitted, in order. */
  readonly progress: ReadonlyArray<unknown>
  /** The context modifier the tool returned, if any. */
  readonly modifier: Tool.ContextModifier | undefined
}

/** Runs `tool` on `input` (the raw JSON the model would send). */
export const runTool = <I, O, E = ToolFailure, R = never, MR = never>(
  tool: Tool.Tool<I, O, E, R> | Effect.Effect<Tool.Tool<I, O, E, R>, ToolSchemaError, MR>,
  input: unknown,
  options: RunToolOptions = {}
): Effect.Effect<ToolRun<O>, E | ToolValidationError | ToolSchemaError | ParseResult.ParseError, R | MR> =>
  Effect.gen(function* () {
    const made = Effect.isEffect(tool) ? yield* tool : tool
    const progress = yield* Ref.make<ReadonlyArray<unknown>>([])
    const ctx: Tool.ToolContext = {
      toolUseId: options.toolUseId ?? "toolu_test",
      cwd: options.cwd ?? process.cwd(),
      permissionMode: options.permissionMode ?? "default",
      progress: (data) => Ref.update(progress, (all) => [...all, data]),
      interrupted: options.interrupted ?? Effect.never,
      state: options.state ?? (yield* Tool.makeSessionState)
    }
    const decoded = yield* Schema.decodeUnknown(made.input)(input)
    yield* made.validate(decoded, ctx)
    const result = yield* made.call(decoded, ctx)
    const output = Tool.isWithModifier(result) ? (result.output as O) : result
    return {
      output,
      content: made.toResult(output),
      progress: yield* Ref.get(progress),
      modifier: Tool.isWithModifier(result) ? result.modifier : undefined
    }
  })
