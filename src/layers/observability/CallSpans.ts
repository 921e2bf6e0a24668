/**
 * One started call's spans on the executor's hot path: its `execute_tool` span, the step span open now (permission
 * decision or tool body), and the context its fiber runs in. Opening and ending a step is a plain call to the tracer;
 * the fiber's context is never replaced per step (replacing it copies the whole context and makes the fiber compare
 * the old one with the new one, which cost more than the spans themselves, see bench/Executor.bench.ts).
 *
 * Instead the call's fiber starts with a context of its own (made for this call only, by {@link make}) whose parent
 * span is the call's span; while the tool body runs, that context's parent span is the body's span, so what the tool
 * opens nests under `armature.tool_body`, and what the pipeline opens outside the body (hook runs, result
 * persistence) under `execute_tool`. A fiber the tool leaves running after it returned sees `execute_tool` as its
 * parent from then on.
 */
import { Context, Exit, Option, Tracer } from "effect"
import type * as Tool from "../../domain/Tool.js"
import * as Spans from "./Spans.js"

/** The spans of one started call; made by the execution's owner when the call starts. */
export class CallSpans {
  /** The step span open now, ended by {@link endStep} or, if the call's fiber ends first, by {@link ended}. */
  private step: Tracer.Span | undefined = undefined
  /** The call's span as the parent of its steps. */
  private readonly asParent: Option.Option<Tracer.AnySpan>

  private constructor(
    readonly opener: Spans.Opener,
    /** The call's `execute_tool` span; the execution's owner ends it when the call completes. */
    readonly span: Tracer.Span,
    /** The context the call's fiber starts with; private to this call, its parent span is switched in place. */
    readonly context: Context.Context<never>
  ) {
    this.asParent = Option.some(span)
  }

  /**
   * Opens a started call's `execute_tool` span under the opener's parent, and the context for the call's fiber: the
   * given context (the owner's) with that span as the parent span, in a copy of its own.
   */
  static make(
    opener: Spans.Opener,
    context: Context.Context<never>,
    tool: Tool.Any | undefined,
    name: string,
    id: string,
    queueWaitMs: number
  ): CallSpans {
    const span = Spans.openTool(opener, tool, name, id, queueWaitMs)
    return new CallSpans(opener, span, Context.add(context, Tracer.ParentSpan, span))
  }

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

  /** Opens the tool body's span and makes it the parent span of the call's context until {@link endStep}. */
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
