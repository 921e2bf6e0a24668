/**
 * The executor's admission rule as a pure function: given the queued calls in request order, the calls already
 * running, the cap and the scheduling mode, which queued calls start now. No effects, no clock, no mutation of
 * its arguments — the executor asks it after every arrival and completion, and the property tests call it
 * directly. See docs/executor.md for the rule in prose.
 */
import { type Claim, conflicts } from "./Resources.js"

/**
 * How calls are admitted: `partition` runs concurrency-safe calls together and an unsafe call alone; `resources`
 * runs calls together unless their declared resources conflict.
 */
export type Scheduling = "partition" | "resources"

/** A queued call as the planner sees it: waiting for its dependencies, or ready with what it claims. */
export type Candidate = { readonly ready: false } | ({ readonly ready: true } & Claim)

/** Everything the planner looks at. */
export interface Situation<C extends Candidate> {
  /** The calls not yet started, in request order. The scan may stop early; it never reads past its stop. */
  readonly queued: Iterable<C>
  /** The calls running now (started and not completed). */
  readonly running: ReadonlyArray<Claim>
  /** The most calls that may run at once (at least 1). */
  readonly cap: number
  readonly scheduling: Scheduling
}

/**
 * The calls to start now, in request order.
 *
 * Partition: scanning in request order, a ready call starts when fewer than `cap` run and either nothing runs or
 * it and everything running are safe. The scan stops at the cap, once an unsafe call runs, or at the first ready
 * unsafe call that cannot start — nothing overtakes it. A call waiting for dependencies is passed over.
 *
 * Resources: a ready call starts when fewer than `cap` run and it conflicts with no running call, no call
 * started in this scan, and no earlier ready call left queued (so a later call never overtakes one it
 * conflicts with). The scan stops at the cap.
 */
export const plan = <C extends Candidate>(situation: Situation<C>): ReadonlyArray<C & Claim> =>
  situation.scheduling === "partition" ? planPartition(situation) : planResources(situation)

const planPartition = <C extends Candidate>({ cap, queued, running }: Situation<C>): ReadonlyArray<C & Claim> => {
  const started: Array<C & Claim> = []
  let count = running.length
  let exclusive = running.some((claim) => !claim.safe)
  for (const candidate of queued) {
    if (count >= cap || exclusive) break
    if (!candidate.ready) continue
    const ready = candidate as C & Claim
    if (count > 0 && !ready.safe) break
    started.push(ready)
    count++
    if (!ready.safe) exclusive = true
  }
  return started
}

const planResources = <C extends Candidate>({ cap, queued, running }: Situation<C>): ReadonlyArray<C & Claim> => {
  const started: Array<C & Claim> = []
  const blocked: Array<Claim> = []
  let count = running.length
  for (const candidate of queued) {
    if (count >= cap) break
    if (!candidate.ready) continue
    const ready = candidate as C & Claim
    const clash = (other: Claim) => conflicts(ready, other)
    if (running.some(clash) || started.some(clash) || blocked.some(clash)) {
      blocked.push(ready)
    } else {
      started.push(ready)
      count++
    }
  }
  return started
}
