/**
 * The permission mode a session is in when it changed after the start: ExitPlanMode, once the user approves the
 * plan, leaves plan mode for the mode the user chose. Kept in the session state; absent, the configured mode holds.
 */
import { Effect } from "effect"
import type { PermissionMode } from "./Permission.js"
import { type SessionState, stateKey } from "./Tool.js"

/** The mode the session switched to, if it did. */
export const sessionModeKey = stateKey<PermissionMode | undefined>("armature/permissionMode", undefined)

/** The mode in force, given the one switched to (if any): that one, else the configured one. */
export const modeOf = (switched: PermissionMode | undefined, configured: PermissionMode): PermissionMode =>
  switched ?? configured

/** The mode in force: the one switched to, else the configured one. */
export const effectiveMode = (state: SessionState, configured: PermissionMode): Effect.Effect<PermissionMode> =>
  Effect.map(state.get(sessionModeKey), (switched) => modeOf(switched, configured))
