/**
 * The entry point of the `armature` binary.
 */
import { ValidationError } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Either } from "effect"
import * as Argv from "./Argv.js"
import { run, table } from "./cli.js"
import { stderrLogger } from "./Runtime.js"

const usageHint = (command: string) => `Run \`${command} --help\` for usage.`

const program = Either.match(Argv.prepare(process.argv.slice(2), table), {
  // a flag problem found before @effect/cli parses: name the flag, point at the command's help, exit 2
  onLeft: (error) =>
    Effect.zipRight(
      Console.error(`${error.command}: ${error.message}\n${usageHint(error.command)}`),
      Effect.sync(() => {
        process.exitCode = 2
      })
    ),
  onRight: (tokens) =>
    run([...process.argv.slice(0, 2), ...tokens]).pipe(
      Effect.catchIf(ValidationError.isValidationError, (error) =>
        Effect.gen(function* () {
          // @effect/cli has printed the problem; point at the help and exit 2.
          if (ValidationError.isHelpRequested(error)) return
          yield* Console.error(`\n${usageHint("armature")}`)
          process.exitCode = 2
        })
      )
    )
})

program.pipe(
  Effect.provide(NodeContext.layer),
  Effect.provide(stderrLogger),
  NodeRuntime.runMain({ disableErrorReporting: false, disablePrettyLogger: true })
)
