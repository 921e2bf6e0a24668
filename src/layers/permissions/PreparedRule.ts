/**
 * A permission rule as the stages use it: the rule, with the anchor and pattern of a path rule resolved once per call.
 */
import type * as PermissionRule from "../../domain/PermissionRule.js"

/** A rule with its path anchor resolved (path rules only). */
export interface PreparedRule {
  readonly rule: PermissionRule.Rule
  readonly anchor?: string | undefined
  readonly pattern?: string | undefined
}
