/**
 * A durable session's tool versions (docs/durable.md): the active version of each versioned tool when the session
 * started is stored as a step of its workflow, and pinned in the registry whenever the session runs, so a session
 * resumed after a newer version was registered (or after the settings' `toolVersions` changed) goes on with the
 * versions it started with.
 */
import { Effect, Schema } from "effect"
import { ToolRegistry } from "../../services/ToolRegistry.js"
import * as DurableStep from "./DurableStep.js"

/** The step that holds the versions. */
export const stepName = "tool-versions"

const Versions = Schema.Record({ key: Schema.String, value: Schema.String })

/** The active version of each versioned tool in `registry`. */
export const activeVersions = (registry: ToolRegistry["Type"]): Effect.Effect<Readonly<Record<string, string>>> =>
  Effect.map(registry.all, (tools) =>
    Object.fromEntries(tools.flatMap((t) => (t.version === undefined ? [] : [[t.name, t.version] as const])))
  )

/** Stores the versions of the session's start (first run) or reads them back (a resumed run), and pins them. */
export const pin: Effect.Effect<
  Readonly<Record<string, string>>,
  never,
  ToolRegistry | DurableStep.StepContext
> = Effect.gen(function* () {
  const registry = yield* ToolRegistry
  const versions = yield* DurableStep.once(stepName, Versions, activeVersions(registry))
  yield* registry.pinVersions(versions)
  return versions
})
