/**
 * WebSearch: Anthropic's server tool `web_search`, which the API runs itself — the model's `server_tool_use` and the
 * `web_search_tool_result` blocks come back in the assistant message and are kept as they are. Armature only decides
 * whether to offer it (the `WebSearch` permission rule; no call passes through the permission pipeline, so an ask
 * cannot be put to anyone and it is not offered) and with which limits (the settings' `webSearch`). See
 * docs/tools.md.
 */
import { Either, ParseResult, Schema } from "effect"
import type { PermissionMode } from "./Permission.js"
import type * as PermissionRule from "./PermissionRule.js"

/** The tool's definition in a request's `tools` array. */
export interface ServerTool {
  readonly type: "web_search_20250305"
  readonly name: "web_search"
  readonly max_uses?: number
  readonly allowed_domains?: ReadonlyArray<string>
  readonly blocked_domains?: ReadonlyArray<string>
}

/** The settings' `webSearch` object. */
export const Config = Schema.Struct({
  maxUses: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.positive())),
  allowedDomains: Schema.optional(Schema.Array(Schema.String)),
  blockedDomains: Schema.optional(Schema.Array(Schema.String))
})

/** The decoded `webSearch` settings. */
export type Config = typeof Config.Type

/** Decodes the settings' `webSearch` value (absent: no limits); an error names the field. */
export const decodeConfig = (value: unknown): Either.Either<Config, string> => {
  if (value === undefined) return Either.right({})
  return Schema.decodeUnknownEither(Config, { onExcessProperty: "error" })(value).pipe(
    Either.mapLeft((e) => `webSearch: ${ParseResult.TreeFormatter.formatErrorSync(e).replace(/\n+/g, " ")}`),
    Either.flatMap((config) =>
      config.allowedDomains !== undefined && config.blockedDomains !== undefined
        ? Either.left("webSearch: give allowedDomains or blockedDomains, not both (the API accepts one)")
        : Either.right(config)
    )
  )
}

/** The tool's definition with the configured limits. */
export const definition = (config: Config): ServerTool => ({
  type: "web_search_20250305",
  name: "web_search",
  ...(config.maxUses === undefined ? {} : { max_uses: config.maxUses }),
  ...(config.allowedDomains === undefined ? {} : { allowed_domains: config.allowedDomains }),
  ...(config.blockedDomains === undefined ? {} : { blocked_domains: config.blockedDomains })
})

/** Whether the tool is offered, and a note for the user when it is not although they may have expected it. */
export interface Offer {
  readonly tool: ServerTool | undefined
  readonly note: string | undefined
}

const whole = (rules: ReadonlyArray<PermissionRule.Rule>) =>
  rules.find((r) => r.tool === "WebSearch" && r.content === undefined)

/**
 * Decides the offer from the rules and the mode: a `WebSearch` deny rule, or an ask rule (a search runs on the API's
 * side, so nobody could be asked), means it is not offered; an allow rule or bypassPermissions mode offers it;
 * without a rule it is not offered (unknown means ask), with a note when the settings configure it.
 */
export const offer = (options: {
  readonly allow: ReadonlyArray<PermissionRule.Rule>
  readonly ask: ReadonlyArray<PermissionRule.Rule>
  readonly deny: ReadonlyArray<PermissionRule.Rule>
  readonly mode: PermissionMode
  readonly config: Config
  readonly configured: boolean
}): Offer => {
  if (whole(options.deny) !== undefined) return { tool: undefined, note: undefined }
  const ask = whole(options.ask)
  if (ask !== undefined) {
    return {
      tool: undefined,
      note: `WebSearch is not offered: rule ${ask.text} (${ask.source}) asks, and a search runs on the API's side where nobody can be asked; allow it with the rule WebSearch`
    }
  }
  if (whole(options.allow) !== undefined || options.mode === "bypassPermissions") {
    return { tool: definition(options.config), note: undefined }
  }
  return {
    tool: undefined,
    note: options.configured
      ? "WebSearch is configured (webSearch) but not offered: no allow rule WebSearch (a search cannot be asked for)"
      : undefined
  }
}
