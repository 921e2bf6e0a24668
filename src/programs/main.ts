/**
 * The entry point of the `armature` binary.
 */
import { HelpDoc, ValidationError } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Console, Effect } from "effect"
import { optionsFirst } from "./Argv.js"
import { run } from "./cli.js"
import { stderrLogger } from "./Runtime.js"

run(optionsFirst(process.argv)).pipe(
  Effect.catchIf(ValidationError.isValidationError, (error) =>
    Effect.gen(function* () {
      // @effect/cli has printed the problem; point at the help and exit 2.
      if (ValidationError.isHelpRequested(error)) return
      yield* Console.error(
        `\n${HelpDoc.toAnsiText(HelpDoc.p("Run `armature --help` (or `armature COMMAND --help`) for usage.")).trimEnd()}`
      )
      process.exitCode = 2
    })
  ),
  Effect.provide(NodeContext.layer),
  Effect.provide(stderrLogger),
  NodeRuntime.runMain({ disableErrorReporting: false, disablePrettyLogger: true })
)
