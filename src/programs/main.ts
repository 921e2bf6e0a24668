/**
 * The entry point of the `armature` binary.
 */
import * as V8 from "node:v8"
import { ValidationError } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Console, Effect, Either } from "effect"
import * as ProcessGroup from "../layers/process/ProcessGroup.js"
import * as Argv from "./Argv.js"
import * as ClosedPipe from "./ClosedPipe.js"
import { run, table, version } from "./cli.js"
import * as ExitCode from "./ExitCode.js"
import * as HelpText from "./HelpText.js"
import { stderrLogger } from "./Runtime.js"
import * as UsageErrors from "./UsageErrors.js"

// The bash grammar is WebAssembly whose hot lexer V8 would recompile with TurboFan in the background, and a short
// command (`permissions check`, `exec`) then waits about a second at exit for that compilation. Liftoff's
// baseline code parses a command line in microseconds, so the CLI keeps WebAssembly on Liftoff alone. (Set before
// any module is compiled: the grammar loads when the first shell analyzer is built, long after this line.)
V8.setFlagsFromString("--liftoff-only")

// A reader that goes away (`| head -1`) ends the command quietly.
ClosedPipe.install()

const fail = (message: string) =>
  Effect.zipRight(
    Console.error(message),
    Effect.sync(() => {
      process.exitCode = ExitCode.invalidInput
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

/**
 * Runs the command line. What @effect/cli writes to stderr before the command starts is its own description of a
 * command line it rejects: that is held back and replaced by one line naming the command (UsageErrors).
 */
const runCommandLine = (tokens: ReadonlyArray<string>) =>
  Effect.suspend(() => {
    let started = false
    const held: Array<ReadonlyArray<unknown>> = []
    const commandPath = ["armature", ...Argv.commandPath(tokens, table)]
    const parsed = run(Effect.sync(() => (started = true)))([...process.argv.slice(0, 2), ...tokens])
    return Effect.consoleWith((base) =>
      parsed.pipe(
        Effect.withConsole({
          ...base,
          error: (...args) =>
            started
              ? base.error(...args)
              : Effect.sync(() => {
                  held.push(args)
                })
        }),
        Effect.catchIf(ValidationError.isValidationError, (error) =>
          Effect.gen(function* () {
            if (ValidationError.isHelpRequested(error)) return
            held.length = 0
            yield* fail(UsageErrors.line(commandPath, error.error))
          })
        ),
        Effect.zipLeft(Effect.forEach(held, (args) => base.error(...args), { discard: true }))
      )
    )
  })

const program = Either.match(Argv.prepare(process.argv.slice(2), table), {
  // a flag problem found before @effect/cli parses: name the command and the flag, exit 2
  onLeft: (error) => fail(`${error.command}: ${error.message}`),
  onRight: (tokens) =>
    tokens.length === 1 && tokens[0] === "--version"
      ? Console.log(version)
      : tokens.includes("--wizard") && process.stdin.isTTY !== true
        ? fail("armature: --wizard asks its questions on a terminal, and stdin is not one")
        : runCommandLine(tokens).pipe(HelpText.withHygiene(helpPath(tokens)))
})

program.pipe(
  // any failure left is told as one line on stderr (no stack trace), with exit status 2 or 1 (ExitCode)
  ExitCode.reportFailures,
  ClosedPipe.untilClosed,
  Effect.provide(NodeContext.layer),
  Effect.provide(ProcessGroup.layer),
  Effect.provide(stderrLogger),
  NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true })
)
