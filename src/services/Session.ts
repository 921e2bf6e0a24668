/**
 * The session a set of calls belongs to: its id, directories, working-directory context and shared state.
 * Implemented by `SessionLive` (src/layers/session).
 */
import { Context, Effect, FiberRef, Option, type Ref, type SubscriptionRef } from "effect"
import type * as Tool from "../domain/Tool.js"

/** The port. */
export class Session extends Context.Tag("armature/Session")<
  Session,
  {
    readonly id: string
    /** The project root: where `.claude/settings.json` is looked for and `/p` rules are anchored. */
    readonly projectDir: string
    /** Where Armature keeps its files (persisted results, transcripts, background output). */
    readonly stateDir: string
    /**
     * The working directory and anything else context modifiers change (docs/executor.md); a SubscriptionRef, so
     * that whoever must follow the working directory (MCP roots) sees each change as it happens.
     */
    readonly context: SubscriptionRef.SubscriptionRef<Tool.SessionContext>
    readonly state: Tool.SessionState
    readonly transcriptPath: string
  }
>() {}

/**
 * The working-directory context the calls made in this fiber (and the fibers it forks) use instead of the session's:
 * a sub-agent that runs in a git worktree of its own (docs/agents.md). None: the session's.
 */
export const contextOverride: FiberRef.FiberRef<Option.Option<Ref.Ref<Tool.SessionContext>>> = FiberRef.unsafeMake(
  Option.none()
)

/** The context calls use under a fiber's `contextOverride`: the override, else the session's. */
export const contextUnder = (
  session: Session["Type"],
  override: Option.Option<Ref.Ref<Tool.SessionContext>>
): Ref.Ref<Tool.SessionContext> => (Option.isSome(override) ? override.value : session.context)

/** The context the calls of this fiber use: the override, else the session's. */
export const currentContext = (session: Session["Type"]): Effect.Effect<Ref.Ref<Tool.SessionContext>> =>
  Effect.map(FiberRef.get(contextOverride), (override) => contextUnder(session, override))
