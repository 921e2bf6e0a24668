/**
 * The engine for tests: `Armature.layerNode` with nothing read from the machine (no settings files, results kept
 * in memory, nobody to ask), a scripted model, and Effect's `TestClock` (from `TestContext`), so every delay, tool
 * timeout and scripted block arrives at a virtual time the test moves with `TestClock.adjust`.
 */
import { Layer, TestContext } from "effect"
import * as Armature from "../Armature.js"
import * as PermissionPolicy from "../services/PermissionPolicy.js"
import * as ScriptedLanguageModel from "./ScriptedLanguageModel.js"

/** The options of `Armature.layer`, plus a script for the model and a switch that allows every call. */
export interface Options<E = never> extends Armature.Options<E> {
  /** The turns the model plays (see `ScriptedLanguageModel`); replaces `model`. */
  readonly script?: ReadonlyArray<ScriptedLanguageModel.ScriptStep> | undefined
  /** Scripts for sub-agents' and compaction requests (see `ScriptedLanguageModel.lanes`). */
  readonly lanes?: ScriptedLanguageModel.Lanes | undefined
  /** Allow every call without consulting rules or modes (default false: the rule policy decides). */
  readonly allowAll?: boolean | undefined
}

/** Everything the test engine provides. */
export type Services = Armature.NodeServices | ScriptedLanguageModel.ScriptedRequests

/**
 * The test engine. Defaults: no settings files (`settingSources: []`), large results in memory, the headless
 * approver, a scripted model (an empty script unless given), the built-in tools, and `TestContext.TestContext`.
 */
export const layer = <E = never>(options: Options<E> = {}): Layer.Layer<Services, E | Armature.EngineError> => {
  const scripted = ScriptedLanguageModel.layer(options.script ?? [], options.lanes)
  const engine = Armature.layerNode<E>({
    settingSources: [],
    resultStore: "memory",
    ...options,
    model: options.script === undefined && options.model !== undefined ? options.model : scripted,
    overrides: {
      ...(options.allowAll === true ? { policy: PermissionPolicy.allowAll } : {}),
      ...options.overrides
    }
  })
  return Layer.mergeAll(engine, scripted).pipe(Layer.provideMerge(TestContext.TestContext))
}
