/**
 * What happened to each call, as transcript lines: state changes with wall-clock times, permission decisions with
 * their traces, and the model stream's start and end. `run` writes them into its transcript next to the messages;
 * `exec --transcript` writes the same lines (and the calls and results as an assistant and a user message). The
 * timeline (`Timeline.ts`) is drawn from these lines. See docs/observability.md.
 */
import { Effect, Layer } from "effect"
import type { ExecutorEvent, PolicyEvent, PolicyNote } from "../../domain/ExecutorEvent.js"
import type { PermissionDecision, TraceStep } from "../../domain/Permission.js"
import { PermissionPolicy, type PermissionRequest } from "../../services/PermissionPolicy.js"

/** A call changed state (`queued`, `executing`, `completed`, `yielded`) at `at` (epoch milliseconds). */
export interface StateRecord {
  readonly type: "tool_state"
  readonly tool_use_id: string
  readonly state: string
  readonly at: number
  /** The version of the tool the call ran (on `executing`, for a versioned tool). */
  readonly version?: string
}

/** The permission decision of a call, with its trace. */
export interface DecisionRecord {
  readonly type: "permission_decision"
  readonly tool_use_id: string
  readonly tool_name: string
  readonly behavior: string
  readonly reason: string
  readonly rule: string | null
  readonly source: string | null
  readonly trace: ReadonlyArray<TraceStep>
  readonly at: number
}

/** The model started or finished streaming a message. */
export interface ModelRecord {
  readonly type: "model_stream"
  readonly phase: "start" | "end"
  readonly model: string
  readonly at: number
}

/** What a tool policy did to a call (a retry, a rate-limit wait, an open circuit; docs/tools.md). */
export type PolicyRecord = PolicyNote & {
  readonly type: "tool_policy"
  readonly tool_use_id: string
  readonly at: number
}

/**
 * The record of an executor event (state and policy events only), given the epoch time its execution started.
 */
export const stateRecord = (event: ExecutorEvent, startedAt: number): StateRecord | PolicyRecord | undefined => {
  if (event.type === "state") {
    const at = startedAt + event.t_ms
    return event.version === undefined
      ? { type: "tool_state", tool_use_id: event.tool_use_id, state: event.state, at }
      : { type: "tool_state", tool_use_id: event.tool_use_id, state: event.state, at, version: event.version }
  }
  return event.type === "policy" ? policyRecord(event, startedAt + event.t_ms) : undefined
}

/** The record of a policy event that happened at `at` (epoch milliseconds). */
export const policyRecord = (event: PolicyEvent, at: number): PolicyRecord => {
  const { t_ms: _t, type: _type, ...note } = event
  return { ...note, type: "tool_policy", at }
}

/** One line for a policy record: what happened and when, for the timeline. */
export const policyLine = (record: PolicyNote): string => {
  switch (record.action) {
    case "retry":
      return `retry ${record.attempt} in ${record.delay_ms} ms (${record.key}): ${record.reason}`
    case "rate_limit":
      return `waited ${record.waited_ms} ms for the rate limit (${record.key})`
    case "circuit_open":
      return `refused: circuit open (${record.key})${record.retry_at === null ? "" : ` until ${new Date(record.retry_at).toISOString()}`}`
  }
}

/** The record of a decision. */
export const decisionRecord = (
  request: PermissionRequest,
  decision: PermissionDecision,
  at: number
): DecisionRecord => ({
  type: "permission_decision",
  tool_use_id: request.toolUseId,
  tool_name: request.tool.name,
  behavior: decision.behavior,
  reason: decision.reason,
  rule: decision.rule,
  source: decision.source,
  trace: decision.trace,
  at
})

/** Wraps a policy layer so that each decision is also handed to `onDecision` (the policy itself is unchanged). */
export const recordingPolicy = <E, R>(
  inner: Layer.Layer<PermissionPolicy, E, R>,
  onDecision: (request: PermissionRequest, decision: PermissionDecision) => Effect.Effect<void>
): Layer.Layer<PermissionPolicy, E, R> =>
  Layer.effect(
    PermissionPolicy,
    Effect.map(PermissionPolicy, (policy) =>
      PermissionPolicy.of({
        ...policy,
        decide: (request) => Effect.tap(policy.decide(request), (decision) => onDecision(request, decision))
      })
    )
  ).pipe(Layer.provide(inner))
