/**
 * The entry point of the `armature` binary.
 */
import * as V8 from "node:v8"
import { ValidationError } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Either } from "effect"
import * as Argv from "./Argv.js"
import { run, table } from "./cli.js"
import * as HelpText from "./HelpText.js"
import { stderrLogger } from "./Runtime.js"

// The bash grammar is WebAssembly whose hot lexer V8 would recompile with TurboFan in the background, and a short
// command (`permissions check`, `exec`) then waits about a second at exit for that compilation. Liftoff's
// baseline code parses a command line in microseconds, so the CLI keeps WebAssembly on Liftoff alone. (Set before
// any module is compiled: the grammar loads when the first shell analyzer is built, long after this line.)
V8.setFlagsFromString("--liftoff-only")

const usageHint = (command: string) => `Run \`${command} --help\` for usage.`

const fail = (message: string) =>
  Effect.zipRight(
    Console.error(message),
    Effect.sync(() => {
      process.exitCode = 2
    })
  )

/** The command path whose help @effect/cli will print, if it will print one. */
const helpPath = (tokens: ReadonlyArray<string>): ReadonlyArray<string> | undefined => {
  const path = ["armature", ...tokens.filter((t) => !t.startsWith("-")).slice(0, 2)]
  const known = (p: ReadonlyArray<string>) => table.flags.has(p.slice(1).join(" "))
  const trimmed = known(path) || path.length < 3 ? path : path.slice(0, 2)
  if (tokens.includes("--help") || tokens.includes("-h")) return known(trimmed) ? trimmed : path.slice(0, 2)
  // a command that only groups others, alone, prints its help
  const last = trimmed.slice(1).join(" ")
  return tokens.length === 0 || (tokens.length === 1 && table.parents.has(last)) ? trimmed : undefined
}

const program = Either.match(Argv.prepare(process.argv.slice(2), table), {
  // a flag problem found before @effect/cli parses: name the flag, point at the command's help, exit 2
  onLeft: (error) => fail(`${error.command}: ${error.message}\n${usageHint(error.command)}`),
  onRight: (tokens) =>
    tokens.includes("--wizard") && process.stdin.isTTY !== true
      ? fail("armature: --wizard asks its questions on a terminal, and stdin is not one")
      : run([...process.argv.slice(0, 2), ...tokens]).pipe(
          Effect.catchIf(ValidationError.isValidationError, (error) =>
            Effect.gen(function* () {
              // @effect/cli has printed the problem; point at the help and exit 2.
              if (ValidationError.isHelpRequested(error)) return
              yield* Console.error(`\n${usageHint("armature")}`)
              process.exitCode = 2
            })
          ),
          HelpText.withHygiene(helpPath(tokens))
        )
})

program.pipe(
  Effect.provide(NodeContext.layer),
  Effect.provide(stderrLogger),
  NodeRuntime.runMain({ disableErrorReporting: false, disablePrettyLogger: true })
)
