/**
 * Failure policies of a tool (docs/tools.md, "Tool policies"): retries with backoff for transient failures, a
 * timeout, a rate limit and a circuit breaker. A policy comes from the tool's definition (`Tool.make`'s `policy`) or
 * from settings (`"toolPolicies"`, keyed like permission rules: a tool name, `mcp__server`, `mcp__server__*`). This
 * module is pure: the Schemas, the resolution of a tool's effective policy, the circuit breaker as a step function,
 * the backoff's `Schedule` and the texts the model reads. The executor applies them (layers/executor/CallPolicies.ts).
 */
import { Duration, Schedule, Schema } from "effect"

const positiveInt = Schema.Number.pipe(Schema.int(), Schema.positive())
const nonNegativeInt = Schema.Number.pipe(Schema.int(), Schema.nonNegative())

/** Only the listed fields: a misspelt field is an error naming it, not a silently ignored policy. */
const onlyFields =
  (fields: ReadonlyArray<string>) =>
  (value: object): true | string => {
    const unknown = Object.keys(value).find((k) => !fields.includes(k))
    return unknown === undefined
      ? true
      : `unknown field ${JSON.stringify(unknown)} (expected ${fields.map((f) => JSON.stringify(f)).join(", ")})`
  }

/** How the wait between attempts grows. */
export const backoffs = ["exponential", "linear", "constant"] as const
export type Backoff = (typeof backoffs)[number]

/** Retries of transient failures: `times` more attempts at most, waiting `baseMs` grown by `backoff` (capped at `maxMs`). */
export const RetryPolicy = Schema.Struct({
  times: nonNegativeInt,
  backoff: Schema.optional(Schema.Literal(...backoffs)),
  baseMs: Schema.optional(nonNegativeInt),
  maxMs: Schema.optional(positiveInt)
}).pipe(Schema.filter(onlyFields(["times", "backoff", "baseMs", "maxMs"])))
export type RetryPolicy = typeof RetryPolicy.Type

/** At most `limit` calls started per `intervalMs` (a token bucket: a burst of `limit`, then one per interval/limit). */
export const RateLimitPolicy = Schema.Struct({ limit: positiveInt, intervalMs: positiveInt }).pipe(
  Schema.filter(onlyFields(["limit", "intervalMs"]))
)
export type RateLimitPolicy = typeof RateLimitPolicy.Type

/** After `failures` failed calls in a row the circuit opens: calls fail at once for `resetMs`, then one is tried. */
export const CircuitBreakerPolicy = Schema.Struct({ failures: positiveInt, resetMs: positiveInt }).pipe(
  Schema.filter(onlyFields(["failures", "resetMs"]))
)
export type CircuitBreakerPolicy = typeof CircuitBreakerPolicy.Type

/** A tool's policy; every part optional. */
export const Policy = Schema.Struct({
  retry: Schema.optional(RetryPolicy),
  timeoutMs: Schema.optional(positiveInt),
  rateLimit: Schema.optional(RateLimitPolicy),
  circuitBreaker: Schema.optional(CircuitBreakerPolicy)
}).pipe(Schema.filter(onlyFields(["retry", "timeoutMs", "rateLimit", "circuitBreaker"])))
export type Policy = typeof Policy.Type

const keyPattern = /^(?:mcp__[A-Za-z0-9_-]+?(?:__(?:\*|[A-Za-z0-9_.-]+))?|[A-Za-z0-9_.-]+)$/

/** Whether `key` names tools the way a permission rule does: a tool name, `mcp__server` or `mcp__server__*`. */
export const isKey = (key: string): boolean => keyPattern.test(key)

/**
 * The `toolPolicies` settings section: policies by key, each key checked like a permission rule's tool part (a
 * Record's key Schema only selects keys, so the keys are checked by a filter of the whole section).
 */
