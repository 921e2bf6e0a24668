/**
 * The executor of SPEC §4: an admission loop over a scoped FiberSet, one Deferred per call for ordered yields,
 * progress merged unordered, sibling cancellation, interrupts, timeouts, context modifiers, dependencies and
 * resource-aware scheduling. `execute` and `runBatch` are the same engine.
 */
import {
  Cause,
  Chunk,
  Clock,
  Config,
  Deferred,
  Duration,
  Effect,
  Exit,
  Fiber,
  FiberSet,
  Layer,
  Mailbox,
  Option,
  Queue,
  Ref,
  Schema,
  Stream
} from "effect"
import { plan } from "../../domain/Admission.js"
import { type ResultContentBlock, type ToolResult, type ToolResultContent, toolResult } from "../../domain/Blocks.js"
import { checkBatch, checkCall, findCycle } from "../../domain/CallGraph.js"
import { discoveredToolsKey } from "../../domain/DeferredTools.js"
import { DependencyCycleError, type InvalidInputError, type ToolFailure } from "../../domain/Errors.js"
import type { ExecutorEvent, ResultEvent, ToolCall } from "../../domain/ExecutorEvent.js"
import type { HookEvent, HookInput, HookOutcome } from "../../domain/Hook.js"
import { inputValidationError } from "../../domain/InputIssues.js"
import { resourcesOf } from "../../domain/Resources.js"
import * as Texts from "../../domain/Texts.js"
import * as Tool from "../../domain/Tool.js"
import { Approver } from "../../services/Approver.js"
import { Hooks } from "../../services/Hooks.js"
import { PermissionPolicy } from "../../services/PermissionPolicy.js"
import { ResultCache, none as ResultCacheNone } from "../../services/ResultCache.js"
import { ResultStore } from "../../services/ResultStore.js"
import { Session } from "../../services/Session.js"
import {
  type CancellationPolicy,
  type Control,
  type ExecuteOptions,
  makeControl,
  type Scheduling,
  ToolExecutor
} from "../../services/ToolExecutor.js"
import { ToolRegistry } from "../../services/ToolRegistry.js"

/** The executor's defaults; each can be overridden per execution. */
export interface ExecutorConfig {
  readonly maxConcurrency: number
  readonly cancellation: CancellationPolicy
  readonly scheduling: Scheduling
}

/** What a finished call produced, before it is yielded. */
interface Outcome {
  readonly content: ToolResultContent
  readonly isError: boolean
  readonly continue: boolean
  readonly stopReason: string | undefined
  readonly modifier: Tool.ContextModifier | undefined
}

const errorOutcome = (content: string): Outcome => ({
  content,
  isError: true,
  continue: true,
  stopReason: undefined,
  modifier: undefined
})

type Status = "queued" | "executing" | "completed" | "yielded"

interface Entry {
  readonly index: number
  readonly call: ToolCall
  readonly tool: Tool.Any | undefined
  readonly deps: ReadonlyArray<string>
  readonly result: Deferred.Deferred<Outcome>
  /** Set once the input is decoded (at arrival, or when dependencies resolve). */
  ready: boolean
  input: unknown
  safe: boolean
  resources: ReadonlyArray<Tool.Resource>
  status: Status
  fiber: Fiber.RuntimeFiber<Outcome, never> | undefined
  /** The result to give when the call's fiber is interrupted on purpose. */
  cancel: Outcome | undefined
  /** The result of a tool that has returned, kept so that a late cancellation cannot replace it. */
  ran: Outcome | undefined
  outcome: Outcome | undefined
}

const failureText = (failure: ToolFailure): string =>
  [failure.message, failure.stderr, failure.stdout].filter((s) => s !== undefined && s !== "").join("\n")

const defectText = (cause: Cause.Cause<unknown>): string => {
  const squashed = Cause.squash(cause)
  return `Error: ${squashed instanceof Error ? squashed.message : String(squashed)}`
}

const isEmptyContent = (content: ToolResultContent): boolean =>
  typeof content === "string" ? content.trim() === "" : content.length === 0

