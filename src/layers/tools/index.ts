/**
 * Every built-in tool's layer, merged: compose over a ToolRegistry to get the built-in tool set.
 */
import { Layer } from "effect"
import * as Sleep from "./Sleep.js"

/** The built-in tools. */
export const layer = Layer.mergeAll(Sleep.layer)