export const PoliciesSection = Schema.Record({ key: Schema.String, value: Policy }).pipe(
  Schema.filter((section) => {
    const bad = Object.keys(section).find((key) => !isKey(key))
    return bad === undefined
      ? true
      : `invalid tool policy key ${JSON.stringify(bad)}: expected a tool name, mcp__server or mcp__server__*`
  })
)
export type PoliciesSection = typeof PoliciesSection.Type

/** The settings' policies in precedence order (later entries win over earlier ones for the same key). */
export type Table = ReadonlyArray<readonly [key: string, policy: Policy]>

/** The table of a settings section (absent: empty). */
export const tableOf = (section: PoliciesSection | undefined): Table =>
  section === undefined ? [] : Object.entries(section)

const serverOf = (name: string): string | undefined => {
  if (!name.startsWith("mcp__")) return undefined
  const rest = name.slice(5)
  const end = rest.indexOf("__")
  return end === -1 ? rest : rest.slice(0, end)
}

/**
 * How specifically `key` names a tool: 2 for its name or an alias, 1 for its server (`mcp__server`,
 * `mcp__server__*`), 0 when it does not name it.
 */
export const specificity = (key: string, tool: { readonly name: string; readonly aliases: ReadonlyArray<string> }) => {
  const names = [tool.name, ...tool.aliases]
  if (names.includes(key)) return 2
  if (!key.startsWith("mcp__")) return 0
  const rest = key.slice(5)
  const server = rest.endsWith("__*") ? rest.slice(0, -3) : rest.includes("__") ? undefined : rest
  return server !== undefined && server !== "" && names.some((n) => serverOf(n) === server && n.length > 5) ? 1 : 0
}

/** A part of a policy with the key it came from (the key a rate limiter or circuit breaker is shared under). */
export interface Keyed<A> {
  readonly key: string
  readonly value: A
}

/** The policy a call runs under, each part with the key that gave it. */
export interface Resolved {
  readonly retry?: Keyed<RetryPolicy> | undefined
  readonly timeoutMs?: Keyed<number> | undefined
  readonly rateLimit?: Keyed<RateLimitPolicy> | undefined
  readonly circuitBreaker?: Keyed<CircuitBreakerPolicy> | undefined
}

/** The empty resolution: nothing applies. */
export const none: Resolved = {}

/** Whether nothing applies. */
export const isEmpty = (r: Resolved): boolean =>
  r.retry === undefined && r.timeoutMs === undefined && r.rateLimit === undefined && r.circuitBreaker === undefined

/**
 * The effective policy of a tool: its own (from its definition, under its name), then the settings' server keys,
 * then the settings' keys naming the tool itself; a more specific source replaces a part field by field (a later
 * settings entry of the same specificity wins).
 */
export const resolve = (
  tool: { readonly name: string; readonly aliases: ReadonlyArray<string>; readonly policy?: Policy | undefined },
  table: Table
): Resolved => {
  const layers: Array<Keyed<Policy>> = []
  if (tool.policy !== undefined) layers.push({ key: tool.name, value: tool.policy })
  for (const level of [1, 2]) {
    for (const [key, policy] of table) if (specificity(key, tool) === level) layers.push({ key, value: policy })
  }
  if (layers.length === 0) return none
  let out: Resolved = {}
  for (const { key, value } of layers) {
    out = {
      retry: value.retry === undefined ? out.retry : { key, value: value.retry },
      timeoutMs: value.timeoutMs === undefined ? out.timeoutMs : { key, value: value.timeoutMs },
      rateLimit: value.rateLimit === undefined ? out.rateLimit : { key, value: value.rateLimit },
      circuitBreaker: value.circuitBreaker === undefined ? out.circuitBreaker : { key, value: value.circuitBreaker }
    }
  }
  return out
}

// ---------------------------------------------------------------------------------------------------------------
// Retry.

/** The default first wait of a retry policy that names none. */
export const defaultBaseMs = 200

