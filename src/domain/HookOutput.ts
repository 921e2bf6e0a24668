/**
 * What one hook says: the Schema of a hook's JSON stdout, how an output becomes a verdict, and how
 * the verdicts of every hook of an event combine into one HookOutcome (deny > ask > allow, in config order).
 */
import { Either, ParseResult, Schema } from "effect"
import type { HookEvent, HookOutcome } from "./Hook.js"
import type { PermissionBehavior } from "./Permission.js"

// Exact optional fields: a wrong value is reported once ("Expected boolean"), not also as "Expected undefined".
const optional = <S extends Schema.Schema.All>(schema: S) => Schema.optionalWith(schema, { exact: true })

// A literal union reported as one issue (`Expected "allow" | "deny", actual "x"`), not one issue per member.
const oneOf = <const L extends ReadonlyArray<string>>(...literals: L) =>
  Schema.Literal(...literals).annotations({
    message: (issue) => ({
      message: `Expected ${literals.map((l) => JSON.stringify(l)).join(" | ")}, actual ${JSON.stringify(issue.actual)}`,
      override: true
    })
  })

/** A tool input a hook substitutes for the model's. */
export const UpdatedInput = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** `hookSpecificOutput` of a PreToolUse hook. */
export const PreToolUseOutput = Schema.Struct({
  hookEventName: Schema.Literal("PreToolUse"),
  permissionDecision: optional(oneOf("allow", "deny", "ask")),
  permissionDecisionReason: optional(Schema.String),
  updatedInput: optional(UpdatedInput),
  additionalContext: optional(Schema.String)
})

/** `hookSpecificOutput` of a PostToolUse hook; `updatedMCPToolOutput` replaces an MCP tool's result. */
export const PostToolUseOutput = Schema.Struct({
  hookEventName: Schema.Literal("PostToolUse"),
  additionalContext: optional(Schema.String),
  updatedMCPToolOutput: optional(Schema.Unknown)
})

/** `hookSpecificOutput` of a PostToolUseFailure hook. */
export const PostToolUseFailureOutput = Schema.Struct({
  hookEventName: Schema.Literal("PostToolUseFailure"),
  additionalContext: optional(Schema.String)
})

/** `hookSpecificOutput` of a PermissionRequest hook: it answers the permission prompt. */
export const PermissionRequestOutput = Schema.Struct({
  hookEventName: Schema.Literal("PermissionRequest"),
  decision: optional(
    Schema.Struct({
      behavior: oneOf("allow", "deny"),
      updatedInput: optional(UpdatedInput),
      message: optional(Schema.String),
      interrupt: optional(Schema.Boolean)
    })
  )
})

/** `hookSpecificOutput` of a UserPromptSubmit hook. */
export const UserPromptSubmitOutput = Schema.Struct({
  hookEventName: Schema.Literal("UserPromptSubmit"),
  additionalContext: optional(Schema.String)
})

/** `hookSpecificOutput` of a SessionStart hook. */
export const SessionStartOutput = Schema.Struct({
  hookEventName: Schema.Literal("SessionStart"),
  additionalContext: optional(Schema.String)
})

/** `hookSpecificOutput` of a Stop hook (nothing beyond its name). */
export const StopOutput = Schema.Struct({ hookEventName: Schema.Literal("Stop") })

/** `hookSpecificOutput` of a SubagentStop hook (nothing beyond its name). */
export const SubagentStopOutput = Schema.Struct({ hookEventName: Schema.Literal("SubagentStop") })

/** `hookSpecificOutput` of a PreCompact hook (nothing beyond its name). */
export const PreCompactOutput = Schema.Struct({ hookEventName: Schema.Literal("PreCompact") })

/** The event-specific part of a hook's output, by event. */
export const specificOutputs = {
  PreToolUse: PreToolUseOutput,
  PostToolUse: PostToolUseOutput,
  PostToolUseFailure: PostToolUseFailureOutput,
  PermissionRequest: PermissionRequestOutput,
  UserPromptSubmit: UserPromptSubmitOutput,
  SessionStart: SessionStartOutput,
  Stop: StopOutput,
  SubagentStop: SubagentStopOutput,
  PreCompact: PreCompactOutput
} as const

/** Any event-specific output. */
export const HookSpecificOutput = Schema.Union(
  PreToolUseOutput,
  PostToolUseOutput,
  PostToolUseFailureOutput,
  PermissionRequestOutput,
  UserPromptSubmitOutput,
  SessionStartOutput,
  StopOutput,
  SubagentStopOutput,
  PreCompactOutput
)
export type HookSpecificOutput = typeof HookSpecificOutput.Type

const commonFields = {
  continue: optional(Schema.Boolean),
  stopReason: optional(Schema.String),
  decision: optional(oneOf("approve", "block")),
  reason: optional(Schema.String),
  systemMessage: optional(Schema.String),
  suppressOutput: optional(Schema.Boolean)
}

/** The JSON object a hook may print on stdout (Claude Code's shape). */
export const HookOutput = Schema.Struct({ ...commonFields, hookSpecificOutput: optional(HookSpecificOutput) })
export type HookOutput = typeof HookOutput.Type

