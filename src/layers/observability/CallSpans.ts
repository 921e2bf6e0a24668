/**
 * One started call's spans on the executor's hot path: its `execute_tool` span, the step span open now (permission
 * decision or tool body), and the context its fiber runs in. Opening and ending a step is a plain call to the tracer;
 * the fiber's context is never replaced per step (replacing it copies the whole context and makes the fiber compare
 * the old one with the new one, which cost more than the spans themselves, see docs/observability.md).
 *
 * Instead the call's fiber starts with a context of its own ({@link Starter.start}: a copy made for this call, held
 * only by the call's fiber and the fibers it forks) whose parent span is the call's span; while the tool body runs,
 * that context's parent span is the body's span, switched in place. So what the tool opens nests under
 * `armature.tool_body`, and what the pipeline opens outside the body (hook runs, result persistence) under
 * `execute_tool`. A fiber the tool leaves running after it returned sees `execute_tool` as its parent from then on.
 */
import { Context, Exit, type FiberId, FiberRef, FiberRefs, Option, Tracer } from "effect"
import type * as Tool from "../../domain/Tool.js"
import * as Spans from "./Spans.js"

/** The spans of one started call; made by the execution's owner when the call starts. */
export class CallSpans {
  /** The step span open now, ended by {@link endStep} or, if the call's fiber ends first, by {@link ended}. */
  private step: Tracer.Span | undefined = undefined
  /** The call's span as the parent of its steps. */
  private readonly asParent: Option.Option<Tracer.AnySpan>

  constructor(
    readonly opener: Spans.Opener,
    /** The call's `execute_tool` span; the execution's owner ends it when the call completes. */
    readonly span: Tracer.Span,
    /** The context the call's fiber runs in; private to this call, its parent span is switched in place. */
    readonly context: Context.Context<never>
  ) {
    this.asParent = Option.some(span)
  }

  /**
   * The fiber refs the call's fiber starts with (`RunForkOptions.updateRefs`): the owner's, with {@link context} as
   * the fiber's context, so that starting the fiber does not compare the owner's context with the call's (Effect
   * would otherwise hash both and walk their services).
   */
  readonly withContext = (refs: FiberRefs.FiberRefs, fiberId: FiberId.Runtime): FiberRefs.FiberRefs =>
    FiberRefs.updateAs(refs, { fiberId, fiberRef: FiberRef.currentContext, value: this.context })

  /** Opens a step span under the call's span (not made the parent of anything: the fiber's context is unchanged). */
  openStep(name: string): Tracer.Span {
    this.endStep(Exit.void)
    const span = this.opener.tracer.span(
      name,
      this.asParent,
      noContext,
      this.opener.links,
      this.opener.now(),
      "internal"
    )
    for (const [key, value] of this.opener.annotations) span.attribute(key, value)
    this.step = span
    return span
  }

  /**
   * Opens the tool body's span and makes it the parent span of the call's context until {@link endStep}. Switched
   * in place on purpose: running the body under `Effect.withParentSpan` instead (tried on 2026-12-02, two
   * alternating runs of `npm run bench -- Executor` on a loaded 2-core machine) raised the cost of the spans
   * (`spans_cpu_ratio`, spans on vs off, batches of 10) from 1.44 and 1.26 to 2.08 and 1.44: more than 10%.
   */
  enterBody(): void {
    this.context.unsafeMap.set(Tracer.ParentSpan.key, this.openStep(Spans.names.body))
  }

  /** Ends the open step span (if any) with `exit`; the call's span is the parent again. */
  endStep(exit: Exit.Exit<unknown, unknown>): void {
    const step = this.step
    if (step === undefined) return
    this.step = undefined
    step.end(this.opener.now(), exit)
    this.context.unsafeMap.set(Tracer.ParentSpan.key, this.span)
  }

  /** Told when the call's fiber ended: a step still open (the call was interrupted, or died in it) ends with it. */
  ended(exit: Exit.Exit<unknown, unknown>): void {
    this.endStep(exit)
  }
}

const noContext = Context.empty()

/**
 * Starts traced calls for an execution's owner: the owner's context entries are read once. A call's context is a
 * copy of the owner's with the call's span as the parent span, made from those entries (the parent span first).
 */
export class Starter {
  private readonly entries: ReadonlyArray<readonly [string, unknown]>

  constructor(
    readonly opener: Spans.Opener,
    context: Context.Context<never>
  ) {
    const entries: Array<readonly [string, unknown]> = [[Tracer.ParentSpan.key, undefined]]
    for (const entry of context.unsafeMap) if (entry[0] !== Tracer.ParentSpan.key) entries.push(entry)
    this.entries = entries
  }

  /** Opens a started call's `execute_tool` span under the opener's parent, and the context of its fiber. */
  start(tool: Tool.Any | undefined, name: string, id: string, queueWaitMs: number): CallSpans {
    const span = Spans.openTool(this.opener, tool, name, id, queueWaitMs)
    const map = new Map<string, unknown>(this.entries)
    map.set(Tracer.ParentSpan.key, span)
    return new CallSpans(this.opener, span, Context.unsafeMake<never>(map))
  }
}
