/**
 * Hook events, inputs and the aggregated outcome of running an event's hooks (Claude Code's hook protocol).
 */
import type { PermissionBehavior } from "./Permission.js"

/** The hook events. */
export type HookEvent =
  | "PreToolUse"
  | "PostToolUse"
  | "PostToolUseFailure"
  | "PermissionRequest"
  | "SessionStart"
  | "UserPromptSubmit"
  | "Stop"
  | "SubagentStop"
  | "PreCompact"

/** The JSON object a hook receives on stdin (fields beyond the common ones depend on the event). */
export interface HookInput {
  readonly hook_event_name: HookEvent
  readonly session_id: string
  readonly transcript_path: string
  readonly cwd: string
  readonly permission_mode: string
  readonly tool_name?: string
  readonly tool_input?: unknown
  readonly tool_use_id?: string
  readonly tool_response?: unknown
  readonly error?: string
  readonly is_interrupt?: boolean
  readonly prompt?: string
  readonly [key: string]: unknown
}

/** A blocking error from one hook (exit 2, or `decision: "block"`). */
export interface HookBlock {
  readonly command: string
  readonly reason: string
}

/** The combined outcome of every hook that ran for one event. */
export interface HookOutcome {
  /** deny > ask > allow across hooks; an exit-2 block counts as deny. */
  readonly decision: PermissionBehavior | undefined
  readonly reason: string | undefined
  readonly blocks: ReadonlyArray<HookBlock>
  readonly updatedInput: unknown | undefined
  /** False when a hook said `continue: false`: the turn stops after this batch. */
  readonly continue: boolean
  readonly stopReason: string | undefined
  readonly systemMessages: ReadonlyArray<string>
  readonly additionalContext: ReadonlyArray<string>
  readonly updatedMCPToolOutput: unknown | undefined
  /** Non-blocking errors shown to the user. */
  readonly errors: ReadonlyArray<string>
}

/** The outcome when no hook ran. */
export const emptyOutcome: HookOutcome = {
  decision: undefined,
  reason: undefined,
  blocks: [],
  updatedInput: undefined,
  continue: true,
  stopReason: undefined,
  systemMessages: [],
  additionalContext: [],
  updatedMCPToolOutput: undefined,
  errors: []
}