/** The waits before each retry (its output): `times` of them, grown by the backoff from `baseMs`, capped at `maxMs`. */
export const schedule = (retry: RetryPolicy): Schedule.Schedule<Duration.Duration> => {
  const base = Duration.millis(retry.baseMs ?? defaultBaseMs)
  const grown =
    retry.backoff === "linear"
      ? Schedule.linear(base)
      : retry.backoff === "constant"
        ? Schedule.map(Schedule.spaced(base), () => base)
        : Schedule.exponential(base)
  const max = retry.maxMs
  const capped =
    max === undefined ? grown : Schedule.modifyDelay(grown, (_, d) => Duration.min(d, Duration.millis(max)))
  return Schedule.delays(Schedule.zipLeft(capped, Schedule.recurs(retry.times)))
}

// ---------------------------------------------------------------------------------------------------------------
// Circuit breaker: a step function of (state, event) the runtime folds, one state per key.

/** The state of one circuit. */
export type Breaker =
  | { readonly _tag: "Closed"; readonly failures: number }
  | { readonly _tag: "Open"; readonly until: number; readonly failures: number }
  | { readonly _tag: "HalfOpen"; readonly failures: number }

/** A closed circuit with no failures. */
export const closed: Breaker = { _tag: "Closed", failures: 0 }

/** Whether a call may go through now; the next state either way. */
export type Admission =
  | { readonly _tag: "Admitted"; readonly next: Breaker }
  | { readonly _tag: "Rejected"; readonly next: Breaker; readonly retryAt: number | undefined }

/**
 * Admits a call at `now`: a closed circuit lets it through; an open one rejects it until its reset time, then lets
 * exactly one trial through (half-open); while the trial runs others are rejected.
 */
export const admit = (state: Breaker, now: number): Admission => {
  switch (state._tag) {
    case "Closed":
      return { _tag: "Admitted", next: state }
    case "Open":
      return now >= state.until
        ? { _tag: "Admitted", next: { _tag: "HalfOpen", failures: state.failures } }
        : { _tag: "Rejected", next: state, retryAt: state.until }
    case "HalfOpen":
      return { _tag: "Rejected", next: state, retryAt: undefined }
  }
}

/**
 * Folds a call's end into the circuit: a success closes it; a failure counts, and opens it once `failures` are reached
 * in a row (a failed trial opens it again at once).
 */
export const settle = (state: Breaker, policy: CircuitBreakerPolicy, failed: boolean, now: number): Breaker => {
  if (!failed) return closed
  const failures = state.failures + 1
  if (state._tag === "HalfOpen" || failures >= policy.failures) {
    return { _tag: "Open", until: now + policy.resetMs, failures }
  }
  return state._tag === "Open" ? state : { _tag: "Closed", failures }
}

// ---------------------------------------------------------------------------------------------------------------
// Texts.

const seconds = (ms: number): string => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`)

/** The error of a call refused by an open circuit. */
export const circuitOpenText = (
  toolName: string,
  key: string,
  failures: number,
  retryAt: number | undefined,
  now: number
): string =>
  retryAt === undefined
    ? `Tool ${toolName} was not called: its circuit breaker (${key}) opened after ${failures} failures in a row and a trial call is running now; try again shortly`
    : `Tool ${toolName} was not called: its circuit breaker (${key}) opened after ${failures} failures in a row; it will be tried again at ${new Date(retryAt).toISOString()} (in ${seconds(retryAt - now)})`

/** What the policies did to a call, for the model: one line, or undefined when they did nothing. */
export const noteText = (
  key: string,
  waitedMs: number,
  retries: ReadonlyArray<string>,
  succeeded: boolean
): string | undefined => {
  const parts: Array<string> = []
  if (waitedMs > 0) parts.push(`waited ${seconds(waitedMs)} for the rate limit`)
  if (retries.length > 0) {
    const last = retries[retries.length - 1]
    parts.push(
      `${succeeded ? "succeeded after" : "failed after"} ${retries.length} ${retries.length === 1 ? "retry" : "retries"} of transient failures (last: ${last.length > 200 ? `${last.slice(0, 199)}…` : last})`
    )
  }
  return parts.length === 0 ? undefined : `[tool policy ${key}: ${parts.join("; ")}]`
}
