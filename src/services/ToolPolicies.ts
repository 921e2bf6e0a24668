/**
 * Where the executor reads the settings' tool policies (docs/tools.md, "Tool policies"). Read at every call, so an
 * implementation whose table changes (a reloaded settings file) applies from the next call. Without this service the
 * executor reads `toolPolicies` from the Settings service, when there is one.
 */
import { Context, Effect, Layer } from "effect"
import * as ToolPolicy from "../domain/ToolPolicy.js"

/** The port. */
export class ToolPolicies extends Context.Tag("armature/ToolPolicies")<
  ToolPolicies,
  {
    /** The policies now, in precedence order. */
    readonly current: Effect.Effect<ToolPolicy.Table>
  }
>() {}

/** Policies given as a value, keyed like the `toolPolicies` settings section. */
export const layerStatic = (section: ToolPolicy.PoliciesSection): Layer.Layer<ToolPolicies> =>
  Layer.succeed(ToolPolicies, ToolPolicies.of({ current: Effect.succeed(ToolPolicy.tableOf(section)) }))
