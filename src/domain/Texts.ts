/**
 * The exact result texts of SPEC §3 and §4, in one place.
 */

/** SPEC §3 step 1. */
export const noSuchTool = (name: string): string =>
  `<tool_use_error>Error: No such tool available: ${name}</tool_use_error>`

/** SPEC §3 step 2: the turn was interrupted before this call started. */
export const alreadyCancelled =
  "The user doesn't want to take this action right now. STOP what you are doing and wait for the user to tell you how to proceed."

/** SPEC §3 step 3, for a deferred tool the model has not discovered yet. */
export const undiscoveredHint = (toolName: string): string =>
  `This tool's schema was not sent to the API. Call ToolSearch with query "select:${toolName}", then retry this call.`

/** SPEC §3 step 4. */
export const validationFailed = (message: string): string => `<tool_use_error>${message}</tool_use_error>`

/** SPEC §3 step 5. */
export const preToolUseBlocked = (toolName: string, reason: string): string =>
  `PreToolUse:${toolName} hook error: ${reason}`

/** SPEC §3 step 8. */
export const emptyResult = (toolName: string): string => `(${toolName} completed with no output)`

/** SPEC §3 step 9. */
export const postToolUseBlocked = (toolName: string, command: string, reason: string): string =>
  `PostToolUse:${toolName} hook blocking error from command: "${command}": ${reason}`

/** SPEC §3 step 10: long failure texts keep their head and tail. */
export const truncateFailure = (text: string): string => {
  if (text.length <= 10_000) return text
  const cut = text.length - 10_000
  return `${text.slice(0, 5_000)}\n\n... [${cut} characters truncated] ...\n\n${text.slice(-5_000)}`
}

/** SPEC §4.5. */
export const timedOut = (toolName: string, ms: number): string => `Tool ${toolName} timed out after ${ms} ms`

/** SPEC §4.6: `{summary}` is the first 40 characters of the call's main argument, then `…` when cut. */
export const siblingErrored = (toolName: string, mainArgument: string): string => {
  const summary = mainArgument.length > 40 ? `${mainArgument.slice(0, 40)}…` : mainArgument
  return `<tool_use_error>Cancelled: parallel tool call ${toolName}(${summary}) errored</tool_use_error>`
}

/** SPEC §4.8: a call cancelled by a user interrupt or a hard abort. */
export const rejected =
  "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed."

/** SPEC §4.9: a dependency's result was an error. */
export const dependencyFailed = (id: string): string => `Dependency ${id} failed`
