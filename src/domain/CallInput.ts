/**
 * A call's input, decoded at arrival with its tool's Schema (the scheduler needs the decoded input to know whether
 * the call is concurrency-safe): the decoded value, or the error result that names every issue.
 */
import { Either, type ParseResult, Schema } from "effect"
import { inputValidationError } from "./InputIssues.js"
import { errorOutcome, type Outcome } from "./Outcome.js"
import * as Texts from "./Texts.js"
import type * as Tool from "./Tool.js"

type Decoder = (raw: unknown) => Either.Either<unknown, ParseResult.ParseError>

/**
 * A tool's two input decoders, built once per tool: `fast` stops at the first issue (the common case, a valid
 * input, costs less), `all` collects every issue for the error text.
 */
const decoders = new WeakMap<Tool.Any, { readonly fast: Decoder; readonly all: Decoder }>()

const decodersOf = (tool: Tool.Any) => {
  let pair = decoders.get(tool)
  if (pair === undefined) {
    pair = {
      fast: Schema.decodeUnknownEither(tool.input, { errors: "first", onExcessProperty: "error" }),
      all: Schema.decodeUnknownEither(tool.input, { errors: "all", onExcessProperty: "error" })
    }
    decoders.set(tool, pair)
  }
  return pair
}

/**
 * Decodes a call's input with the tool's Schema (no excess properties); the error result, naming every issue, when
 * it fails.
 */
export const decode = (tool: Tool.Any, raw: unknown, undiscovered = false): Either.Either<unknown, Outcome> => {
  const { fast, all } = decodersOf(tool)
  const decoded = fast(raw)
  if (Either.isRight(decoded)) return Either.right(decoded.right)
  return Either.mapLeft(all(raw), (error) =>
    errorOutcome(
      inputValidationError(tool.name, error.issue) + (undiscovered ? `\n${Texts.undiscoveredHint(tool.name)}` : "")
    )
  )
}
