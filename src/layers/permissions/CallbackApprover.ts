/**
 * An Approver that asks a function, like the SDK's `canUseTool` (docs/library.md). Approvals are bound to the call's id
 * and a hash of its input: a recorded answer is reused only for the very same call with the very same input.
 */
import * as Crypto from "node:crypto"
import { Effect, Either, Layer } from "effect"
import * as PermissionRule from "../../domain/PermissionRule.js"
import { type Approval, Approver } from "../../services/Approver.js"
import type { ElicitationAnswer, ElicitationRequest, SamplingRequest } from "../../services/McpClients.js"
import type { PermissionRequest } from "../../services/PermissionPolicy.js"
import * as Settings from "../../services/Settings.js"

const stable = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(stable)
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, stable((value as Record<string, unknown>)[k])])
    )
  }
  return value
}

/** A hash of a call's tool and input, independent of key order. */
export const inputHash = (toolName: string, input: unknown): string =>
  Crypto.createHash("sha256")
    .update(JSON.stringify(stable({ tool: toolName, input })) ?? "")
    .digest("hex")

/** Answers recorded per call id, each with the hash of the input it was given for. */
export interface ApprovalLedger {
  /** The recorded answer for this call, only when its id and input hash both match. */
  readonly lookup: (request: PermissionRequest) => Approval | undefined
  readonly record: (request: PermissionRequest, approval: Approval) => void
}

/** Makes an empty ledger. */
export const makeLedger = (): ApprovalLedger => {
  const entries = new Map<string, { readonly hash: string; readonly approval: Approval }>()
  return {
    lookup: (request) => {
      const entry = entries.get(request.toolUseId)
      return entry !== undefined && entry.hash === inputHash(request.tool.name, request.input)
        ? entry.approval
        : undefined
    },
    record: (request, approval) => {
      entries.set(request.toolUseId, { hash: inputHash(request.tool.name, request.input), approval })
    }
  }
}

/** What the callback answers. `updatedPermissions` are allow rules added for the rest of the session. */
export type CallbackResult =
  | {
      readonly behavior: "allow"
      readonly updatedInput?: unknown
      readonly updatedPermissions?: ReadonlyArray<string>
    }
  | { readonly behavior: "deny"; readonly message: string }

/** What the callback is told besides the tool name and input. */
export interface CallbackOptions {
  readonly toolUseId: string
  /** Why the policy asks. */
  readonly reason: string
}

/** The callback: an Effect or a Promise. */
export type CanUseTool = (
  toolName: string,
  input: unknown,
  options: CallbackOptions
) => Effect.Effect<CallbackResult> | Promise<CallbackResult>

const toEffect = (result: Effect.Effect<CallbackResult> | Promise<CallbackResult>): Effect.Effect<CallbackResult> =>
  Effect.isEffect(result)
    ? result
    : Effect.tryPromise(() => result).pipe(
        Effect.catchAll((error) =>
          Effect.succeed<CallbackResult>({
            behavior: "deny",
            message: `The permission callback failed: ${error.cause instanceof Error ? error.cause.message : String(error.cause)}`
          })
        )
      )

/**
 * Callbacks for what MCP servers ask of the user (see docs/mcp.md). Without `onElicitation` every form is declined;
 * without `onSampling` every sampling request whose server's policy is "ask" is refused. A callback that throws or
 * rejects declines (or refuses).
 */
export interface McpCallbacks {
  /** A server's form (`elicitation/create`), as data: answer accept with the content, decline or cancel. */
  readonly onElicitation?:
    | ((request: ElicitationRequest) => Effect.Effect<ElicitationAnswer> | Promise<ElicitationAnswer>)
    | undefined
  /** A server's request to use the language model: true allows it. */
  readonly onSampling?: ((request: SamplingRequest) => Effect.Effect<boolean> | Promise<boolean>) | undefined
}

const settle = <A>(run: () => Effect.Effect<A> | Promise<A>, fallback: A): Effect.Effect<A> =>
  Effect.suspend(() => {
    const result = run()
    return Effect.isEffect(result) ? result : Effect.tryPromise(() => result)
  }).pipe(
    Effect.catchAll(() => Effect.succeed(fallback)),
    Effect.catchAllDefect(() => Effect.succeed(fallback))
  )

/** The Approver members that pass MCP's questions to the callbacks. */
export const mcpMembers = (callbacks: McpCallbacks) => {
  const { onElicitation, onSampling } = callbacks
  return {
    ...(onElicitation === undefined
      ? {}
      : {
          elicit: (request: ElicitationRequest) =>
            settle<ElicitationAnswer>(() => onElicitation(request), { action: "decline" })
        }),
    ...(onSampling === undefined
      ? {}
      : { approveSampling: (request: SamplingRequest) => settle(() => onSampling(request), false) })
  }
}

/** Makes the callback approver. */
export const make = (canUseTool: CanUseTool, callbacks: McpCallbacks = {}) =>
  Effect.gen(function* () {
    const settings = yield* Settings.Settings
    const ledger = makeLedger()
    return Approver.of({
      ...mcpMembers(callbacks),
      approve: (request, decision) =>
        Effect.gen(function* () {
          const recorded = ledger.lookup(request)
          if (recorded !== undefined) return recorded
          const result = yield* Effect.suspend(() =>
            toEffect(
              canUseTool(request.tool.name, request.input, { toolUseId: request.toolUseId, reason: decision.reason })
            )
          ).pipe(
            Effect.catchAllDefect((defect) =>
              Effect.succeed<CallbackResult>({
                behavior: "deny",
                message: `The permission callback failed: ${String(defect)}`
              })
            )
          )
          let approval: Approval
          if (result.behavior === "allow") {
            const rules: Array<PermissionRule.Rule> = []
            for (const text of result.updatedPermissions ?? []) {
              const parsed = PermissionRule.parse(text, {
                behavior: "allow",
                source: "session",
                root: settings.projectDir
              })
              if (Either.isRight(parsed)) rules.push(parsed.right)
            }
            if (rules.length > 0)
              yield* Settings.addSessionRules(rules).pipe(Effect.provideService(Settings.Settings, settings))
            approval =
              result.updatedInput === undefined
                ? { _tag: "Approved" }
                : { _tag: "Approved", updatedInput: result.updatedInput }
          } else {
            approval = { _tag: "Rejected", message: result.message }
          }
          ledger.record(request, approval)
          return approval
        })
    })
  })

/** The callback approver as a layer (needs Settings for session rules). */
export const layer = (canUseTool: CanUseTool, callbacks: McpCallbacks = {}) =>
  Layer.effect(Approver, make(canUseTool, callbacks))
