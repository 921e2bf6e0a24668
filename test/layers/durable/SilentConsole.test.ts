import { describe, expect, it } from "@effect/vitest"
import { Console, Effect, Exit } from "effect"
import * as SilentConsole from "../../../src/layers/durable/SilentConsole.js"

describe("SilentConsole", () => {
  it.effect("log lines and console calls under the silent console succeed and print nothing", () =>
    Effect.gen(function* () {
      const printed: Array<string> = []
      const original = globalThis.console.log
      globalThis.console.log = (...args: ReadonlyArray<unknown>) => printed.push(args.join(" "))
      const exit = yield* Effect.gen(function* () {
        yield* Effect.logWarning("a warning")
        yield* Effect.logError("an error")
        yield* Console.log("a line")
        yield* Console.error("an error line")
        return "done"
      }).pipe(Effect.withConsole(SilentConsole.silent), Effect.exit)
      globalThis.console.log = original
      expect(exit).toEqual(Exit.succeed("done"))
      expect(printed).toEqual([])
    })
  )
})
