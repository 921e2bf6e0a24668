/**
 * The exact texts the model receives for refusals, errors and cancellations, in one place. Most follow Claude
 * Code's wording, which models already know; docs/executor.md lists when each is given.
 */

/** The call names a tool that is not in the registry. */
export const noSuchTool = (name: string): string =>
  `<tool_use_error>Error: No such tool available: ${name}</tool_use_error>`

/** The turn was interrupted before this call started. */
export const alreadyCancelled =
  "The user doesn't want to take this action right now. STOP what you are doing and wait for the user to tell you how to proceed."

/** Added to an input error when the tool is deferred and the model has not loaded its schema yet. */
export const undiscoveredHint = (toolName: string): string =>
  `This tool's schema was not sent to the API. Call ToolSearch with query "select:${toolName}", then retry this call.`

/** The tool's own `validate` rejected the input. */
export const validationFailed = (message: string): string => `<tool_use_error>${message}</tool_use_error>`

/** A PreToolUse hook denied the call. */
export const preToolUseBlocked = (toolName: string, reason: string): string =>
  `PreToolUse:${toolName} hook error: ${reason}`

/** A tool that returned nothing: the model still gets a non-empty result. */
export const emptyResult = (toolName: string): string => `(${toolName} completed with no output)`

/** A PostToolUse hook blocked: its reason is appended to the result. */
export const postToolUseBlocked = (toolName: string, command: string, reason: string): string =>
  `PostToolUse:${toolName} hook blocking error from command: "${command}": ${reason}`

/** A failure text longer than 10,000 characters keeps its first and last 5,000. */
export const truncateFailure = (text: string): string => {
  if (text.length <= 10_000) return text
  const cut = text.length - 10_000
  return `${text.slice(0, 5_000)}\n\n... [${cut} characters truncated] ...\n\n${text.slice(-5_000)}`
}

/** The call ran past its tool's timeout. */
export const timedOut = (toolName: string, ms: number): string => `Tool ${toolName} timed out after ${ms} ms`

/**
 * A call cancelled because a sibling failed: `{summary}` is the first 40 characters of the call's main argument, then
 * `…` when cut.
 */
export const siblingErrored = (toolName: string, mainArgument: string): string => {
  const summary = mainArgument.length > 40 ? `${mainArgument.slice(0, 40)}…` : mainArgument
  return `<tool_use_error>Cancelled: parallel tool call ${toolName}(${summary}) errored</tool_use_error>`
}

/** A call cancelled by a user interrupt or a hard abort, or an approval the user rejected. */
export const rejected =
  "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed."

/** A call whose dependency's (`depends_on`) result was an error. */
export const dependencyFailed = (id: string): string => `Dependency ${id} failed`
