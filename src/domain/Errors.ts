/**
 * Tagged errors shared across Armature's services.
 */
import { Schema } from "effect"

/**
 * A tool's handler failed in an expected way; the message (then stderr, then stdout) goes to the model. `transient`
 * marks a failure of the way to the tool rather than of the tool (a JSON-RPC error, a lost connection, a timeout):
 * the only failures a retry policy retries (docs/tools.md, "Tool policies").
 */
export class ToolFailure extends Schema.TaggedError<ToolFailure>()("ToolFailure", {
  message: Schema.String,
  stderr: Schema.optional(Schema.String),
  stdout: Schema.optional(Schema.String),
  transient: Schema.optional(Schema.Boolean)
}) {}

/** A tool's `validate` rejected the decoded input; the message goes to the model. */
export class ToolValidationError extends Schema.TaggedError<ToolValidationError>()("ToolValidationError", {
  message: Schema.String
}) {}

/** A tool with this name (or alias) is already registered. */
export class DuplicateToolError extends Schema.TaggedError<DuplicateToolError>()("DuplicateToolError", {
  name: Schema.String,
  existing: Schema.String
}) {
  override get message(): string {
    return `Tool name "${this.name}" is already registered (by tool "${this.existing}")`
  }
}

/** A tool's input Schema cannot be turned into JSON Schema for the API. */
export class ToolSchemaError extends Schema.TaggedError<ToolSchemaError>()("ToolSchemaError", {
  tool: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Tool "${this.tool}" has an input Schema that cannot produce JSON Schema: ${this.reason}`
  }
}

/** The input given to the executor cannot be used (bad JSON, missing fields, duplicate ids, cycles). */
export class InvalidInputError extends Schema.TaggedError<InvalidInputError>()("InvalidInputError", {
  message: Schema.String
}) {}

/** The dependency graph of a batch (`depends_on`) has a cycle; nothing of the batch runs. */
export class DependencyCycleError extends Schema.TaggedError<DependencyCycleError>()("DependencyCycleError", {
  cycle: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `Dependency cycle between calls: ${this.cycle.join(" -> ")}`
  }
}
