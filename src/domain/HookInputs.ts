/**
 * The JSON a hook receives on stdin, built in one place for the executor's tool events and the agent loop's
 * session events.
 */
import type { HookEvent, HookInput } from "./Hook.js"

/** The session fields every hook input carries. */
export interface HookSession {
  readonly sessionId: string
  readonly transcriptPath: string
  readonly cwd: string
  readonly permissionMode: string
}

/** The input of a hook for `event`, with the event's own fields in `extra`. */
export const hookInput = (session: HookSession, event: HookEvent, extra: Record<string, unknown> = {}): HookInput => ({
  hook_event_name: event,
  session_id: session.sessionId,
  transcript_path: session.transcriptPath,
  cwd: session.cwd,
  permission_mode: session.permissionMode,
  ...extra
})

/** The input of a tool event's hook (PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure). */
export const toolHookInput = (
  session: HookSession,
  event: HookEvent,
  call: { readonly toolName: string; readonly input: unknown; readonly toolUseId: string },
  extra: Record<string, unknown> = {}
): HookInput =>
  hookInput(session, event, { tool_name: call.toolName, tool_input: call.input, tool_use_id: call.toolUseId, ...extra })
