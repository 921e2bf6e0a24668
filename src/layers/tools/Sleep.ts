/**
 * Sleep: waits for a given time, reporting progress every second (docs/tools.md).
 */
import { Duration, Effect, Schema } from "effect"
import * as Tool from "../../domain/Tool.js"
import * as ToolRegistryLive from "../registry/ToolRegistryLive.js"

/** The most a single Sleep may wait. */
const maxDurationMs = 600_000

const Input = Schema.Struct({
  duration_ms: Schema.Number.pipe(Schema.int(), Schema.between(0, maxDurationMs)).annotations({
    description: `How long to wait, in milliseconds (0 to ${maxDurationMs}).`
  })
})

const description = `Waits for a fixed time without doing anything else, then reports how long it slept.

Use it when you must give something outside your control time to happen: a server that is starting, a build
another process runs, a rate limit that resets. Do not use it to "give the user time" or between steps that do
not depend on the clock; never poll in a tight loop with short sleeps — prefer one longer wait, or a command that
blocks until the condition holds.

Parameters:
- duration_ms: milliseconds to wait, from 0 to ${maxDurationMs} (10 minutes).

It reports progress every second and may run beside other read-only calls. The user can interrupt it at any time.

Result: "Slept for N ms".`

/** Makes the Sleep tool. */
export const make = Tool.make({
  name: "Sleep",
  description,
  input: Input,
  output: Schema.String,
  progress: Schema.Struct({ elapsed_ms: Schema.Number, remaining_ms: Schema.Number }),
  category: "workflow",
  searchHint: "wait pause delay timer",
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  interruptBehavior: "cancel",
  checkPermissions: () => Effect.succeed({ behavior: "allow", reason: "Sleep has no side effects" }),
  summarize: (input) => `${input.duration_ms} ms`,
  call: (input, ctx) =>
    Effect.gen(function* () {
      let elapsed = 0
      while (elapsed < input.duration_ms) {
        const step = Math.min(1000, input.duration_ms - elapsed)
        yield* Effect.sleep(Duration.millis(step))
        elapsed += step
        if (elapsed < input.duration_ms) {
          yield* ctx.progress({ elapsed_ms: elapsed, remaining_ms: input.duration_ms - elapsed })
        }
      }
      return `Slept for ${input.duration_ms} ms`
    })
})

/** Registers Sleep. */
export const layer = ToolRegistryLive.register(make)