const CommonOutput = Schema.Struct({ ...commonFields, hookSpecificOutput: optional(Schema.Unknown) })

const formatIssues = (error: ParseResult.ParseError, prefix: ReadonlyArray<PropertyKey>): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .map((issue) => {
      const path = [...prefix, ...issue.path].map(String).join(".")
      return path === "" ? issue.message : `${path}: ${issue.message}`
    })
    .join("; ")

const hasEventName = (value: unknown): value is { readonly hookEventName: unknown } =>
  typeof value === "object" && value !== null && "hookEventName" in value

/**
 * Decodes a hook's JSON output for `event`. `hookSpecificOutput.hookEventName` must equal the event. The Left
 * is a one-line description of what is wrong, for a non-blocking error.
 */
export const decode = (event: HookEvent, json: unknown): Either.Either<HookOutput, string> =>
  Either.gen(function* () {
    const common = yield* Either.mapLeft(Schema.decodeUnknownEither(CommonOutput)(json, { errors: "all" }), (e) =>
      formatIssues(e, [])
    )
    const specific = common.hookSpecificOutput
    if (specific === undefined) return { ...common, hookSpecificOutput: undefined }
    if (!hasEventName(specific) || specific.hookEventName !== event) {
      const name = hasEventName(specific) ? JSON.stringify(specific.hookEventName) : "missing"
      return yield* Either.left(`hookSpecificOutput.hookEventName is ${name}, expected "${event}"`)
    }
    const decoded = yield* Either.mapLeft(
      Schema.decodeUnknownEither(specificOutputs[event] as Schema.Schema<HookSpecificOutput>)(specific, {
        errors: "all"
      }),
      (e) => formatIssues(e, ["hookSpecificOutput"])
    )
    return { ...common, hookSpecificOutput: decoded }
  })

/** What one hook said, before aggregation. `command` names the hook (its command, or an in-process hook's name). */
export interface HookVerdict {
  readonly command: string
  readonly decision?: PermissionBehavior | undefined
  readonly reason?: string | undefined
  /** A blocking error (exit 2, `decision: "block"`, PreToolUse deny): reported as `blocks`. */
  readonly block?: string | undefined
  readonly updatedInput?: unknown
  readonly continue?: boolean | undefined
  readonly stopReason?: string | undefined
  readonly systemMessage?: string | undefined
  readonly additionalContext?: string | undefined
  readonly updatedMCPToolOutput?: unknown
  /** A non-blocking error shown to the user. */
  readonly error?: string | undefined
}

/** The reason used when a hook blocks or denies without saying why. */
export const defaultBlockReason = "Blocked by hook"

/** Exit code 2: a block whose reason is `[{command}]: {stderr}`; it counts as deny (stricter). */
export const blockedByExit = (command: string, stderr: string): HookVerdict => {
  const text = stderr.trimEnd()
  const reason = `[${command}]: ${text === "" ? "No stderr output" : text}`
  return { command, decision: "deny", reason, block: reason }
}

/** A hook that failed without blocking: only a non-blocking error. */
export const nonBlocking = (command: string, message: string): HookVerdict => ({
  command,
  error: `[${command}]: ${message}`
})

/** A hook that failed on an event where failure must deny (stricter): a deny with `reason`. */
export const denied = (command: string, reason: string): HookVerdict => ({ command, decision: "deny", reason })

/** The events on which a hook that times out, cannot start or dies denies instead of being ignored (stricter). */
export const failClosedEvents: ReadonlySet<HookEvent> = new Set(["PreToolUse", "PermissionRequest"])

/**
 * A hook that could not give an answer (cannot be started, exit 126/127, killed by a signal, timed out, defect):
 * on a guarding event a deny whose reason names the hook (`[{command}]: {message}`), elsewhere a non-blocking
 * error with the same text.
 */
export const failed = (event: HookEvent, command: string, message: string): HookVerdict =>
  failClosedEvents.has(event) ? denied(command, `[${command}]: ${message}`) : nonBlocking(command, message)

const severity = (decision: PermissionBehavior | undefined): number =>
  decision === "deny" ? 3 : decision === "ask" ? 2 : decision === "allow" ? 1 : 0

const stricter = (
  a: PermissionBehavior | undefined,
  b: PermissionBehavior | undefined
): PermissionBehavior | undefined => (severity(b) > severity(a) ? b : a)

