/**
 * The tool policies at work (docs/tools.md, "Tool policies"): around one invocation of a tool's body, the circuit
 * breaker's admission, the rate limit (Effect's `RateLimiter`, one per key), the policy's timeout, and retries of
 * transient failures on an Effect `Schedule`, only for calls that are read-only or idempotent. What happens is
 * reported as it happens (the call's policy events and span events) and summed up in one line for the model.
 * The state shared across calls (limiters, circuits) lives here, one per key; the pure rules are in
 * domain/ToolPolicy.ts.
 */
import { Cause, Clock, Duration, Effect, Exit, Option, RateLimiter, Schedule, ScheduleDecision, Scope } from "effect"
import { ToolFailure } from "../../domain/Errors.js"
import type { PolicyNote } from "../../domain/ExecutorEvent.js"
import * as Tool from "../../domain/Tool.js"
import * as ToolPolicy from "../../domain/ToolPolicy.js"

/** What an invocation of the tool's body gave, as far as the policies care. */
export type Attempt =
  | { readonly _tag: "Returned"; readonly value: unknown }
  | { readonly _tag: "TimedOut" }
  | { readonly _tag: "Failed"; readonly cause: Cause.Cause<unknown> }

/** An invocation under the policies: what the last attempt gave and the line for the model (if anything happened). */
export interface Guarded<A extends Attempt> {
  readonly attempt: A
  readonly note: string | undefined
}

/** Whether an attempt failed on the way to the tool rather than in it: a timeout, or a failure marked transient. */
export const isTransient = (attempt: Attempt): boolean =>
  attempt._tag === "TimedOut" ||
  (attempt._tag === "Failed" &&
    Option.match(Cause.failureOption(attempt.cause), { onNone: () => false, onSome: Tool.isTransient }))

/** Whether retrying this call is safe: read-only, or declared idempotent, for this input. */
export const mayRetry = (tool: Tool.Any, input: unknown): boolean =>
  Tool.safely(tool.isReadOnly, input) || (tool.isIdempotent !== undefined && Tool.safely(tool.isIdempotent, input))

const reasonOf = (tool: Tool.Any, attempt: Attempt, timeoutMs: number | undefined): string =>
  attempt._tag === "TimedOut"
    ? `timed out after ${timeoutMs ?? Duration.toMillis(Option.getOrElse(tool.timeout, () => Duration.zero))} ms`
    : attempt._tag === "Failed"
      ? Option.match(Cause.failureOption(attempt.cause), {
          onNone: () => "failed",
          onSome: (f) => Tool.failureText(tool, f)
        })
      : ""

/** The policies' state across calls, and the wrapper of one invocation. */
export interface CallPolicies {
  /** The policy a call of `tool` runs under now (its own, overridden by the current settings). */
  readonly resolve: (tool: Tool.Any) => Effect.Effect<ToolPolicy.Resolved>
  /**
   * The same, without an Effect, when the table cannot change (it was given as a value): worked out once per tool.
   * Undefined when the table is read at every call (live settings): then ask `resolve`.
   */
  readonly resolveFixed: (tool: Tool.Any) => ToolPolicy.Resolved | undefined
  /**
   * Runs `invoke` (the tool's body, given the tool with the policy's timeout) under `resolved`: admission by the
   * circuit, the rate limit before each attempt, retries of transient failures when the call may be retried.
   * `report` is told each retry, wait and refusal as it happens.
   */
  readonly guard: <A extends Attempt>(
    resolved: ToolPolicy.Resolved,
    tool: Tool.Any,
    input: unknown,
    invoke: (tool: Tool.Any) => Effect.Effect<A>,
    report: (note: PolicyNote) => Effect.Effect<void>
  ) => Effect.Effect<Guarded<A | Attempt>>
}

interface Limiter {
  readonly config: ToolPolicy.RateLimitPolicy
  readonly limit: RateLimiter.RateLimiter
}

/**
 * Makes the policies' state over `table` (read at every call, so a change of settings applies from the next call;
 * a table made with `Effect.succeed` cannot change, and is resolved once per tool). Rate limiters live in the current
 * scope; a key whose limit changed gets a new limiter.
 */
