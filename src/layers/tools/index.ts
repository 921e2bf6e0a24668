/**
 * Every built-in tool's layer, merged: compose over a ToolRegistry to get the built-in tool set.
 */
import { Layer } from "effect"
import * as FileStateCacheLive from "../files/FileStateCacheLive.js"
import * as AskUserQuestion from "./AskUserQuestion.js"
import * as Bash from "./Bash.js"
import * as Edit from "./Edit.js"
import * as ExitPlanMode from "./ExitPlanMode.js"
import * as Glob from "./Glob.js"
import * as Grep from "./Grep.js"
import * as NotebookEdit from "./NotebookEdit.js"
import * as Read from "./Read.js"
import * as Sleep from "./Sleep.js"
import * as TodoWrite from "./TodoWrite.js"
import * as ToolSearch from "./ToolSearch.js"
import * as WebFetch from "./WebFetch.js"
import * as Write from "./Write.js"

/** The built-in tools. */
export const layer = Layer.mergeAll(
  Layer.provide(Layer.mergeAll(Read.layer, Write.layer, Edit.layer, NotebookEdit.layer), FileStateCacheLive.layer),
  AskUserQuestion.layer,
  Bash.layerWithShells,
  ExitPlanMode.layer,
  Glob.layer,
  Grep.layer,
  Sleep.layer,
  TodoWrite.layer,
  ToolSearch.layer,
  WebFetch.layer
)