const appendText = (content: ToolResultContent, text: string): ToolResultContent => {
  const blocks: Array<ResultContentBlock> =
    typeof content === "string" ? [{ type: "text", text: content }] : [...content]
  return [...blocks, { type: "text", text }]
}

/** Checks a whole batch before anything starts: unique ids, known dependencies, no cycles. */
export const validateBatch = (
  calls: ReadonlyArray<ToolCall>
): Effect.Effect<void, InvalidInputError | DependencyCycleError> => {
  const error = checkBatch(calls)
  return error === undefined ? Effect.void : Effect.fail(error)
}

/** Reads the default configuration: `ARMATURE_MAX_TOOL_CONCURRENCY` or 10. */
export const defaultConfig: Effect.Effect<ExecutorConfig> = Config.integer("ARMATURE_MAX_TOOL_CONCURRENCY").pipe(
  Config.withDefault(10),
  Config.map((n) => ({
    maxConcurrency: n > 0 ? n : 10,
    cancellation: "declared" as const,
    scheduling: "partition" as const
  })),
  Effect.orElseSucceed(() => ({
    maxConcurrency: 10,
    cancellation: "declared" as const,
    scheduling: "partition" as const
  }))
)

/** Builds the executor from the pipeline's services. */
export const make = (overrides: Partial<ExecutorConfig> = {}) =>
  Effect.gen(function* () {
    const registry = yield* ToolRegistry
    const policy = yield* PermissionPolicy
    const approver = yield* Approver
    const hooks = yield* Hooks
    const store = yield* ResultStore
    const session = yield* Session
    const config: ExecutorConfig = { ...(yield* defaultConfig), ...overrides }
    const cache = Option.getOrElse(yield* Effect.serviceOption(ResultCache), () => ResultCacheNone)

    const execute = <E>(
      calls: Stream.Stream<ToolCall, E>,
      options: ExecuteOptions = {}
    ): Stream.Stream<ExecutorEvent, E | InvalidInputError | DependencyCycleError> =>
      Stream.unwrapScoped(
        Effect.gen(function* () {
          const maxConcurrency = Math.max(1, options.maxConcurrency ?? config.maxConcurrency)
          const cancellation = options.cancellation ?? config.cancellation
          const scheduling = options.scheduling ?? config.scheduling
          const control: Control = options.control ?? (yield* makeControl)
          const startedAt = yield* Clock.currentTimeMillis
          const now = Effect.map(Clock.currentTimeMillis, (t) => t - startedAt)
          const mailbox = yield* Mailbox.make<ExecutorEvent, E | InvalidInputError | DependencyCycleError>()
          const fibers = yield* FiberSet.make<Outcome, never>()
          const order = yield* Queue.unbounded<Entry | undefined>()

          const entries: Array<Entry> = []
          const byId = new Map<string, Entry>()
          const executing = new Set<Entry>()
          const pendingModifiers: Array<{ readonly index: number; readonly modifier: Tool.ContextModifier }> = []
          /** Entries before this index have all left the queue: the scan starts here. */
          let firstQueued = 0
          /** Queued entries whose input is not decoded yet: they wait for dependencies or a resolver. */
          let unready: Array<Entry> = []
          /** Deferred tools whose schema the model has seen (SPEC §3 step 3), refreshed at each arrival. */
          let discovered: ReadonlySet<string> = options.discovered ?? new Set()
          let siblingError: Outcome | undefined
          let interrupted = false
          let discarded = false
          let inputEnded = false

          const emit = (event: ExecutorEvent) => (discarded ? Effect.void : Effect.asVoid(mailbox.offer(event)))
          const emitState = (entry: Entry, state: Status) =>
            Effect.flatMap(now, (t_ms) => emit({ type: "state", tool_use_id: entry.call.id, state, t_ms }))

          const applyModifiers = (modifiers: ReadonlyArray<Tool.ContextModifier>) =>
            modifiers.length === 0
              ? Effect.void
              : Ref.update(session.context, (c) => modifiers.reduce((a, m) => m(a), c))

          /** Completes a call that never ran (or is cut short) with `outcome`; first completion wins. */
          const complete = (entry: Entry, outcome: Outcome): Effect.Effect<void> =>
            Effect.suspend(() => {
              if (entry.status === "completed" || entry.status === "yielded") return Effect.void
              entry.status = "completed"
              entry.outcome = outcome
              executing.delete(entry)
              return emitState(entry, "completed").pipe(Effect.zipRight(Deferred.succeed(entry.result, outcome)))
            })

          /** Runs after a call finished: modifiers, cascade, then admission of what can start now. */
          const afterCompletion = (entry: Entry, outcome: Outcome): Effect.Effect<void> =>
            Effect.gen(function* () {
              if (outcome.modifier !== undefined) {
                if (entry.safe) pendingModifiers.push({ index: entry.index, modifier: outcome.modifier })
                else yield* applyModifiers([outcome.modifier])
              }
              if (![...executing].some((e) => e.safe) && pendingModifiers.length > 0) {
                const ready = pendingModifiers.splice(0).sort((a, b) => a.index - b.index)
                yield* applyModifiers(ready.map((m) => m.modifier))
              }
              if (outcome.isError && siblingError === undefined && entry.tool !== undefined && !entry.cancel) {
                const cascades =
                  cancellation === "any-error" || (cancellation === "declared" && entry.tool.cancelsSiblingsOnError)
                if (cascades) {
                  siblingError = errorOutcome(Texts.siblingErrored(entry.tool.name, summaryOf(entry)))
                  yield* cancelAll(siblingError, siblingError, entry)
                }
              }
              yield* admit
            })

          const summaryOf = (entry: Entry): string => {
            if (entry.tool === undefined) return ""
            const tool = entry.tool
            const input = entry.ready ? entry.input : entry.call.input
            try {
              return tool.summarize(input)
            } catch {
              return ""
            }
          }

          /**
           * Cancels calls that have not completed: queued ones complete at once with `queuedOutcome`, running
           * ones (filtered by `which`) are interrupted and complete with `runningOutcome` after their finalizers.
           */
          const cancelAll = (
            queuedOutcome: Outcome,
            runningOutcome: Outcome,
            except: Entry | undefined,
            which: (entry: Entry) => boolean = () => true
          ): Effect.Effect<void> =>
            Effect.forEach(
              entries.filter((e) => e !== except && (e.status === "queued" || e.status === "executing")),
              (e) => {
                if (e.status === "queued") return complete(e, queuedOutcome)
                if (!which(e) || e.cancel !== undefined) return Effect.void
                e.cancel = runningOutcome
                return e.fiber === undefined ? Effect.void : Effect.asVoid(Fiber.interruptFork(e.fiber))
              },
              { discard: true }
            )

          /** Decodes a call's input and evaluates its safety flags; an immediate error result when it fails. */
          const prepare = (entry: Entry, raw: unknown): Outcome | undefined => {
            const tool = entry.tool
            if (tool === undefined) return undefined
            const decoded = Schema.decodeUnknownEither(tool.input, { errors: "all", onExcessProperty: "error" })(raw)
            if (decoded._tag === "Left") {
              const text = inputValidationError(tool.name, decoded.left.issue)
              const hint =
                Tool.isDeferred(tool) && !discovered.has(tool.name) ? `\n${Texts.undiscoveredHint(tool.name)}` : ""
              return errorOutcome(text + hint)
            }
            entry.input = decoded.right
            entry.safe = Tool.safely(tool.isConcurrencySafe, decoded.right)
            entry.resources = resourcesOf(tool, decoded.right)
            entry.ready = true
            return undefined
          }

          /** Dependencies: undefined while waiting, an error outcome when one failed, else the upstream results. */
          const dependencyState = (
            entry: Entry
          ):
            | { readonly _tag: "Wait" }
            | { readonly _tag: "Failed"; readonly outcome: Outcome }
            | { readonly _tag: "Ready" } => {
            for (const dep of entry.deps) {
              const upstream = byId.get(dep)
              if (upstream === undefined) {
                if (inputEnded) return { _tag: "Failed", outcome: errorOutcome(Texts.dependencyFailed(dep)) }
                return { _tag: "Wait" }
              }
              if (upstream.outcome === undefined) return { _tag: "Wait" }
              if (upstream.outcome.isError)
                return { _tag: "Failed", outcome: errorOutcome(Texts.dependencyFailed(dep)) }
            }
            return { _tag: "Ready" }
          }

          const upstreamResults = (entry: Entry): ReadonlyMap<string, ToolResult> =>
            new Map(
              entry.deps.flatMap((dep) => {
                const upstream = byId.get(dep)
                return upstream?.outcome === undefined
                  ? []
                  : [[dep, toolResult(dep, upstream.outcome.content, upstream.outcome.isError)] as const]
              })
            )

          /** Completes queued calls whose dependencies failed, prepares those now ready, then starts what the planner picks. */
          const admit: Effect.Effect<void> = Effect.suspend(() => {
            if (discarded) return Effect.void
            const immediate: Array<readonly [Entry, Outcome]> = []
            const stillWaiting: Array<Entry> = []
            for (const entry of unready) {
              if (entry.status !== "queued") continue
              const deps = dependencyState(entry)
              if (deps._tag === "Wait") {
                stillWaiting.push(entry)
                continue
              }
              if (deps._tag === "Failed") {
                immediate.push([entry, deps.outcome])
                continue
              }
              const raw = entry.call.resolve !== undefined ? safeResolve(entry) : entry.call.input
              const failed =
                raw instanceof Error ? errorOutcome(`Dependency resolver failed: ${raw.message}`) : prepare(entry, raw)
              if (failed !== undefined) immediate.push([entry, failed])
            }
            unready = stillWaiting
            const settling = new Set(immediate.map(([entry]) => entry))
            while (firstQueued < entries.length && entries[firstQueued].status !== "queued") firstQueued++
            const queued = function* () {
              for (let i = firstQueued; i < entries.length; i++) {
                const entry = entries[i]
                if (entry.status === "queued" && !settling.has(entry)) yield entry
              }
            }
            const toStart = plan({ queued: queued(), running: [...executing], cap: maxConcurrency, scheduling })
            for (const entry of toStart) {
              entry.status = "executing"
              executing.add(entry)
            }
            return Effect.zipRight(
              Effect.forEach(
                immediate,
                ([entry, outcome]) => Effect.zipRight(complete(entry, outcome), afterCompletion(entry, outcome)),
                { discard: true }
              ),
              Effect.forEach(toStart, start, { discard: true })
            )
          })

          const safeResolve = (entry: Entry): unknown => {
            try {
              return entry.call.resolve!(upstreamResults(entry))
            } catch (e) {
              return e instanceof Error ? e : new Error(String(e))
            }
          }

          const start = (entry: Entry): Effect.Effect<void> =>
            Effect.gen(function* () {
              yield* emitState(entry, "executing")
              const fiber = yield* FiberSet.run(
                fibers,
                Effect.interruptible(pipeline(entry)).pipe(
                  Effect.onExit((exit) => finish(entry, exit)),
                  Effect.catchAllCause(() => Effect.succeed(errorOutcome("interrupted")))
                )
              )
              entry.fiber = fiber
            })

          const finish = (entry: Entry, exit: Exit.Exit<Outcome>): Effect.Effect<void> =>
            Effect.suspend(() => {
              if (discarded) return Effect.void
              const outcome: Outcome = Exit.isSuccess(exit)
                ? exit.value
                : (entry.ran ??
                  entry.cancel ??
                  (Cause.isInterruptedOnly(exit.cause)
                    ? errorOutcome(Texts.rejected)
                    : errorOutcome(defectText(exit.cause))))
              return Effect.zipRight(complete(entry, outcome), afterCompletion(entry, outcome))
            })

          const hookInput = (
            entry: Entry,
            event: HookEvent,
            input: unknown,
            cwd: string,
            extra: Partial<HookInput> = {}
          ): HookInput => ({
            session_id: session.id,
            transcript_path: session.transcriptPath,
            cwd,
            permission_mode: policy.mode,
            hook_event_name: event,
            tool_name: entry.tool?.name ?? entry.call.name,
            tool_input: input,
            tool_use_id: entry.call.id,
            ...extra
          })

          /** Decodes a replacement input (a hook's or approver's `updatedInput`) with the tool's Schema. */
          const redecode = (tool: Tool.Any, raw: unknown): { readonly input: unknown } | Outcome => {
            const decoded = Schema.decodeUnknownEither(tool.input, { errors: "all", onExcessProperty: "error" })(raw)
            return decoded._tag === "Left"
              ? errorOutcome(inputValidationError(tool.name, decoded.left.issue))
              : { input: decoded.right }
          }

          /** Steps 4–10 of SPEC §3 for a call that may run. */
          const pipeline = (entry: Entry): Effect.Effect<Outcome> =>
            Effect.gen(function* () {
              if (entry.cancel !== undefined) return entry.cancel
              const tool = entry.tool!
              const { cwd } = yield* Ref.get(session.context)
              const ctx: Tool.ToolContext = {
                toolUseId: entry.call.id,
                cwd,
                permissionMode: policy.mode,
                progress: (data) =>
                  Effect.flatMap(now, (t_ms) => emit({ type: "progress", tool_use_id: entry.call.id, data, t_ms })),
                interrupted: Deferred.await(control.interrupted),
                state: session.state
              }
              let input = entry.input

              const invalid = yield* Effect.flip(tool.validate(input, ctx)).pipe(Effect.option)
              if (Option.isSome(invalid)) return errorOutcome(Texts.validationFailed(invalid.value.message))

              const pre: HookOutcome = yield* hooks.run("PreToolUse", hookInput(entry, "PreToolUse", input, cwd))
              if (pre.decision === "deny") {
                return errorOutcome(Texts.preToolUseBlocked(tool.name, pre.reason ?? "blocked by hook"))
              }
              if (pre.updatedInput !== undefined) {
                const redecoded = redecode(tool, pre.updatedInput)
                if (!("input" in redecoded)) return redecoded
                input = redecoded.input
              }

              const request = { tool, input, toolUseId: entry.call.id, context: ctx, hookDecision: pre.decision }
              const decision = yield* policy.decide(request)
              if (decision.behavior === "deny") return errorOutcome(decision.message)
              if (decision.behavior === "ask") {
                const asked = yield* hooks.run(
                  "PermissionRequest",
                  hookInput(entry, "PermissionRequest", input, cwd, { permission_suggestions: [] })
                )
                if (asked.decision === "deny") {
                  return errorOutcome(asked.reason ?? decision.message)
                }
                if (asked.decision !== "allow") {
                  const approval = yield* approver.approve(request, decision)
                  if (approval._tag === "Rejected") return errorOutcome(approval.message)
                  if (approval.updatedInput !== undefined) {
                    const redecoded = redecode(tool, approval.updatedInput)
                    if (!("input" in redecoded)) return redecoded
                    input = redecoded.input
                  }
                } else if (asked.updatedInput !== undefined) {
                  const redecoded = redecode(tool, asked.updatedInput)
                  if (!("input" in redecoded)) return redecoded
                  input = redecoded.input
                }
              }

              const readOnly = Tool.safely(tool.isReadOnly, input)
              const resources = resourcesOf(tool, input)
              const cached = readOnly ? yield* cache.lookup(tool, input) : Option.none()
              let exit: Exit.Exit<Option.Option<unknown>, ToolFailure> = Exit.succeed(Option.none())
              if (Option.isNone(cached)) {
                const called = Option.match(tool.timeout, {
                  onNone: () => Effect.map(tool.call(input, ctx), Option.some),
                  onSome: (limit) => Effect.timeoutOption(tool.call(input, ctx), limit)
                })
                // a write invalidates cached reads even when it is interrupted half-way
                exit = yield* Effect.exit(called).pipe(
                  Effect.ensuring(readOnly ? Effect.void : cache.invalidate(resources))
                )
              }

              if (Option.isSome(cached) || (Exit.isSuccess(exit) && Option.isSome(exit.value))) {
                const returned = Option.isSome(cached)
                  ? cached.value
                  : Exit.isSuccess(exit)
                    ? Option.getOrUndefined(exit.value)
                    : undefined
                const output = Tool.isWithModifier(returned) ? returned.output : returned
                const modifier = Tool.isWithModifier(returned) ? returned.modifier : undefined
                let content: ToolResultContent
                if (Option.isSome(cached)) {
                  content = cached.value
                } else {
                  const mapped = yield* Effect.try(() => tool.toResult(output)).pipe(
                    Effect.orElseSucceed(() => Tool.defaultToResult(output))
                  )
                  content = yield* store.process({
                    toolUseId: entry.call.id,
                    toolName: tool.name,
                    content: isEmptyContent(mapped) ? Texts.emptyResult(tool.name) : mapped,
                    maxResultSizeChars: tool.maxResultSizeChars
                  })
                  if (readOnly) yield* cache.store(tool, input, content, resources)
                }
                // the tool has run: from here on a cancellation must not pretend it did not
                entry.ran = { content, isError: false, continue: pre.continue, stopReason: pre.stopReason, modifier }
                const post = yield* hooks.run(
                  "PostToolUse",
                  hookInput(entry, "PostToolUse", input, cwd, { tool_response: output })
                )
                if (tool.source === "mcp" && post.updatedMCPToolOutput !== undefined) {
                  content = Tool.defaultToResult(post.updatedMCPToolOutput)
                }
                for (const block of post.blocks) {
                  content = appendText(content, Texts.postToolUseBlocked(tool.name, block.command, block.reason))
                }
                return {
                  content,
                  isError: false,
                  continue: pre.continue && post.continue,
                  stopReason: pre.stopReason ?? post.stopReason,
                  modifier
                }
              }

              const isTimeout = Exit.isSuccess(exit)
              const text = isTimeout
                ? Texts.timedOut(tool.name, Duration.toMillis(Option.getOrElse(tool.timeout, () => Duration.zero)))
                : Exit.isFailure(exit) && Cause.isFailType(exit.cause)
                  ? failureText(exit.cause.error)
                  : Exit.isFailure(exit)
                    ? Option.match(Cause.failureOption(exit.cause), {
                        onNone: () => defectText(exit.cause),
                        onSome: failureText
                      })
                    : ""
              const failure = yield* hooks.run(
                "PostToolUseFailure",
                hookInput(entry, "PostToolUseFailure", input, cwd, { error: text, is_interrupt: false })
              )
              return {
                content: Texts.truncateFailure(text),
                isError: true,
                continue: pre.continue && failure.continue,
                stopReason: pre.stopReason ?? failure.stopReason,
                modifier: undefined
              }
            }).pipe(
              Effect.catchAllCause((cause) =>
                Cause.isInterruptedOnly(cause)
                  ? Effect.failCause(cause as Cause.Cause<never>)
                  : Effect.succeed(errorOutcome(Texts.truncateFailure(defectText(cause))))
              )
            )

          /** A call enters the executor. */
          const arrive = (call: ToolCall): Effect.Effect<void, InvalidInputError | DependencyCycleError> =>
            Effect.gen(function* () {
              const invalid = checkCall(call, entries.length, byId)
              if (invalid !== undefined) return yield* invalid
              const deps = call.depends_on ?? []
              if (deps.length > 0) {
                const graph = new Map<string, ReadonlyArray<string>>(entries.map((e) => [e.call.id, e.deps]))
                graph.set(call.id, deps)
                const cycle = findCycle(graph, [call.id])
                if (cycle !== undefined) return yield* new DependencyCycleError({ cycle })
              }
              const tool = Option.getOrUndefined(yield* registry.lookup(call.name))
              if (options.discovered === undefined) discovered = yield* session.state.get(discoveredToolsKey)
              const entry: Entry = {
                index: entries.length,
                call,
                tool,
                deps,
                result: yield* Deferred.make<Outcome>(),
                ready: false,
                input: undefined,
                safe: true,
                resources: [],
                status: "queued",
                fiber: undefined,
                cancel: undefined,
                ran: undefined,
                outcome: undefined
              }
              entries.push(entry)
              byId.set(call.id, entry)
              yield* Queue.offer(order, entry)
              yield* emitState(entry, "queued")

              const immediate: Outcome | undefined =
                tool === undefined
                  ? errorOutcome(Texts.noSuchTool(call.name))
                  : interrupted
                    ? errorOutcome(Texts.alreadyCancelled)
                    : siblingError !== undefined
                      ? siblingError
                      : deps.length === 0 && call.resolve === undefined
                        ? prepare(entry, call.input)
                        : undefined
              if (immediate === undefined && !entry.ready) unready.push(entry)
              if (immediate !== undefined) {
                // a call refused because of an interrupt or a sibling's error does not cascade itself
                if (tool !== undefined && (interrupted || siblingError !== undefined)) entry.cancel = immediate
                yield* complete(entry, immediate)
                yield* afterCompletion(entry, immediate)
                return
              }
              yield* admit
            })

          /** Yields results strictly in request order, then ends (or fails with the input's error). */
          const yielder = Effect.gen(function* () {
            while (true) {
              const entry = yield* Queue.take(order)
              if (entry === undefined) break
              const outcome = yield* Deferred.await(entry.result)
              const t_ms = yield* now
              const event: ResultEvent = {
                type: "tool_result",
                tool_use_id: entry.call.id,
                content: outcome.content,
                is_error: outcome.isError,
                t_ms,
                ...(outcome.continue ? {} : { continue: false }),
                ...(outcome.stopReason !== undefined ? { stopReason: outcome.stopReason } : {})
              }
              yield* emit(event)
              entry.status = "yielded"
              yield* emitState(entry, "yielded")
            }
          })

          const inputError = yield* Ref.make<Option.Option<Cause.Cause<E | InvalidInputError | DependencyCycleError>>>(
            Option.none()
          )
          const producer = Stream.runForEach(calls, arrive).pipe(
            Effect.catchAllCause((cause) => Ref.set(inputError, Option.some(cause))),
            Effect.ensuring(
              Effect.suspend(() => {
                inputEnded = true
                return Effect.zipRight(admit, Queue.offer(order, undefined))
              })
            )
          )

          yield* Effect.forkScoped(producer)
          yield* Effect.forkScoped(
            Effect.zipRight(
              yielder,
              Effect.flatMap(
                Ref.get(inputError),
                Option.match({ onNone: () => mailbox.end, onSome: (cause) => mailbox.failCause(cause) })
              )
            )
          )
          yield* Effect.forkScoped(
            Effect.zipRight(
              Deferred.await(control.interrupted),
              Effect.suspend(() => {
                interrupted = true
                return cancelAll(
                  errorOutcome(Texts.alreadyCancelled),
                  errorOutcome(Texts.rejected),
                  undefined,
                  (e) => e.tool?.interruptBehavior === "cancel"
                )
              })
            )
          )
          yield* Effect.forkScoped(
            Effect.zipRight(
              Deferred.await(control.aborted),
              Effect.suspend(() => {
                interrupted = true
                return cancelAll(errorOutcome(Texts.alreadyCancelled), errorOutcome(Texts.rejected), undefined)
              })
            )
          )
          yield* Effect.forkScoped(
            Effect.zipRight(
              Deferred.await(control.discarded),
              Effect.suspend(() => {
                discarded = true
                return Effect.zipRight(
                  FiberSet.clear(fibers),
                  Effect.zipRight(Effect.ignore(mailbox.clear), mailbox.end)
                )
              })
            )
          )
          return Mailbox.toStream(mailbox)
        })
      )

    const runBatch = (calls: ReadonlyArray<ToolCall>, options?: ExecuteOptions) =>
      Stream.unwrap(Effect.as(validateBatch(calls), execute(Stream.fromIterable(calls), options)))

    const runBatchCollect = (calls: ReadonlyArray<ToolCall>, options?: ExecuteOptions) =>
      runBatch(calls, options).pipe(
        Stream.filter((e): e is ResultEvent => e.type === "tool_result"),
        Stream.map((e) => toolResult(e.tool_use_id, e.content, e.is_error)),
        Stream.runCollect,
        Effect.map(Chunk.toReadonlyArray)
      )

    return ToolExecutor.of({ execute, runBatch, runBatchCollect })
  })

/** The executor as a layer, with the default configuration (or overrides). */
export const layer = (overrides: Partial<ExecutorConfig> = {}) => Layer.effect(ToolExecutor, make(overrides))