export const make = (table: Effect.Effect<ToolPolicy.Table>): Effect.Effect<CallPolicies, never, Scope.Scope> =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    const limiters = new Map<string, Limiter>()
    const circuits = new Map<string, ToolPolicy.Breaker>()

    const limiterOf = (key: string, config: ToolPolicy.RateLimitPolicy): Effect.Effect<RateLimiter.RateLimiter> => {
      const known = limiters.get(key)
      if (known !== undefined && known.config.limit === config.limit && known.config.intervalMs === config.intervalMs) {
        return Effect.succeed(known.limit)
      }
      return RateLimiter.make({ limit: config.limit, interval: Duration.millis(config.intervalMs) }).pipe(
        Scope.extend(scope),
        Effect.tap((limit) =>
          Effect.sync(() => {
            limiters.set(key, { config, limit })
          })
        )
      )
    }

    const resolveIn = (tool: Tool.Any, entries: ToolPolicy.Table): ToolPolicy.Resolved =>
      entries.length === 0 && tool.policy === undefined ? ToolPolicy.none : ToolPolicy.resolve(tool, entries)
    const resolve = (tool: Tool.Any): Effect.Effect<ToolPolicy.Resolved> =>
      Effect.map(table, (entries) => resolveIn(tool, entries))

    // An `Effect.succeed` is an Exit: its table is there to read now, and never changes. Reading it once per tool
    // saves a call three steps of the fiber (bench/Executor.bench.ts; the executor's table is such a value unless a
    // ToolPolicies service follows live settings).
    const fixed = Exit.isExit(table) && Exit.isSuccess(table) ? (table.value as ToolPolicy.Table) : undefined
    const resolvedOf = new WeakMap<Tool.Any, ToolPolicy.Resolved>()
    const resolveFixed = (tool: Tool.Any): ToolPolicy.Resolved | undefined => {
      if (fixed === undefined) return undefined
      let resolved = resolvedOf.get(tool)
      if (resolved === undefined) {
        resolved = resolveIn(tool, fixed)
        resolvedOf.set(tool, resolved)
      }
      return resolved
    }

    // made once per executor (fnUntraced), not an Effect.gen per call: see docs/executor.md, "Overhead"
    const guard: CallPolicies["guard"] = Effect.fnUntraced(function* <A extends Attempt>(
      resolved: ToolPolicy.Resolved,
      tool: Tool.Any,
      input: unknown,
      invoke: (tool: Tool.Any) => Effect.Effect<A>,
      report: (note: PolicyNote) => Effect.Effect<void>
    ) {
      const breaker = resolved.circuitBreaker
      if (breaker !== undefined) {
        const now = yield* Clock.currentTimeMillis
        const state = circuits.get(breaker.key) ?? ToolPolicy.closed
        const admission = ToolPolicy.admit(state, now)
        circuits.set(breaker.key, admission.next)
        if (admission._tag === "Rejected") {
          yield* report({ action: "circuit_open", key: breaker.key, retry_at: admission.retryAt ?? null })
          const message = ToolPolicy.circuitOpenText(tool.name, breaker.key, state.failures, admission.retryAt, now)
          return { attempt: { _tag: "Failed", cause: Cause.fail(new ToolFailure({ message })) }, note: undefined }
        }
      }

      const timeoutMs = resolved.timeoutMs?.value
      const timed: Tool.Any =
        timeoutMs === undefined ? tool : { ...tool, timeout: Option.some(Duration.millis(timeoutMs)) }
      let waitedMs = 0
      const rate = resolved.rateLimit
      const limited: Effect.Effect<A> =
        rate === undefined
          ? invoke(timed)
          : Effect.gen(function* () {
              const limit = yield* limiterOf(rate.key, rate.value)
              const before = yield* Clock.currentTimeMillis
              yield* limit(Effect.void)
              const waited = (yield* Clock.currentTimeMillis) - before
              if (waited > 0) {
                waitedMs += waited
                yield* report({ action: "rate_limit", key: rate.key, waited_ms: waited })
              }
              return yield* invoke(timed)
            })

      const retry = resolved.retry
      const failures: Array<string> = []
      let last: A | Attempt
      let notRetried = false
      if (retry === undefined || retry.value.times === 0) {
        last = yield* limited
      } else if (!mayRetry(tool, input)) {
        last = yield* limited
        notRetried = isTransient(last)
      } else {
        const once = Effect.flatMap(limited, (attempt) => {
          if (!isTransient(attempt)) return Effect.succeed(attempt)
          failures.push(reasonOf(tool, attempt, timeoutMs))
          return Effect.fail(attempt)
        })
        const waits = Schedule.onDecision(ToolPolicy.schedule(retry.value), (delay, decision) =>
          ScheduleDecision.isDone(decision)
            ? Effect.void
            : report({
                action: "retry",
                key: retry.key,
                attempt: failures.length,
                delay_ms: Duration.toMillis(delay),
                reason: failures[failures.length - 1] ?? ""
              })
        )
        last = yield* Effect.retry(once, waits).pipe(Effect.catchAll((attempt) => Effect.succeed(attempt)))
      }

      const failed = isTransient(last)
      if (breaker !== undefined) {
        const now = yield* Clock.currentTimeMillis
        circuits.set(
          breaker.key,
          ToolPolicy.settle(circuits.get(breaker.key) ?? ToolPolicy.closed, breaker.value, failed, now)
        )
      }
      // the retries are the failures that were followed by another attempt
      const retries = failed ? failures.slice(0, -1) : failures
      const note = notRetried
        ? `[tool policy ${retry?.key}: not retried, as ${tool.name} may have side effects (it is neither read-only nor idempotent)]`
        : ToolPolicy.noteText(retry?.key ?? rate?.key ?? tool.name, waitedMs, retries, !failed)
      return { attempt: last, note }
    })

    return { resolve, resolveFixed, guard }
  })