/** Reads a decoded output as a verdict for `event`. */
export const fromOutput = (event: HookEvent, command: string, output: HookOutput): HookVerdict => {
  const specific = output.hookSpecificOutput
  let decision: PermissionBehavior | undefined
  let reason: string | undefined
  let block: string | undefined
  let updatedInput: unknown
  let additionalContext: string | undefined
  let updatedMCPToolOutput: unknown
  let stop = output.continue === false
  if (output.decision === "block") {
    decision = "deny"
    reason = output.reason ?? defaultBlockReason
    block = reason
  } else if (output.decision === "approve" && event === "PreToolUse") {
    decision = "allow"
    reason = output.reason
  }
  if (specific !== undefined) {
    if ("additionalContext" in specific) additionalContext = specific.additionalContext
    if (specific.hookEventName === "PreToolUse") {
      updatedInput = specific.updatedInput
      const said = specific.permissionDecision
      if (said !== undefined && severity(said) > severity(decision)) {
        decision = said
        reason = specific.permissionDecisionReason ?? output.reason
        if (said === "deny") {
          reason = reason ?? defaultBlockReason
          block = reason
        }
      }
    } else if (specific.hookEventName === "PostToolUse") {
      updatedMCPToolOutput = specific.updatedMCPToolOutput
    } else if (specific.hookEventName === "PermissionRequest" && specific.decision !== undefined) {
      const said = specific.decision
      decision = stricter(decision, said.behavior)
      if (decision === said.behavior) reason = said.message ?? (said.behavior === "deny" ? "Denied by hook" : undefined)
      updatedInput = said.updatedInput
      if (said.interrupt === true) stop = true
    }
  }
  return {
    command,
    decision,
    reason,
    block,
    updatedInput: decision === "deny" ? undefined : updatedInput,
    continue: stop ? false : undefined,
    stopReason: output.stopReason,
    systemMessage: output.systemMessage,
    additionalContext,
    updatedMCPToolOutput
  }
}

/** The events whose plain (non-JSON) stdout is context for the model. */
export const plainOutputIsContext: ReadonlySet<HookEvent> = new Set(["UserPromptSubmit", "SessionStart"])

/**
 * A hook's stdout read as JSON: plain text (not starting with `{`), an object, or text that starts like a JSON
 * decision and does not parse as one (cut off, garbage) — with the parser's complaint.
 */
const parseJsonObject = (
  text: string
):
  | { readonly _tag: "Plain" }
  | { readonly _tag: "Object"; readonly value: unknown }
  | { readonly _tag: "Broken"; readonly reason: string } => {
  const trimmed = text.trim()
  if (!trimmed.startsWith("{")) return { _tag: "Plain" }
  const parsed = Either.try({
    try: () => JSON.parse(trimmed) as unknown,
    catch: (e) => (e instanceof Error ? e.message : String(e))
  })
  if (Either.isLeft(parsed)) return { _tag: "Broken", reason: parsed.left }
  return typeof parsed.right === "object" && parsed.right !== null
    ? { _tag: "Object", value: parsed.right }
    : { _tag: "Broken", reason: "not a JSON object" }
}

/**
 * Reads the stdout of a hook that exited 0: a JSON object is decoded and read as a verdict; anything not starting
 * with `{` is plain output, ignored except as context for UserPromptSubmit/SessionStart. Output meant as a decision
 * that is not one — it starts with `{` but does not parse (cut off, garbage), or fails the schema — is a failed
 * hook (`failed`): a deny naming the problem on PreToolUse and PermissionRequest, a non-blocking error elsewhere.
 */
export const fromStdout = (event: HookEvent, command: string, stdout: string): HookVerdict => {
  const json = parseJsonObject(stdout)
  if (json._tag === "Plain") {
    const text = stdout.trim()
    return plainOutputIsContext.has(event) && text !== "" ? { command, additionalContext: text } : { command }
  }
  if (json._tag === "Broken") {
    return failed(event, command, `hook output starts like a JSON decision but does not parse: ${json.reason}`)
  }
  return Either.match(decode(event, json.value), {
    onLeft: (message) => failed(event, command, `hook output does not match the schema: ${message}`),
    onRight: (output) => fromOutput(event, command, output)
  })
}

/**
 * Combines verdicts given in config order (whatever order the hooks finished in): the strictest decision wins
 * (deny > ask > allow) with the reason of the first hook that made it; `updatedInput` and `updatedMCPToolOutput`
 * come from the first hook that gave one (none when the outcome is deny); `continue` is false if any hook said so.
 */
export const aggregate = (verdicts: ReadonlyArray<HookVerdict>): HookOutcome => {
  const decision = verdicts.reduce<PermissionBehavior | undefined>((acc, v) => stricter(acc, v.decision), undefined)
  const deciding = verdicts.find((v) => decision !== undefined && v.decision === decision)
  const stopping = verdicts.filter((v) => v.continue === false)
  const present = <A>(values: ReadonlyArray<A | undefined>): Array<A> => values.filter((x): x is A => x !== undefined)
  return {
    decision,
    reason: deciding?.reason,
    blocks: verdicts.flatMap((v) => (v.block === undefined ? [] : [{ command: v.command, reason: v.block }])),
    updatedInput: decision === "deny" ? undefined : verdicts.find((v) => v.updatedInput !== undefined)?.updatedInput,
    continue: stopping.length === 0,
    stopReason: stopping.find((v) => v.stopReason !== undefined)?.stopReason,
    systemMessages: present(verdicts.map((v) => v.systemMessage)),
    additionalContext: present(verdicts.map((v) => v.additionalContext)),
    updatedMCPToolOutput: verdicts.find((v) => v.updatedMCPToolOutput !== undefined)?.updatedMCPToolOutput,
    errors: present(verdicts.map((v) => v.error))
  }
}
