/**
 * The layers the CLI programs run on: the registry with the built-in tools, and a session.
 */
import { Layer } from "effect"
import * as ToolRegistryLive from "../layers/ToolRegistryLive.js"
import * as BuiltinTools from "../layers/tools/index.js"
import * as Session from "../services/Session.js"

/** The registry with every built-in tool registered, for a session in `cwd`. */
export const toolsLayer = (cwd: string) =>
  BuiltinTools.layer.pipe(Layer.provideMerge(ToolRegistryLive.layer), Layer.provideMerge(Session.layer({ cwd })))
