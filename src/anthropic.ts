/**
 * `effect-armature/anthropic`: the LanguageModel over the Anthropic Messages API, built on `@anthropic-ai/sdk` (an optional
 * peer dependency). `Armature.layer({ model: "anthropic" })` loads it by itself; import this module to configure it
 * directly (API key, base URL, retries, timeouts).
 */

export * as AnthropicLanguageModel from "./layers/model/AnthropicLanguageModel.js"
