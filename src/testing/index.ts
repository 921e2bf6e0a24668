/**
 * `effect-armature/testing`: what an application needs to test its own tools and agents deterministically — a scripted
 * model, a test engine under `TestClock`, batches run through the executor under `TestClock`, and a way to run one
 * tool with a fake context. See docs/library.md.
 */

export * as ExecutorTest from "./ExecutorTest.js"
export { type RunToolOptions, runTool, type ToolRun } from "./RunTool.js"
export * as ScriptedLanguageModel from "./ScriptedLanguageModel.js"
export * as TestEngine from "./TestEngine.js"
