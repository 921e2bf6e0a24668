/**
 * A journal that a call's whole pipeline runs through, so that a durable session can record each call's outcome
 * (keyed by its tool_use_id) and give the stored outcome back when the session is replayed after a crash, instead
 * of running the call again. The executor asks for it at each call; without one, calls simply run.
 * Implemented by `DurableSession` (src/layers/durable).
 */
import { Context, type Effect } from "effect"
import type { Outcome } from "../domain/Outcome.js"

/** What the journal knows of a call before it runs. */
export interface JournalCall {
  readonly toolUseId: string
  readonly toolName: string
  /** Whether the call only reads (a read-only call cut short by a crash may simply be run again). */
  readonly readOnly: boolean
}

/** The port. */
export class CallJournal extends Context.Tag("armature/CallJournal")<
  CallJournal,
  {
    /** Runs `run` at most once per recorded call and returns its outcome, or the outcome stored for this call. */
    readonly record: (call: JournalCall, run: Effect.Effect<Outcome>) => Effect.Effect<Outcome>
  }
>() {}
